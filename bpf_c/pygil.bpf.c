/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pygil: time Python threads wait for the GIL, without symbols. A thread
 * that cannot take the GIL sleeps in futex() on one of the GIL struct's
 * condition variables or mutexes; the syscalls tracepoints give the
 * address, so a futex wait inside [gil, gil + size) of one of a registered
 * process's GILs (one per interpreter that has its own, 3.12+) is a GIL
 * wait, unless the thread holds that GIL (locked and last_holder is a
 * thread state of this thread: it is dropping it, and only takes the
 * mutex).
 *
 * Consecutive waits of one thread with less than EPISODE_GAP_NS between
 * them (the 5 ms timed waits of one take_gil(), the forced-switch wait
 * before it), or with no GIL switch between them (the thread cannot have
 * taken the GIL: however long it was kept from a CPU in between, it is
 * the same take_gil()), make one wait episode: one count and one
 * histogram entry.
 * Time is charged to the waiter's Python stack, walked at the episode's
 * start, and each wait to the Python stack of the thread holding the GIL
 * as it began. A wait ends when sched:sched_waking wakes the thread: the
 * time it may then spend waiting for a CPU is not time waiting for the GIL.
 *
 * Compile-time parameters (-D): PYSTACKS_SIZE, COUNTS_SIZE (pystacks.bpf.h), GIL_SIZE,
 * EPISODE_GAP_NS, THREAD_FILTER (0 or a host tid).
 */
#include <uapi/linux/ptrace.h>

#include "pystacks.bpf.h"

#define FUTEX_CMD_MASK 0x7f /* without PRIVATE (128) and CLOCK_REALTIME (256) */
#define FUTEX_WAIT 0
#define FUTEX_WAIT_BITSET 9

BPF_HASH(gils, u32, struct pyb_gils, 4096); /* pid -> its GIL structs */
BPF_HASH(hists, struct pyb_hist_key, u64, COUNTS_SIZE);
BPF_TABLE("lru_hash", u32, struct pyb_gil_wait, waits, 65536);
BPF_HASH(threads, u32, struct pyb_gil_thread, 65536);
BPF_PERCPU_ARRAY(wait_scratch, struct pyb_gil_wait, 1);
/* When the run ended (user space sets it): later events are ignored, so a
 * wait in progress then stays open for user space to count up to there. */
BPF_ARRAY(run_end, u64, 1);

static __always_inline bool run_over(u64 now)
{
	u32 zero = 0;
	u64 *end = run_end.lookup(&zero);

	return end && *end && now > *end;
}

/* Ends an episode: its duration goes to the waiter's histogram. */
static __always_inline void close_episode(struct pyb_gil_wait *w)
{
	struct pyb_hist_key hk = { .pystack = w->key.pystack, .pid = w->key.pid };
	u32 tid = w->key.tid;
	struct pyb_gil_thread *t = threads.lookup(&tid);

	if (!w->episode_start)
		return;
	hk.slot = bpf_log2l(w->episode_us);
	hists.increment(hk);
	if (t)
		__sync_fetch_and_add(&t->episodes, 1);
	w->episode_start = 0;
}

/* A new episode: who waits (where: see note_waiter_stack). */
static __always_inline void open_episode(struct pyb_gil_wait *w, u32 pid, u32 tid, u64 now)
{
	__builtin_memset(&w->key, 0, sizeof(w->key));
	w->episode_start = now;
	w->episode_us = 0;
	w->key.pid = pid;
	w->key.tid = tid;
	w->key.kind = PYB_KIND_GIL_WAIT;
	w->key.user_stack = -1;
	w->key.kernel_stack = -1;
	bpf_get_current_comm(&w->key.comm, sizeof(w->key.comm));
	w->stack_pending = 1;
}

TRACEPOINT_PROBE(syscalls, sys_enter_futex)
{
	u64 id = bpf_get_current_pid_tgid(), now;
	u32 pid = id >> 32, tid = (u32)id, zero = 0;
	int cmd = args->op & FUTEX_CMD_MASK;
	u64 addr = (u64)args->uaddr, gil = 0;
	struct pyb_gils *gilp;
	struct pyb_proc *proc;
	struct pyb_layout *L;
	struct pyb_gil_wait *w;
	u32 slot = 0;

	if (cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
		return 0;
	gilp = gils.lookup(&pid);
	if (!gilp || (THREAD_FILTER && tid != THREAD_FILTER))
		return 0;
	/* which interpreter's GIL, if any */
	for (u32 i = 0; i < PYB_MAX_GILS; i++) {
		u64 g = gilp->addr[i];

		if (g && addr >= g && addr < g + GIL_SIZE) {
			gil = g;
			slot = i;
			break;
		}
	}
	if (!gil)
		return 0;
	proc = procs.lookup(&pid);
	if (!proc)
		return 0;
	u32 layout = proc->layout;

	L = layouts.lookup(&layout);
	if (!L)
		return 0;
	u32 ns_tid = pyb_ns_tid(proc, tid);
	u64 holder = pyb_read_u64(gil + L->gil_last_holder);

	/* the holder only takes the mutex to drop the GIL: no wait for it
	 * (by thread id: a thread may own thread states in several
	 * interpreters) */
	if (ns_tid && holder && pyb_read_s32(gil + L->gil_locked) == 1 &&
	    pyb_tstate_tid(proc, L, holder) == ns_tid)
		return 0;
	now = bpf_ktime_get_ns();
	if (run_over(now))
		return 0;
	/* the thread's entry, changed in place; a new one is made in scratch
	 * space and stored (an LRU map's update costs some 300 ns) */
	w = waits.lookup(&tid);
	bool fresh = !w;

	if (fresh) {
		w = wait_scratch.lookup(&zero);
		if (!w)
			return 0;
		__builtin_memset(w, 0, sizeof(*w));
	}
	u64 switch_addr = gil + L->gil_switch_number;

	if (w->episode_start && now - w->last_exit > EPISODE_GAP_NS &&
	    (w->switch_addr != switch_addr || pyb_read_u64(switch_addr) != w->switch_at_exit))
		close_episode(w);
	if (!w->episode_start) {
		struct pyb_gil_thread fresh = { .pid = pid };

		threads.insert(&tid, &fresh);
		open_episode(w, pid, tid, now);
	}
	struct pyb_gil_thread *t = threads.lookup(&tid);

	if (t)
		t->gil = slot;
	w->gil = gil;
	w->switch_addr = switch_addr;
	w->woken_ts = 0; /* before enter_ts: sched_waking reads them in turn */
	w->enter_ts = now;
	w->holder_pending = 1;
	if (fresh)
		waits.update(&tid, w);
	return 0;
}

/* The end of a waiter's native walk: its episode's key. */
static __always_inline void pyb_gil_finish(void *ctx, struct pyb_native_scratch *ns, s32 id)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pyb_gil_wait *w = waits.lookup(&tid);

	if (w)
		w->key.user_stack = id;
}
BPF_PROG_ARRAY(native_walk_gil_tail, 1);
int native_walk_gil(void *ctx)
{
	struct pyb_native_scratch *ns = pyb_native_chain_step(ctx);

	if (!ns)
		return 0;
	if (!ns->done)
		native_walk_gil_tail.call(ctx, 0);
	/* done, or out of tail calls */
	pyb_gil_finish(ctx, ns, pyb_native_store(ns));
	return 0;
}

