/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --async (compiled with -DPYB_ASYNC): which asyncio task a counted stack
 * ran in, from what pyb_walk kept (asyncio_walk.bpf.h).
 *
 * A task's own coroutine is the outermost frame of a run of generator-owned
 * frames (the coroutines awaiting each other) that is called by a frame no
 * generator owns (Task.__step's C code through an entry shim, or
 * Handle._run). A sync generator driven by a plain function inside the
 * task makes an inner run: the outermost run wins.
 *
 * The frame alone does not say which task runs it: a task that ends frees
 * its coroutine, and the next task of the same coroutine function (a
 * server's next request) is often made at the same address. So the task
 * object running it is found too (the thread state's running task from
 * 3.14, before that the task asyncio's dict of running tasks holds for
 * the loop), checked to own that coroutine, and known by its address and
 * name (PYB_TASK_IDENT). Frame, code and identity become the id user
 * space gave the task, through task_ids; a triple not seen before is
 * announced on stack_events once, so that user space names the task while
 * it lives, and until then its samples carry the identity itself. When no
 * task can be found (user space has not said where yet, a Task class
 * written in Python before 3.14), the identity is 0 and the samples are
 * counted as of an unknown task, never as another task's.
 *
 * Cost per sample in a task: one pass over the recorded frames, 4 to 8
 * user-memory reads (a few more with several event loops) and one hash
 * look-up.
 */
#ifndef PYB_ASYNC_BPF_H
#define PYB_ASYNC_BPF_H

#ifdef PYB_ASYNC
BPF_TABLE("lru_hash", struct pyb_task_key, u64, task_ids, 65536);
BPF_HASH(task_src, u32, struct pyb_task_src, 4096);

/* entries of the running-tasks dict looked at (one per event loop with a
 * running task, plus the deleted ones since the dict last shrank) */
#define PYB_TASK_DICT_SCAN 16

/* The byte at offset off of a header read as words (off < 64). */
#define PYB_HDR_BYTE(hdr, off) (((hdr)[((u32)(off) >> 3) & 7] >> (((off) & 7) * 8)) & 0xff)

/*
 * The task object the thread runs, if it runs coroutine coro: from the
 * thread state (3.14+) or from the dict {loop: task} (3.11-3.13), the one
 * whose coroutine is coro. 0 if none is.
 */
static __always_inline u64 pyb_running_task(struct pyb_task_src *src, struct pyb_scratch *s,
					    u64 coro)
{
	u64 *hdr = s->frame, keys, entries, n, lib; /* the walk is done with it */

	if (src->tstate_running_task >= 0) {
		u64 t = pyb_read_u64(s->found_ts + src->tstate_running_task);

		return t && pyb_read_u64(t + src->task_coro) == coro ? t : 0;
	}
	keys = pyb_read_u64(src->current_tasks + src->dict_keys);
	if (!keys || src->keys_nentries < 0 || src->keys_nentries > 56)
		return 0;
	if (bpf_probe_read_user(hdr, 64, (void *)keys))
		return 0;
	lib = PYB_HDR_BYTE(hdr, src->keys_log2_index_bytes);
	n = hdr[((u32)src->keys_nentries >> 3) & 7];
	/* general keys (a loop is no str): entries of hash, key, value */
	if (PYB_HDR_BYTE(hdr, src->keys_kind) != 0 || lib > 20)
		return 0;
	entries = keys + src->keys_indices + (1ULL << lib);
	for (u32 i = 0; i < PYB_TASK_DICT_SCAN; i++) {
		if (i >= n)
			break;
		u64 t = pyb_read_u64(entries + 24 * i + 16);

		if (t && pyb_read_u64(t + src->task_coro) == coro)
			return t;
	}
	return 0;
}

/* PYB_TASK_STR_IDENT of the str at name; 0 if it is not ASCII. */
static __always_inline u64 pyb_task_str_ident(struct pyb_layout *L, struct pyb_scratch *s,
					      u64 name)
{
	u64 *meta = s->frame + 8, *w = s->lines, len; /* the walk is done with both */

	meta[0] = meta[2] = 0;
	w[0] = w[1] = w[2] = 0;
	bpf_probe_read_user(meta, 24, (void *)(name + L->unicode_length));
	len = meta[0];
	if (!((meta[2] >> (L->str_ascii_bit & 63)) & 1) || len > (1ULL << 30))
		return 0;
	bpf_probe_read_user(w, 16, (void *)(name + L->unicode_ascii_size));
	if (len >= 8)
		bpf_probe_read_user(w + 2, 8, (void *)(name + L->unicode_ascii_size + len - 8));
	return PYB_TASK_STR_IDENT(name, len, w[0], w[1], w[2]);
}

/* PYB_TASK_IDENT of task; 0 when its name is neither an ASCII str nor an int. */
static __always_inline u64 pyb_task_ident(struct pyb_layout *L, struct pyb_task_src *src,
					  struct pyb_scratch *s, u64 task)
{
	u64 name = pyb_read_u64(task + src->task_name), type, *w = s->task_event.name_words;

	s->task_name_obj = name;
	s->task_event.name_kind = PYB_TASK_NAME_NONE;
	if (!name)
		return 0;
	type = pyb_read_u64(name + 8);
	if (type == src->str_type) {
		u64 id = pyb_task_str_ident(L, s, name);

		s->task_event.name_kind = PYB_TASK_NAME_ASCII;
		return id ? PYB_TASK_IDENT(task, id) : 0;
	}
	if (type != src->long_type || bpf_probe_read_user(w, 16, (void *)(name + 16)))
		return 0;
	s->task_event.name_kind = PYB_TASK_NAME_INT;
	return PYB_TASK_IDENT(task, PYB_STR_IDENT(name, w[0], w[1]));
}

/* Copies a str name's characters into the event, if it is ASCII. */
static __always_inline void pyb_task_name(struct pyb_layout *L, struct pyb_scratch *s)
{
	struct pyb_task_event *ev = &s->task_event;
	u64 name = s->task_name_obj, meta[3] = {}, n;

	if (ev->name_kind != PYB_TASK_NAME_ASCII)
		return;
	ev->name_kind = PYB_TASK_NAME_NONE;
	if (bpf_probe_read_user(meta, sizeof(meta), (void *)(name + L->unicode_length)) ||
	    !((meta[2] >> (L->str_ascii_bit & 63)) & 1) || meta[0] > (1ULL << 30))
		return;
	ev->name_len = (u32)meta[0];
	n = meta[0] < PYB_TASK_NAME_COPY - 1 ? meta[0] : PYB_TASK_NAME_COPY - 1;
	PYB_OPAQUE(n);
	n &= PYB_TASK_NAME_COPY - 1; /* the bound the verifier sees */
	if (n && bpf_probe_read_user(ev->name, n, (void *)(name + L->unicode_ascii_size)))
		return;
	ev->name_kind = PYB_TASK_NAME_ASCII;
}

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
					  struct pyb_layout *L, struct pyb_scratch *s, u32 pid)
{
	struct pyb_task_key *k = &s->task_key;
	struct pyb_task_src *src = task_src.lookup(&pid);
	u64 depth, root, zero = 0, *id;

