/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pyoffcpu: time Python threads spend off CPU, by Python + kernel + native
 * stack. At sched:sched_switch the outgoing task is the current one: if it
 * belongs to a registered Python process, its stacks are taken then (they
 * cannot change while it is off CPU) with the time. sched:sched_waking
 * marks when a blocked thread was woken: the blocked interval ends there,
 * and the time from the wakeup until it runs again is runnable time (it
 * waited for a CPU), charged to the same stacks as PYB_KIND_RUNNABLE, like
 * the time of a preempted thread. Only stable tracepoint fields are read,
 * never kernel structs.
 *
 * The kernel does not report every switch (close_unseen): a thread that
 * switches out with its last interval still open ends that interval at
 * its wake-up, or leaves it uncounted (both counted in stats).
 *
 * Intervals still open when the run ends stay in `start`: user space
 * charges them up to the end. With may_goto (PYB_MAY_GOTO) a thread's
 * entry stays when its interval closes, marked by ts 0, and its next
 * interval is written over it. For threads already off CPU when the run
 * begins (no switch to see), user space puts an entry there itself,
 * `seeded`, with the Python stack it read; a seeded interval's duration
 * is not a whole one: it stays out of the histograms.
 *
 * Compile-time parameters (-D): PYSTACKS_SIZE, COUNTS_SIZE (pystacks.bpf.h),
 * STACK_STORAGE_SIZE, USER_STACKS, KERNEL_STACKS, MIN_US, MAX_US,
 * THREAD_FILTER (0 or a host tid), PYB_ASYNC (--async: a thread that
 * blocks inside an asyncio task blocks its event loop; the time is charged
 * to the task, see asyncio.bpf.h), WAIT_REASONS (0 or 1), GIL_SIZE
 * (wait_reasons.bpf.h).
 * PYB_WALL: also the sampling program (sample.bpf.h), for pyprofile --wall.
 */
#include <uapi/linux/ptrace.h>

#include "pystacks.bpf.h"
#include "asyncio.bpf.h"
#include "wait_reasons.bpf.h"

BPF_HASH(hists, struct pyb_hist_key, u64, COUNTS_SIZE);
/* LRU: a thread that exits while off CPU leaves an entry behind */
BPF_TABLE("lru_hash", u32, struct pyb_offcpu_start, start, 65536);
BPF_PERCPU_ARRAY(start_scratch, struct pyb_offcpu_start, 1);
BPF_STACK_TRACE(stack_traces, STACK_STORAGE_SIZE);
/* When the run ended (user space sets it): later events are ignored, so
 * what is open then stays open for user space to charge up to there. */
BPF_ARRAY(run_end, u64, 1);

static __always_inline bool run_over(u64 now)
{
	u32 zero = 0;
	u64 *end = run_end.lookup(&zero);

	return end && *end && now > *end;
}

/* Charges interval st: blocked (or runnable, for a preempted thread)
 * from its switch out until end, then runnable until run. st's key is
 * counted where it is (the BPF stack is full): the interval is over, and
 * its key is left as the runnable part's. */
static __always_inline void charge(struct pyb_offcpu_start *st, u64 end, u64 run)
{
	struct pyb_count_key *key = &st->key;
	u64 us = (end - st->ts) / 1000;

	if (us < MIN_US || us > MAX_US) {
		pyb_stat(PYB_STAT_FILTERED);
		return;
	}
	/* a descriptor of a kind not known when the wait began (the first
	 * wait on it, or since it was closed or replaced) is known by now,
	 * mostly; else user space names it at the end, by the last kind the
	 * number had */
	if (WAIT_REASONS)
		key->detail = pyb_wait_settled(key->pid, key->detail);
	pyb_count_add(key, us);
	if (key->kind == PYB_KIND_BLOCKED && !st->seeded) {
		struct pyb_hist_key hk = { .pystack = key->pystack, .pid = key->pid };

		hk.slot = bpf_log2l(us);
		hists.increment(hk);
	}
	if (run != end) {
		key->kind = PYB_KIND_RUNNABLE;
		key->detail = 0;
		pyb_count_add(key, (run - end) / 1000);
	}
}

static __always_inline void switched_in(u32 tid, u64 now)
{
	u64 t = PYB_NOW();
	struct pyb_offcpu_start *st = start.lookup(&tid);

	if (!st || !st->ts)
		return;
	/* a blocked thread stopped waiting when it was woken */
	charge(st, st->wake_ts && st->wake_ts < now ? st->wake_ts : now, now);
#ifdef PYB_MAY_GOTO
	st->ts = 0; /* closed; kept, for the next interval to be written in place */
#else
	start.delete(&tid);
#endif
	PYB_PHASE(PYB_PHASE_SWITCH_IN_NS, PYB_NOW() - t);
}

/*
 * The kernel does not report every switch: tracepoint programs are
 * skipped while another BPF program runs on the CPU, and some VMs switch
 * from their own agent's threads without the tracepoint. A thread that
 * switches out with its last interval still open ran in between: a
 * blocked one stopped waiting at its wake-up, if that was seen; the time
 * from there until it ran, and an interval without one, cannot be
 * placed (counted).
 */
static __always_inline void close_unseen(struct pyb_offcpu_start *st, u64 now)
{
	if (st->key.kind == PYB_KIND_BLOCKED && st->wake_ts > st->ts && st->wake_ts <= now) {
		charge(st, st->wake_ts, st->wake_ts);
		pyb_stat(PYB_STAT_SWITCH_IN_UNSEEN);
	} else {
		pyb_stat(PYB_STAT_SWITCH_IN_LOST);
	}
}