/*
 * The waiter's Python stack, when an episode begins: a second program on
 * the tracepoint, run after the one above, because the verifier could not
 * follow the walk through that one's branches (and a third does the
 * holder's: one program walking two stacks is more than it accepts).
 */
int note_waiter_stack(void *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct pyb_gil_wait *w = waits.lookup(&tid);
	struct pyb_scratch *s;
	struct pyb_layout *L;
	struct pyb_proc *proc;

	if (!w || !w->stack_pending)
		return 0;
	w->stack_pending = 0;
	proc = pyb_target(pid, &L, &s);
	if (!proc)
		return 0;
	pyb_stat(PYB_STAT_SAMPLES);
	w->key.pystack = pyb_current_stack(ctx, proc, L, s, pid, tid);
	if ((proc->flags & PYB_PROC_NATIVE_STACKS) && pyb_native_begin_task(pid))
		native_walk_gil_tail.call(ctx, 0);
	return 0;
}

/*
 * Who holds the GIL as this wait starts (the holder changes within an
 * episode as others take turns): the third program on the tracepoint.
 * Threads share memory, so the holder's frames are readable from the
 * waiter's context.
 */
int note_gil_holder(void *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct pyb_gil_wait *w = waits.lookup(&tid);
	u64 gil, holder;
	u32 holder_tid;
	struct pyb_scratch *s;
	struct pyb_layout *L;
	struct pyb_proc *proc;

	/* only right after the program above began a GIL wait */
	if (!w || !w->holder_pending)
		return 0;
	w->holder_pending = 0;
	gil = w->gil;
	proc = pyb_target(pid, &L, &s);
	if (!proc)
		return 0;
	w->holder.pid = pid;
	w->holder.kind = PYB_KIND_GIL_HOLD;
	w->holder.user_stack = PYB_STACK_ID_NONE; /* another thread's: not walked */
	w->holder.kernel_stack = -1;
	w->holder.tid = 0;
	w->holder.pystack = 0;
	holder = pyb_read_u64(gil + L->gil_last_holder);
	if (!holder || pyb_read_s32(gil + L->gil_locked) != 1)
		return 0;
	holder_tid = pyb_tstate_tid(proc, L, holder);
	if (holder_tid == pyb_ns_tid(proc, tid))
		return 0;
	w->holder.tid = holder_tid;
	w->holder.pystack = pyb_walk_and_store(ctx, proc, L, pyb_top_frame(L, holder), s, pid);
	return 0;
}

TRACEPOINT_PROBE(syscalls, sys_exit_futex)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pyb_gil_wait *w = waits.lookup(&tid);
	struct pyb_gil_thread *t;
	u64 now, us;

	if (!w || !w->enter_ts)
		return 0;
	now = bpf_ktime_get_ns();
	if (run_over(now))
		return 0;
	/* the wait for the GIL ended at the wakeup; then it waited for a CPU */
	us = ((w->woken_ts > w->enter_ts && w->woken_ts < now ? w->woken_ts : now) - w->enter_ts) /
	     1000;
	w->enter_ts = 0;
	w->last_exit = now;
	w->switch_at_exit = pyb_read_u64(w->switch_addr);
	w->episode_us += us;
	pyb_count_add(&w->key, us);
	if (w->holder.pystack)
		pyb_count_add(&w->holder, us);
	t = threads.lookup(&tid);
	if (t) {
		__sync_fetch_and_add(&t->wait_us, us);
		__sync_fetch_and_add(&t->futex_waits, 1);
	}
	return 0;
}

/* A thread in a GIL wait is woken: its wait for the GIL ends here. */
TRACEPOINT_PROBE(sched, sched_waking)
{
	u32 tid = args->pid;
	struct pyb_gil_wait *w = waits.lookup(&tid);

	u64 now;

	if (!w || !w->enter_ts || w->woken_ts)
		return 0;
	now = bpf_ktime_get_ns();
	if (!run_over(now))
		w->woken_ts = now;
	return 0;
}
