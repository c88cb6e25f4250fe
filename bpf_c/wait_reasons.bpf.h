/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Why a Python thread went off CPU, from what the kernel's stable
 * interfaces say: the scheduler's prev_state (uninterruptible, stopped or
 * sleeping) and the system call the thread is in, read from its user
 * registers as it switches out (pyb_current_syscall). A thread that
 * sleeps interruptibly sleeps in a system call (a page fault sleeps
 * uninterruptibly). An uninterruptible sleep is a page fault or, in a
 * system call, usually disk I/O: user space tells them apart by the
 * kernel stack, which BPF takes for those. Of the machine's system calls
 * only close, dup2 and dup3 run a program (pyb_fd_forget).
 *
 * A read or write sleeps on a socket, a pipe or something else (a
 * terminal, an eventfd): BPF cannot tell which without kernel structs, so
 * the first time a thread blocks on a descriptor BPF asks user space
 * (wait_events), which looks at /proc/PID/fd and answers in wait_fds; a
 * close() of the descriptor, or a dup2() or dup3() onto it, forgets the
 * answer. Until the answer comes the reason carries the descriptor: the
 * interval takes the kind when it is charged (pyb_wait_settled), or user
 * space names it at the end.
 *
 * x86-64 system call numbers. Compile-time parameters (-D): GIL_SIZE.
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

/* pid -> its GIL's address (user space fills it); 0: it has none */
BPF_HASH(wait_gils, u32, u64, 4096);
/* what kind of file a descriptor is (user space's answer); 0: asked */
BPF_TABLE("lru_hash", struct pyb_fd_key, u32, wait_fds, 65536);
BPF_PERF_OUTPUT(wait_events);

/* A descriptor closed, or another duplicated onto it, is of no known kind
 * any more. Tracepoints of these calls alone: the kernel runs their
 * programs for no other call. */
static __always_inline void pyb_fd_forget(u32 fd)
{
	struct pyb_fd_key k = { .pid = bpf_get_current_pid_tgid() >> 32, .fd = fd };

	/* a look-up takes no lock, a delete does */
	if (wait_fds.lookup(&k))
		wait_fds.delete(&k);
}

TRACEPOINT_PROBE(syscalls, sys_enter_close)
{
	pyb_fd_forget((u32)args->fd);
	return 0;
}

TRACEPOINT_PROBE(syscalls, sys_enter_dup2)
{
	pyb_fd_forget((u32)args->newfd);
	return 0;
}

TRACEPOINT_PROBE(syscalls, sys_enter_dup3)
{
	pyb_fd_forget((u32)args->newfd);
	return 0;
}

/*
 * The system call the current thread is in, from its user registers as
 * the kernel saved them at entry (struct pt_regs, laid out by the x86-64
 * entry code, a fixed ABI): orig_ax is the call's number, di and si its
 * first two arguments, and ax is -ENOSYS until the call returns. An
 * interrupt's or an exception's frame has the user's ax there, or a
 * negative orig_ax. False if the thread is in none.
 */
#define PYB_ENOSYS 38
_Static_assert(offsetof(struct pt_regs, orig_ax) == offsetof(struct pt_regs, ax) + 40 &&
		       offsetof(struct pt_regs, di) == offsetof(struct pt_regs, ax) + 32 &&
		       offsetof(struct pt_regs, si) == offsetof(struct pt_regs, ax) + 24,
	       "x86-64 pt_regs: ax, cx, dx, si, di, orig_ax in a row");
static __always_inline bool pyb_current_syscall(struct pyb_syscall *sc)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	u64 r[6]; /* ax, cx, dx, si, di, orig_ax: one read */

	if (bpf_probe_read_kernel(r, sizeof(r), &regs->ax) || r[0] != (u64)-PYB_ENOSYS ||
	    (s64)r[5] < 0)
		return false;
	sc->nr = (u32)r[5];
	sc->arg0 = r[4];
	sc->arg1 = r[3];
	return true;
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

/* detail (a reason) with the kind of its descriptor in place of the
 * descriptor, where user space has said it since the wait began. */
static __always_inline u32 pyb_wait_settled(u32 pid, u32 detail)
{
	struct pyb_fd_key k = { .pid = pid, .fd = PYB_WAIT_ARG(detail) };
	u32 *kind;

	if (PYB_WAIT_REASON(detail) != PYB_WAIT_FD)
		return detail;
	kind = wait_fds.lookup(&k);
	return kind && *kind ? *kind : detail;
}

/* The reason of a thread of pid that is leaving the CPU blocked. */
static __always_inline u32 pyb_wait_reason(void *ctx, u32 pid, long prev_state)
{
	struct pyb_syscall call, *sc = &call;
	u32 nr;

	if (prev_state & (PYB_STATE_STOPPED | PYB_STATE_TRACED))
		return PYB_WAIT_STOPPED;
	if (prev_state & PYB_STATE_UNINTERRUPTIBLE)
		return PYB_WAIT_UNINTERRUPTIBLE;
	if (!pyb_current_syscall(sc))
		return PYB_WAIT_NO_SYSCALL;
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
