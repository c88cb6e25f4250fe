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
 */

#include "pywalk.bpf.h"
BPF_PERF_OUTPUT(proc_events);
BPF_PERF_OUTPUT(stack_events);
#ifdef PYB_ONLY_PIDS
BPF_HASH(only_pids, u32, u8, 64); /* SESSION_MAX_PIDS */
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
	u32 parent = bpf_get_current_pid_tgid() >> 32;
	struct pyb_proc_event ev = { .pid = args->child_pid, .kind = PYB_EVENT_FORK };

	if (procs.lookup(&parent))
		proc_events.perf_submit(args, &ev, sizeof(ev));
	return 0;
}
