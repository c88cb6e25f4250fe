/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Discovery of new Python processes, shared by every tool: an exec may
 * have started an interpreter, and a fork of a registered process is one.
 * User space checks each candidate before registering it.
 *
 * stack_events tells user space of each new stack in pystacks at once, so
 * that a short-lived process has its code named before it exits without
 * user space polling the map; a lost hint only delays naming to the next
 * full drain.
 *
 * PYB_ONLY_PIDS (-p): only the listed PIDs matter, which user space puts
 * in only_pids; other execs are not announced (each announcement wakes
 * user space, which costs more than the rest of a quiet second), and the
 * fork probe is not attached.
 *
 * PYB_FOLLOW_CHILDREN (-p with --children, a launched command): the listed
 * processes and every process they fork, at any depth, and no other. BPF
 * keeps the set itself: task_newtask (which tells a process from a thread
 * by its clone flags) adds a followed parent's child to only_pids, the
 * fork probe announces it once it is set up, and a process leaves the set
 * when it exits (so a recycled PID is not followed).
 */

#include "pywalk.bpf.h"
BPF_PERF_OUTPUT(proc_events);
BPF_PERF_OUTPUT(stack_events);
#ifdef PYB_ONLY_PIDS
#ifdef PYB_FOLLOW_CHILDREN
BPF_HASH(only_pids, u32, u8, 65536);
#else
BPF_HASH(only_pids, u32, u8, 64); /* SESSION_MAX_PIDS */
#endif
#endif

RAW_TRACEPOINT_PROBE(sched_process_exec)
{
	struct pyb_exec_event ex = { .ev = { .pid = bpf_get_current_pid_tgid() >> 32,
					     .kind = PYB_EVENT_EXEC } };

#ifdef PYB_ONLY_PIDS
	if (!only_pids.lookup(&ex.ev.pid))
		return 0;
#endif
	bpf_get_current_comm(&ex.comm, sizeof(ex.comm));
	proc_events.perf_submit(ctx, &ex, sizeof(ex));
	return 0;
}

/* Threads fire this as well; user space tells them apart. */
TRACEPOINT_PROBE(sched, sched_process_fork)
{
	struct pyb_proc_event ev = { .pid = args->child_pid, .kind = PYB_EVENT_FORK };
#ifdef PYB_FOLLOW_CHILDREN
	/* a new process of the followed tree (task_newtask added it) */
	if (only_pids.lookup(&ev.pid))
#else
	u32 parent = bpf_get_current_pid_tgid() >> 32;

	if (procs.lookup(&parent))
#endif
		proc_events.perf_submit(args, &ev, sizeof(ev));
	return 0;
}

#ifdef PYB_FOLLOW_CHILDREN
#define PYB_CLONE_THREAD 0x00010000

TRACEPOINT_PROBE(task, task_newtask)
{
	u32 parent = bpf_get_current_pid_tgid() >> 32, child = args->pid;
	u8 one = 1;

	if (!(args->clone_flags & PYB_CLONE_THREAD) && only_pids.lookup(&parent))
		only_pids.update(&child, &one);
	return 0;
}

/* A process leaves the set when its main thread exits (its PID cannot be
 * reused before that). */
TRACEPOINT_PROBE(sched, sched_process_exit)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32;

	if (pid == (u32)id)
		only_pids.delete(&pid);
	return 0;
}
#endif
