/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Why a Python thread went off CPU, from what the kernel's stable
 * interfaces say: the scheduler's prev_state (uninterruptible, stopped or
 * sleeping) and the last system call the thread entered, which the
 * sys_enter raw tracepoint keeps per thread. A thread that sleeps
 * interruptibly sleeps in the last system call it entered (a page fault
 * sleeps uninterruptibly): no sys_exit probe is needed. An uninterruptible
 * sleep is a page fault or, in a system call, usually disk I/O: user space
 * tells them apart by the kernel stack, which BPF takes for those.
 *
 * sys_enter fires on every system call on the machine: the first thing
 * the program does is look the process up in procs, so other processes
 * pay that look-up, and the kernel's dispatch to BPF, per call (measured
 * by bench/wait_reasons_overhead.py; pyoffcpu --no-reasons attaches none).
 *
 * A read or write sleeps on a socket, a pipe or something else (a
 * terminal, an eventfd): BPF cannot tell which without kernel structs, so
 * the first time a thread blocks on a descriptor BPF asks user space
 * (wait_events), which looks at /proc/PID/fd and answers in wait_fds; a
 * close() or dup2() onto the descriptor forgets the answer. Until the
 * answer comes the reason carries the descriptor, for user space to name.
 *
 * x86-64 system call numbers. Compile-time parameters (-D): GIL_SIZE,
 * THREAD_FILTER (0 or a host tid).
 */
#include "pywalk.bpf.h"
#include "../lib/abi/wait_abi.h"

/* prev_state bits of sched_switch (the task state as /proc reports it) */
#define PYB_STATE_UNINTERRUPTIBLE 0x2
#define PYB_STATE_STOPPED 0x4
#define PYB_STATE_TRACED 0x8

struct pyb_syscall {
	u32 nr;
	u32 pad;
	u64 arg0, arg1;
};

/* host tid -> the last system call it entered; none: not seen yet */
BPF_TABLE("lru_hash", u32, struct pyb_syscall, in_syscall, 65536);
/* pid -> its GIL's address (user space fills it); 0: it has none */
BPF_HASH(wait_gils, u32, u64, 4096);
/* what kind of file a descriptor is (user space's answer); 0: asked */
BPF_TABLE("lru_hash", struct pyb_fd_key, u32, wait_fds, 65536);
BPF_PERF_OUTPUT(wait_events);

/*
 * A raw tracepoint, not raw_syscalls:sys_enter, which builds a trace
 * record for each call of every process first. The arguments of a traced
 * call are read from its saved user registers (x86-64: rdi, rsi), which is
 * the system call ABI.
 */
/* Whether the reason of a sleep in system call nr depends on its first
 * two arguments (a descriptor, a futex address, a number of descriptors),
 * or the call makes a descriptor's kind unknown again. */
static __always_inline bool pyb_args_matter(u32 nr)
{
	switch (nr) {
	case 0: case 1: case 17: case 18: case 19: case 20:	/* read, write... */
	case 295: case 296: case 327: case 328:			/* ...preadv2, pwritev2 */
	case 202:						/* futex */
	case 7: case 23: case 270: case 271:			/* poll, select... */
	case 3: case 33: case 292:				/* close, dup2, dup3 */
		return true;
	default:
		return false;
	}
}

_Static_assert(offsetof(struct pt_regs, di) == offsetof(struct pt_regs, si) + 8,
	       "x86-64 pt_regs: di just after si");
RAW_TRACEPOINT_PROBE(sys_enter)
{
	u64 id = bpf_get_current_pid_tgid(), arg0 = 0, arg1 = 0;
	u32 pid = id >> 32, tid = (u32)id, nr;
	struct pyb_syscall *sc, fresh = {};

	if (!procs.lookup(&pid) || (THREAD_FILTER && tid != THREAD_FILTER))
		return 0;
	nr = (u32)ctx->args[1];
	if (pyb_args_matter(nr)) {
		struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
		u64 si_di[2] = {};

		/* one read for both (a read's entry is its cost): di follows si */
		bpf_probe_read_kernel(si_di, sizeof(si_di), &regs->si);
		arg1 = si_di[0];
		arg0 = si_di[1];
	}
	if (nr == 3 /* close */ || nr == 33 /* dup2 */ || nr == 292 /* dup3 */) {
		struct pyb_fd_key k = { .pid = pid, .fd = (u32)(nr == 3 ? arg0 : arg1) };

		wait_fds.delete(&k);
	}
	sc = in_syscall.lookup(&tid);
	if (!sc)
		sc = &fresh;
	sc->nr = nr;
	sc->arg0 = arg0;
	sc->arg1 = arg1;
	if (sc == &fresh)
		in_syscall.update(&tid, &fresh);
	return 0;
}

