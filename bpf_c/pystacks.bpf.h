/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every tool does with a walked stack, shared by all of them: the
 * maps user space reads (distinct Python stacks by hash, and what each
 * (thread, stacks) combination counts: samples or microseconds), and the
 * look-ups and bookkeeping around pyb_walk.
 *
 * Compile-time parameters (-D): PYSTACKS_SIZE, COUNTS_SIZE.
 */

#include "discovery.bpf.h"
#include "pywalk.bpf.h"
#include "native_unwind.bpf.h"
BPF_F_TABLE("hash", u64, struct pyb_stack, pystacks, PYSTACKS_SIZE, BPF_F_NO_PREALLOC);
BPF_HASH(counts, struct pyb_count_key, u64, COUNTS_SIZE);
/* Code objects user space has named (it fills this). LRU: a code object
 * pushed out only costs a hint too many. */
BPF_TABLE("lru_hash", struct pyb_named_key, u8, named_codes, 65536);

/* The registered process pid, with its layout and the CPU's scratch
 * space; NULL (nothing to do) for any other process. */
static __always_inline struct pyb_proc *pyb_target(u32 pid, struct pyb_layout **L,
						   struct pyb_scratch **s)
{
	struct pyb_proc *proc = procs.lookup(&pid);
	u32 zero = 0;

	if (!proc)
		return NULL;
	u32 layout = proc->layout;

	*L = layouts.lookup(&layout);
	*s = pyb_scratch_map.lookup(&zero);
	return *L && *s ? proc : NULL;
}

/* Whether user space has named every Python frame of the stack in s. */
static __always_inline bool pyb_all_named(struct pyb_scratch *s, u32 pid)
{
	struct pyb_named_key k = { .pid = pid };
	u32 len = s->stack.len;

	/* never true; but without it the verifier runs out of steps */
	if (len > PYB_MAX_FRAMES)
		return false;
	for (u32 i = 0; i < PYB_MAX_FRAMES; i++) {
		if (i >= len)
			break;
		if (s->stack.frames[i].flags & (PYB_FRAME_SHIM | PYB_FRAME_HIDDEN))
			continue;
		k.code = s->stack.frames[i].code;
		k.ident = s->stack.frames[i].ident;
		if (!named_codes.lookup(&k))
			return false;
	}
	return true;
}

/* Walks the stack from frame (a thread's innermost) into s, stores it in
 * pystacks if new (and, if it has frames to name, says so on
 * stack_events), counts what went wrong, and returns its key. ctx is the
 * program's context. */
static __always_inline u64 pyb_walk_and_store(void *ctx, struct pyb_proc *proc,
					      struct pyb_layout *L, u64 frame,
					      struct pyb_scratch *s, u32 pid)
{
	u64 key;

	s->stack.len = 0;
	s->stack.flags = 0;
	key = pyb_walk(L, frame, s, pid);
	u64 t = PYB_NOW();

	if (s->stack.flags & PYB_STACK_TRUNCATED)
		pyb_stat(PYB_STAT_TRUNCATED);
	if (s->stack.flags & PYB_STACK_READ_ERROR)
		pyb_stat(PYB_STAT_READ_ERRORS);
	if (!pystacks.lookup(&key)) {
		PYB_PHASE(PYB_PHASE_NEW_STACKS, 1);
		if (pystacks.update(&key, &s->stack) < 0) {
			pyb_stat(PYB_STAT_STACK_MAP_FULL);
		} else if (!pyb_all_named(s, pid)) {
			/* wakes user space: hints only for stacks with code
			 * objects it has not named (their process may be
			 * gone by the end); the rest wait for the end */
			struct pyb_proc_event ev = {
				.pid = pid, .kind = PYB_EVENT_NEW_STACK, .key = key
			};

			stack_events.perf_submit(ctx, &ev, sizeof(ev));
		}
	}
	PYB_PHASE(PYB_PHASE_STORE_NS, PYB_NOW() - t);
	return key;
}

/* The Python stack of the current thread tid, or 0 if it has no thread
 * state (counted). */
static __always_inline u64 pyb_current_stack(void *ctx, struct pyb_proc *proc,
					     struct pyb_layout *L, struct pyb_scratch *s, u32 pid,
					     u32 tid)
{
	u64 t = PYB_NOW(), frame, ts = pyb_find_tstate(proc, L, tid, s, &frame), key;

	PYB_PHASE(PYB_PHASE_TSTATE_NS, PYB_NOW() - t);
	if (ts) {
		t = PYB_NOW();
		key = pyb_walk_and_store(ctx, proc, L, frame, s, pid);
		PYB_PHASE(PYB_PHASE_WALK_NS, PYB_NOW() - t);
		PYB_PHASE(PYB_PHASE_PY_FRAMES, s->stack.len);
		return key;
	}
	s->stack.len = 0; /* no Python stack: the native walk goes on to the end */
	pyb_stat(PYB_STAT_NO_TSTATE);
	return 0;
}

static __always_inline void pyb_count_add(struct pyb_count_key *key, u64 v)
{
	u64 *total = counts.lookup(key);

	if (total)
		__sync_fetch_and_add(total, v);
	else if (counts.update(key, &v) < 0)
		pyb_stat(PYB_STAT_COUNT_MAP_FULL);
}
