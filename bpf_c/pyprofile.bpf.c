/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pyprofile: on-CPU sampling. On each perf-event sample of a registered
 * Python process: walk its Python stack, take kernel and native user stack
 * ids, and count the combination in a hash map (aggregated in kernel).
 * Also reports exec and fork so user space can register new processes.
 *
 * Compile-time parameters (-D): PYSTACKS_SIZE, COUNTS_SIZE,
 * STACK_STORAGE_SIZE, USER_STACKS, KERNEL_STACKS.
 */
#include <uapi/linux/ptrace.h>
#include <uapi/linux/bpf_perf_event.h>

BPF_F_TABLE("hash", u64, struct pyb_stack, pystacks, PYSTACKS_SIZE, BPF_F_NO_PREALLOC);
BPF_HASH(counts, struct pyb_count_key, u64, COUNTS_SIZE);
BPF_STACK_TRACE(stack_traces, STACK_STORAGE_SIZE);

int on_sample(struct bpf_perf_event_data *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id, zero = 0;
	struct pyb_proc *proc = procs.lookup(&pid);
	struct pyb_count_key key = {};
	struct pyb_scratch *s;
	struct pyb_layout *L;
	u64 one = 1, *count;

	if (!proc) {
		pyb_stat(PYB_STAT_OTHER);
		return 0;
	}
	u32 layout = proc->layout;

	L = layouts.lookup(&layout);
	s = pyb_scratch_map.lookup(&zero);
	if (!L || !s)
		return 0;
	pyb_stat(PYB_STAT_SAMPLES);
	s->stack.len = 0;
	s->stack.flags = 0;
	key.pid = pid;
	key.tid = tid;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));

	u64 ts = pyb_find_tstate(proc, L, tid);

	if (ts) {
		key.pystack = pyb_walk(proc, L, ts, s, pid);
		if (s->stack.flags & PYB_STACK_TRUNCATED)
			pyb_stat(PYB_STAT_TRUNCATED);
		if (s->stack.flags & PYB_STACK_READ_ERROR)
			pyb_stat(PYB_STAT_READ_ERRORS);
		if (key.pystack && !pystacks.lookup(&key.pystack) &&
		    pystacks.update(&key.pystack, &s->stack) < 0)
			pyb_stat(PYB_STAT_STACK_MAP_FULL);
	} else {
		pyb_stat(PYB_STAT_NO_TSTATE);
	}
	key.user_stack = USER_STACKS ? stack_traces.get_stackid(ctx, BPF_F_USER_STACK) : -1;
	key.kernel_stack = KERNEL_STACKS ? stack_traces.get_stackid(ctx, 0) : -1;

	count = counts.lookup(&key);
	if (count) {
		__sync_fetch_and_add(count, 1);
	} else if (counts.update(&key, &one) < 0) {
		pyb_stat(PYB_STAT_COUNT_MAP_FULL);
	}
	return 0;
}
