/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --async (compiled with -DPYB_ASYNC): which asyncio task a counted stack
 * ran in, from what pyb_walk kept (asyncio_walk.bpf.h).
 *
 * A task's own coroutine is the outermost frame of a run of generator-owned
 * frames (the coroutines awaiting each other) that is called by a frame no
 * generator owns (Task.__step's C code through an entry shim, or
 * Handle._run). A sync generator driven by a plain function inside the
 * task makes an inner run: the outermost run wins. The frame becomes the id
 * user space gave its task, through task_ids; a frame not seen before is
 * announced on stack_events once, so that user space names the task while
 * it lives, and until then its samples carry the frame itself.
 *
 * Cost per sample: one pass over the recorded frames, and one hash
 * look-up when the thread runs a task.
 */
#ifndef PYB_ASYNC_BPF_H
#define PYB_ASYNC_BPF_H

#ifdef PYB_ASYNC
BPF_TABLE("lru_hash", struct pyb_task_key, u64, task_ids, 65536);

/*
 * How many frames, innermost first, belong to the task (0: none), into
 * s->task_depth. Stored, not returned: read back from memory it is a value
 * the verifier knows nothing of, so what follows is checked once, not once
 * for each frame count the loop can end at.
 */
static __always_inline void pyb_task_depth(struct pyb_scratch *s)
{
	u32 len = s->stack.len, depth = 0, prev_gen = 0;

	*(volatile u32 *)&s->task_depth = 0;
	if (len > PYB_MAX_FRAMES || (s->stack.flags & (PYB_STACK_TRUNCATED | PYB_STACK_READ_ERROR)))
		return;
	for (u32 i = 0; i < PYB_MAX_FRAMES; i++) {
		u32 at = i;

		PYB_OPAQUE(at); /* a bound the compiler cannot fold away */
		if (i >= len || at >= PYB_MAX_FRAMES)
			break;
		u32 gen = s->frame_addr[at] & 1; /* a generator's frame */
		u32 take = 0 - (prev_gen & (gen ^ 1)); /* frame i-1 starts a run */

		depth = (depth & ~take) | (i & take);
		prev_gen = gen;
	}
	/* the chain ends in a coroutine: that run starts at its last frame */
	*(volatile u32 *)&s->task_depth = prev_gen ? len : depth;
}

static __always_inline void pyb_async_key(void *ctx, struct pyb_count_key *key,
					  struct pyb_scratch *s, u32 pid)
{
	struct pyb_task_key k = { .pid = pid };
	u64 depth, root, zero = 0, *id;

	pyb_task_depth(s);
	depth = *(volatile u32 *)&s->task_depth;
	root = depth - 1; /* 0: none, and then root is out of range */
	PYB_OPAQUE(root);
	if (root >= PYB_MAX_FRAMES)
		return;
	k.frame = s->frame_addr[root] & ~1ULL;
	k.code = s->stack.frames[root].code; /* the task's own coroutine */
	key->task_depth = (u32)depth;
	key->task = PYB_TASK_FRAME_BIT | k.frame;
	id = task_ids.lookup(&k);
	if (id) {
		if (*id)
			key->task = *id;
		return;
	}
	if (task_ids.insert(&k, &zero) == 0) {
		struct pyb_proc_event ev = {
			.pid = pid, .kind = PYB_EVENT_NEW_TASK, .key = k.frame, .arg = k.code
		};

		stack_events.perf_submit(ctx, &ev, sizeof(ev));
	}
}
#define PYB_ASYNC_KEY(ctx, key, s, pid) pyb_async_key(ctx, key, s, pid)
#else
#define PYB_ASYNC_KEY(ctx, key, s, pid)
#endif

#endif
