/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-CPU sampling program, shared by pyprofile and by pyoffcpu's text
 * when pyprofile --wall compiles it (PYB_WALL): on each perf-event sample
 * of a registered Python process, walk its Python stack, take kernel and
 * native user stack ids, and count the combination (PYB_KIND_SAMPLE),
 * marked if the thread was running a collection (a [gc] frame).
 * The includer declares the stack_traces map first.
 *
 * Compile-time parameters (-D): USER_STACKS, KERNEL_STACKS, PYB_ASYNC.
 */
#include <uapi/linux/bpf_perf_event.h>

#include "pystacks.bpf.h"
#include "asyncio.bpf.h"
#include "gc_flag.bpf.h"

/* The end of a sample's native walk: count it. */
static __always_inline void pyb_sample_finish(void *ctx, struct pyb_native_scratch *ns, s32 id)
{
	ns->key.user_stack = id;
	pyb_count_add(&ns->key, 1);
	PYB_PHASE(PYB_PHASE_NATIVE_NS, PYB_NOW() - ns->began);
	PYB_PHASE(PYB_PHASE_NATIVE_FRAMES, ns->st.len);
}
BPF_PROG_ARRAY(native_walk_sample_tail, 1);
int native_walk_sample(void *ctx)
{
	struct pyb_native_scratch *ns = pyb_native_chain_step(ctx);

	if (!ns)
		return 0;
	if (!ns->done)
		native_walk_sample_tail.call(ctx, 0);
	/* done, or out of tail calls */
	pyb_sample_finish(ctx, ns, pyb_native_store(ns));
	return 0;
}

int on_sample(struct bpf_perf_event_data *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct pyb_count_key *key;
	struct pyb_scratch *s;
	struct pyb_layout *L;
	struct pyb_proc *proc = pyb_target(pid, &L, &s);

	if (!proc) {
		pyb_stat(pid ? PYB_STAT_OTHER : PYB_STAT_IDLE);
#ifdef PYB_ONLY_PIDS
		if (pid && only_pids.lookup(&pid))
			pyb_stat(PYB_STAT_UNREGISTERED);
#endif
		return 0;
	}
	pyb_stat(PYB_STAT_SAMPLES);
	PYB_PHASE(PYB_PHASE_SAMPLES, 1);
	/* in scratch memory: the walk needs the BPF stack */
	key = &s->key;
	__builtin_memset(key, 0, sizeof(*key));
	key->pid = pid;
	key->tid = tid;
	bpf_get_current_comm(&key->comm, sizeof(key->comm));
	key->pystack = pyb_current_stack(ctx, proc, L, s, pid, tid);
	u64 t = PYB_NOW();

	if (key->pystack)
		PYB_ASYNC_KEY(ctx, key, L, s, pid);
	if (pyb_collecting(proc, L, tid))
		key->flags |= PYB_COUNT_GC; /* shown as a [gc] frame */
	key->user_stack = -1;
	/* a sample of user code has no kernel stack */
	key->kernel_stack = !KERNEL_STACKS	      ? -1
			    : (ctx->regs.cs & 3) == 3 ? PYB_STACK_ID_USER_MODE
						      : stack_traces.get_stackid(ctx, 0);
	PYB_PHASE(PYB_PHASE_REST_NS, PYB_NOW() - t);
	if (USER_STACKS && (proc->flags & PYB_PROC_NATIVE_STACKS)) {
		/* the sample's registers if it interrupted user code */
		struct pyb_native_scratch *ns =
			(ctx->regs.cs & 3) == 3
				? pyb_native_begin(pid, ctx->regs.ip, ctx->regs.sp, ctx->regs.bp)
				: pyb_native_begin_task(pid);

		if (ns) {
			ns->key = *key;
			native_walk_sample_tail.call(ctx, 0);
		}
	}
	/* no native stack wanted, or the chain is not loaded */
	pyb_count_add(key, 1);
	return 0;
}
