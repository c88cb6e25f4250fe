/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-CPU sampling program, shared by pyprofile and by pyoffcpu's text
 * when pyprofile --wall compiles it (PYB_WALL): on each perf-event sample
 * of a registered Python process, walk its Python stack, take kernel and
 * native user stack ids, and count the combination (PYB_KIND_SAMPLE).
 * The includer declares the stack_traces map first.
 *
 * Compile-time parameters (-D): USER_STACKS, KERNEL_STACKS, PYB_ASYNC.
 */
#include <uapi/linux/bpf_perf_event.h>

#include "pystacks.bpf.h"
#include "asyncio.bpf.h"

int on_sample(struct bpf_perf_event_data *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct pyb_count_key key = {};
	struct pyb_scratch *s;
	struct pyb_layout *L;
	struct pyb_proc *proc = pyb_target(pid, &L, &s);

	if (!proc) {
		pyb_stat(pid ? PYB_STAT_OTHER : PYB_STAT_IDLE);
		return 0;
	}
	pyb_stat(PYB_STAT_SAMPLES);
	key.pid = pid;
	key.tid = tid;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	key.pystack = pyb_current_stack(ctx, proc, L, s, pid, tid);
	if (key.pystack)
		PYB_ASYNC_KEY(ctx, &key, s, pid);
	key.user_stack = USER_STACKS && (proc->flags & PYB_PROC_NATIVE_STACKS)
				 ? stack_traces.get_stackid(ctx, BPF_F_USER_STACK)
				 : -1;
	key.kernel_stack = KERNEL_STACKS ? stack_traces.get_stackid(ctx, 0) : -1;
	pyb_count_add(&key, 1);
	return 0;
}