	__builtin_memset(k, 0, sizeof(*k));
	k->pid = pid;
	pyb_task_depth(s);
	depth = *(volatile u32 *)&s->task_depth;
	root = depth - 1; /* 0: none, and then root is out of range */
	PYB_OPAQUE(root);
	if (root >= PYB_MAX_FRAMES)
		return;
	k->frame = s->frame_addr[root] & ~1ULL;
	k->code = s->stack.frames[root].code; /* the task's own coroutine */
	key->task_depth = (u32)depth;
	s->task_event.name_kind = PYB_TASK_NAME_NONE;
	if (src) {
		u64 task = pyb_running_task(src, s, k->frame - src->gen_iframe);

		k->ident = task ? pyb_task_ident(L, src, s, task) : 0;
	}
	key->task = k->ident ? PYB_TASK_FRAME_BIT | k->ident : PYB_TASK_UNKNOWN;
	id = task_ids.lookup(k);
	if (id) {
		if (*id)
			key->task = *id;
		return;
	}
	/* identity 0: announced only until user space says where tasks are */
	if ((k->ident || !src) && task_ids.insert(k, &zero) == 0) {
		struct pyb_task_event *ev = &s->task_event;

		ev->ev.pid = pid;
		ev->ev.kind = PYB_EVENT_NEW_TASK;
		ev->ev.key = k->frame;
		ev->ev.arg = k->code;
		ev->ident = k->ident;
		pyb_task_name(L, s);
		stack_events.perf_submit(ctx, ev, sizeof(*ev));
	}
}
#define PYB_ASYNC_KEY(ctx, key, L, s, pid) pyb_async_key(ctx, key, L, s, pid)
#else
#define PYB_ASYNC_KEY(ctx, key, L, s, pid)
#endif

#endif
