/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Why a thread was off CPU: what bpf_c/wait_reasons.bpf.h puts in the
 * detail word of a count key (struct pyb_count_key), shared with user
 * space (lib/bpf/wait_reasons.c names them).
 */
#ifndef PYBPF_WAIT_ABI_H
#define PYBPF_WAIT_ABI_H

#include "py_abi.h"

enum pyb_wait_reason {
	PYB_WAIT_NONE = 0,   /* not classified (samples, pygil) */
	PYB_WAIT_UNKNOWN,    /* in a system call that began before tracing did (a
				thread off CPU since then: user space's) */
	PYB_WAIT_SLEEP,      /* nanosleep, clock_nanosleep, select/pselect on no fds */
	PYB_WAIT_LOCK,       /* futex: a lock or condition that is not the GIL */
	PYB_WAIT_GIL,        /* futex on the process's GIL */
	PYB_WAIT_FUTEX,      /* futex in a process whose GIL is not known */
	PYB_WAIT_SOCKET,     /* socket calls, or read/write on a socket */
	PYB_WAIT_PIPE,       /* read/write on a pipe or FIFO */
	PYB_WAIT_FD_OTHER,   /* read/write on another kind of file (terminal, eventfd...) */
	PYB_WAIT_FD,         /* read/write on fd (detail >> 8), kind not known yet */
	PYB_WAIT_POLL,       /* poll, select, epoll */
	PYB_WAIT_CHILD,      /* wait4, waitid */
	PYB_WAIT_SIGNAL,     /* pause, sigsuspend, sigtimedwait */
	PYB_WAIT_UNINTERRUPTIBLE, /* D state: user space splits it by the kernel stack: */
	PYB_WAIT_DISK,       /* ...in a system call (usually disk I/O) */
	PYB_WAIT_PAGE_FAULT, /* ...in a page fault */
	PYB_WAIT_STOPPED,    /* stopped by a signal or a debugger */
	PYB_WAIT_SYSCALL,    /* sleeping in another system call (number: detail >> 8) */
	PYB_WAIT_CPU,        /* runnable: waiting for a CPU (PYB_KIND_RUNNABLE) */
	PYB_WAIT_NO_SYSCALL, /* asleep, not in a system call (its registers say) */
	PYB_WAIT_MAX,
};

#define PYB_WAIT_REASON(detail) ((detail) & 0xff)
#define PYB_WAIT_ARG(detail) ((detail) >> 8)

/* A file descriptor BPF saw a thread block on (wait_fds, wait_events). */
struct pyb_fd_key {
	pyb_u32 pid;
	pyb_u32 fd;
};

#endif