static __always_inline u32 pyb_futex_reason(u32 pid, u64 addr)
{
	u64 *gil = wait_gils.lookup(&pid);

	if (!gil)
		return PYB_WAIT_FUTEX;
	if (*gil && addr >= *gil && addr < *gil + GIL_SIZE)
		return PYB_WAIT_GIL;
	return PYB_WAIT_LOCK;
}

static __always_inline u32 pyb_fd_reason(void *ctx, u32 pid, u64 fd)
{
	struct pyb_fd_key k = { .pid = pid, .fd = (u32)fd };
	u32 *kind = wait_fds.lookup(&k), asked = 0;

	if (kind && *kind)
		return *kind;
	if (!kind && wait_fds.update(&k, &asked) == 0)
		wait_events.perf_submit(ctx, &k, sizeof(k));
	return PYB_WAIT_FD | (((u32)fd & 0xffffff) << 8);
}

/* The reason of a thread of pid that is leaving the CPU blocked. */
static __always_inline u32 pyb_wait_reason(void *ctx, u32 pid, u32 tid, long prev_state)
{
	struct pyb_syscall *sc;
	u32 nr;

	if (prev_state & (PYB_STATE_STOPPED | PYB_STATE_TRACED))
		return PYB_WAIT_STOPPED;
	if (prev_state & PYB_STATE_UNINTERRUPTIBLE)
		return PYB_WAIT_UNINTERRUPTIBLE;
	sc = in_syscall.lookup(&tid);
	if (!sc)
		return PYB_WAIT_UNKNOWN;
	nr = sc->nr;
	switch (nr) {
	case 35:  /* nanosleep */
	case 230: /* clock_nanosleep */
		return PYB_WAIT_SLEEP;
	case 23:  /* select: time.sleep before 3.11 selects on no fds */
	case 270: /* pselect6 */
		return sc->arg0 ? PYB_WAIT_POLL : PYB_WAIT_SLEEP;
	case 7:   /* poll */
	case 271: /* ppoll */
		return sc->arg1 ? PYB_WAIT_POLL : PYB_WAIT_SLEEP;
	case 232: /* epoll_wait */
	case 281: /* epoll_pwait */
	case 441: /* epoll_pwait2 */
		return PYB_WAIT_POLL;
	case 202: /* futex */
		return pyb_futex_reason(pid, sc->arg0);
	case 449: /* futex_waitv: several words, none read here */
		return PYB_WAIT_LOCK;
	case 42:  /* connect */
	case 43:  /* accept */
	case 44:  /* sendto */
	case 45:  /* recvfrom */
	case 46:  /* sendmsg */
	case 47:  /* recvmsg */
	case 288: /* accept4 */
	case 299: /* recvmmsg */
	case 307: /* sendmmsg */
		return PYB_WAIT_SOCKET;
	case 0:   /* read */
	case 1:   /* write */
	case 17:  /* pread64 */
	case 18:  /* pwrite64 */
	case 19:  /* readv */
	case 20:  /* writev */
	case 295: /* preadv */
	case 296: /* pwritev */
	case 327: /* preadv2 */
	case 328: /* pwritev2 */
		return pyb_fd_reason(ctx, pid, sc->arg0);
	case 61:  /* wait4 */
	case 247: /* waitid */
		return PYB_WAIT_CHILD;
	case 34:  /* pause */
	case 128: /* rt_sigtimedwait */
	case 130: /* rt_sigsuspend */
		return PYB_WAIT_SIGNAL;
	default:
		return PYB_WAIT_SYSCALL | ((nr & 0xffffff) << 8);
	}
}
