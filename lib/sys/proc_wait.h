/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a thread is doing, as the kernel tells it through /proc without
 * stopping the thread: its scheduler state, the system call it is blocked
 * in with the arguments decoded (the fd and what it is, the futex word,
 * the timeout and how much of it is left), its CPU time, and how long ago
 * it last ran. For a process image (a core file, sys/remote_mem.h) the
 * registers the image recorded stand in for /proc.
 */
#ifndef PYBPF_SYS_PROC_WAIT_H
#define PYBPF_SYS_PROC_WAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sys/regs.h"

#define PROC_WAIT_UNKNOWN INT64_MIN

struct proc_wait {
	char state;      /* R, S, D, T, t, Z, X, I, ...; '?' when unknown */
	bool running;    /* on a CPU or runnable: no system call to show */
	bool in_syscall; /* regs.syscall_nr is the call it is blocked in */
	bool from_image; /* a core file: registers as dumped, no scheduler view */
	struct proc_regs regs; /* syscall, arguments, sp and pc where known */
	int64_t user_ns, system_ns; /* CPU time; PROC_WAIT_UNKNOWN if unknown */
	int64_t cpu_ns;             /* the scheduler's precise total; PROC_WAIT_UNKNOWN */
	/* time since it last left a CPU, by that CPU's scheduler clock (which
	 * does not count time a hypervisor took: never more than the real
	 * time); PROC_WAIT_UNKNOWN if unknown */
	int64_t off_cpu_ns;
	int cpu;        /* the CPU it last ran on; -1 */
	char wchan[64]; /* kernel function it sleeps in; "" if unknown */

	/* the system call, decoded (when in_syscall) */
	const char *syscall;   /* "futex", "recvfrom", ...; NULL if not in one */
	int fd;                /* fd it works on; -1 */
	char fd_desc[256];     /* what that fd is: "TCP a:p -> b:p", a path, "pipe" */
	int nfds;              /* fds polled (poll, select, epoll); -1 */
	uint64_t futex;        /* futex word waited on; 0 */
	bool futex_wait;       /* a futex wait (not a wake or requeue) */
	int64_t timeout_ns;    /* timeout asked for; -1 none; PROC_WAIT_UNKNOWN */
	int64_t left_ns;       /* time left of it; PROC_WAIT_UNKNOWN */
	bool left_estimated;   /* left_ns = timeout - off_cpu_ns: an upper bound, not
				* from a deadline */
	char path[256];        /* a path argument (open, stat, ...); "" */
	pid_t child;           /* wait4/waitid: the child waited for; 0 any/none */
};

/*
 * Reads what tid of pid is doing. Returns 0, or a negative errno (-ESRCH:
 * the thread is gone). Fields the kernel would not tell are left unknown.
 */
int proc_wait_read(pid_t pid, pid_t tid, struct proc_wait *w);

/* Long name of a scheduler state letter ("sleeping", "disk sleep", ...). */
const char *proc_wait_state_name(char state);

/* Name of an x86-64 system call, or NULL when we do not know it. */
const char *proc_syscall_name(long nr);

#endif