/* ctx: the tracepoint context (its struct is only declared by
 * TRACEPOINT_PROBE below, so scalar fields come as arguments). True when
 * the thread's native walk has begun (the chain goes on with it). */
static __always_inline bool switched_out(void *ctx, long prev_state, u64 now)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id, zero = 0;
	struct pyb_offcpu_start *st;
	struct pyb_scratch *s;
	struct pyb_layout *L;
	struct pyb_proc *proc;

	if (!tid || (THREAD_FILTER && tid != THREAD_FILTER))
		return false;
	proc = pyb_target(pid, &L, &s);
	st = start_scratch.lookup(&zero);
	if (!proc || !st)
		return false;
#ifndef PYB_MAY_GOTO
	struct pyb_offcpu_start *prev = start.lookup(&tid);

	if (prev)
		close_unseen(prev, now);
#endif
	__builtin_memset(&st->key, 0, sizeof(st->key));
	st->ts = now;
	st->wake_ts = 0;
	st->seeded = 0;
	st->key.pid = pid;
	st->key.tid = tid;
	/* "R" (runnable, preempted or yielding) when no state bit is set */
	st->key.kind = (prev_state & 0xff) ? PYB_KIND_BLOCKED : PYB_KIND_RUNNABLE;
	/* kept in the map value only, so the verifier's states meet again
	 * before the walk */
	if (WAIT_REASONS && st->key.kind == PYB_KIND_BLOCKED)
		st->key.detail = pyb_wait_reason(ctx, pid, prev_state);
	bpf_get_current_comm(&st->key.comm, sizeof(st->key.comm));
	pyb_stat(PYB_STAT_SAMPLES);
	PYB_PHASE(PYB_PHASE_SAMPLES, 1);
	PYB_PHASE(PYB_PHASE_BEFORE_NS, PYB_NOW() - now);
	st->key.pystack = pyb_current_stack(ctx, proc, L, s, pid, tid);
	u64 t = PYB_NOW();

	if (st->key.pystack)
		PYB_ASYNC_KEY(ctx, &st->key, L, s, pid);
	st->key.user_stack = -1; /* the native walk's chain sets it */
	/* an uninterruptible sleep's reason is in its kernel stack */
	st->key.kernel_stack = KERNEL_STACKS || st->key.detail == PYB_WAIT_UNINTERRUPTIBLE
				       ? stack_traces.get_stackid(ctx, 0)
				       : -1;
#ifdef PYB_MAY_GOTO
	/* The thread's entry is written in place: an update or a delete of
	 * an LRU map's entry costs some 300 ns each. Its interval is still
	 * open if its switch in was not seen. After the walk: a branch before
	 * it has the verifier check the walk once for each way. Not with
	 * counted loops, whose verifier budget has no room for the branch. */
	struct pyb_offcpu_start *prev = start.lookup(&tid);

	if (prev) {
		if (prev->ts) /* not closed */
			close_unseen(prev, now);
		__builtin_memcpy(prev, st, sizeof(*st));
	} else {
		start.update(&tid, st);
	}
#else
	start.update(&tid, st);
#endif
	PYB_PHASE(PYB_PHASE_REST_NS, PYB_NOW() - t);
	return USER_STACKS && (proc->flags & PYB_PROC_NATIVE_STACKS) && pyb_native_begin_task(pid);
}

/* The end of a switched-out thread's native walk: its interval's key. */
static __always_inline void pyb_switch_finish(void *ctx, struct pyb_native_scratch *ns, s32 id)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pyb_offcpu_start *st = start.lookup(&tid);

	if (st)
		st->key.user_stack = id;
	PYB_PHASE(PYB_PHASE_NATIVE_NS, PYB_NOW() - ns->began);
	PYB_PHASE(PYB_PHASE_NATIVE_FRAMES, ns->st.len);
}
BPF_PROG_ARRAY(native_walk_switch_tail, 1);
int native_walk_switch(void *ctx)
{
	struct pyb_native_scratch *ns = pyb_native_chain_step(ctx);

	if (!ns)
		return 0;
	if (!ns->done)
		native_walk_switch_tail.call(ctx, 0);
	/* done, or out of tail calls */
	pyb_switch_finish(ctx, ns, pyb_native_store(ns));
	return 0;
}

/* Only notes the time: the interval is charged when the thread runs. */
TRACEPOINT_PROBE(sched, sched_waking)
{
	u32 tid = args->pid;
	struct pyb_offcpu_start *st = start.lookup(&tid);
	u64 now;

	if (!st || !st->ts || st->wake_ts)
		return 0;
	now = bpf_ktime_get_ns();
	if (!run_over(now))
		st->wake_ts = now;
	return 0;
}

TRACEPOINT_PROBE(sched, sched_switch)
{
	u64 now = bpf_ktime_get_ns();

	if (run_over(now))
		return 0;
	bool walk = switched_out(args, args->prev_state, now);

	switched_in((u32)args->next_pid, now);
	if (walk)
		native_walk_switch_tail.call(args, 0);
	return 0;
}

#ifdef PYB_WALL
/* pyprofile --wall: on-CPU samples of the same threads, into the same maps */
#include "sample.bpf.h"
#endif
