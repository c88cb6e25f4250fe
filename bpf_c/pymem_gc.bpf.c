/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pymem --gc: CPython's collections, exactly, from its own USDT probes.
 * gc__start (int generation) and gc__done (long collected) are uprobes
 * user space attaches per process, with the kernel raising the probes'
 * semaphore (ref_ctr_offset): an interpreter runs them only while it is
 * set. Where their arguments are at the call site differs per build
 * (a register, or memory by the stack pointer): user space puts it in
 * gc_probes. A collection runs in the thread that triggered it, from
 * start to done, so it is paired by thread.
 *
 * Its native stack is walked as pygil's waiters' are (unless --no-native),
 * the collection's start taken again where the walk ends.
 *
 * Each collection goes to gc_log, a ring user space drains every tick
 * (an entry's seq, written last, says it is whole), and its time in
 * microseconds to the counts by the Python stack that triggered it.
 *
 * Where a process has no probes (or they cannot be attached), on_gc_sample
 * samples its collector instead: a CPU-clock sample of a thread that holds
 * the GIL while the collecting flag is set (gc_flag.bpf.h) counts for its
 * process in gc_sampled.
 *
 * Compile-time parameters (-D): PYSTACKS_SIZE, COUNTS_SIZE (pystacks.bpf.h),
 * GC_LOG_SIZE (a power of two).
 */
#include <uapi/linux/ptrace.h>
#include <uapi/linux/bpf_perf_event.h>

#include "pystacks.bpf.h"
#include "gc_flag.bpf.h"
#include "../lib/abi/gc_abi.h"

BPF_HASH(gc_probes, u32, struct pyb_gc_probes, 4096);      /* pid -> its arguments */
BPF_HASH(gc_open, u32, struct pyb_gc_event, 65536);        /* tid -> collection running */
BPF_ARRAY(gc_log, struct pyb_gc_event, GC_LOG_SIZE);
BPF_ARRAY(gc_log_head, u64, 1);                            /* collections logged */
BPF_PERCPU_ARRAY(gc_scratch, struct pyb_gc_event, 1);
BPF_HASH(gc_sampled, u32, u64, 4096); /* pid -> samples taken collecting */
/* When the run ended (user space sets it): later collections are not
 * logged, so the report counts the same ones the log has. */
BPF_ARRAY(run_end, u64, 1);

static __always_inline bool run_over(u64 now)
{
	u32 zero = 0;
	u64 *end = run_end.lookup(&zero);

	return end && *end && now > *end;
}

/* A register's value at the probe: its 8-byte slot in struct pt_regs
 * (user space turns register names into slots). */
static __always_inline u64 gc_reg(struct pt_regs *ctx, u32 slot)
{
	u64 v = 0, at = (u64)ctx + (u64)slot * 8;

	if (slot >= PYB_PT_REGS_SLOTS || bpf_probe_read_kernel(&v, sizeof(v), (void *)at) < 0)
		return 0;
	return v;
}

/* A probe argument, sign-extended as its size and sign say. */
static __always_inline s64 gc_arg(struct pt_regs *ctx, const struct pyb_usdt_arg *a)
{
	u64 v = 0;

	if (a->kind == PYB_USDT_CONST)
		return a->value;
	v = gc_reg(ctx, a->reg);
	if (a->kind == PYB_USDT_MEM) {
		u64 at = v + (s64)a->value;

		v = 0;
		if (bpf_probe_read_user(&v, sizeof(v), (void *)at) < 0 &&
		    bpf_probe_read_user(&v, 4, (void *)at) < 0)
			return -1;
	}
	switch (a->size) {
	case 1: return a->is_signed ? (s64)(s8)v : (s64)(u8)v;
	case 2: return a->is_signed ? (s64)(s16)v : (s64)(u16)v;
	case 4: return a->is_signed ? (s64)(s32)v : (s64)(u32)v;
	default: return (s64)v;
	}
}

/* The end of a collection's native walk: its stack, and the start again. */
static __always_inline void pyb_gc_finish(void *ctx, struct pyb_native_scratch *ns, s32 id)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pyb_gc_event *ev = gc_open.lookup(&tid);

	if (ev) {
		ev->user_stack = id;
		ev->start_ns = bpf_ktime_get_ns();
	}
}
BPF_PROG_ARRAY(native_walk_gc_tail, 1);
int native_walk_gc(void *ctx)
{
	struct pyb_native_scratch *ns = pyb_native_chain_step(ctx);

	if (!ns)
		return 0;
	if (!ns->done)
		native_walk_gc_tail.call(ctx, 0);
	/* done, or out of tail calls */
	pyb_gc_finish(ctx, ns, pyb_native_store(ns));
	return 0;
}

int gc_start(struct pt_regs *ctx)
{
	u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	u32 pid = id >> 32, tid = (u32)id, zero = 0;
	struct pyb_gc_probes *probes = gc_probes.lookup(&pid);
	struct pyb_gc_event *ev;
	struct pyb_scratch *s;
	struct pyb_layout *L;
	struct pyb_proc *proc;

	if (!probes || run_over(now) || !(ev = gc_scratch.lookup(&zero)))
		return 0;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->pid = pid;
	ev->tid = tid;
	ev->generation = (s32)gc_arg(ctx, &probes->generation);
	ev->user_stack = -1;
	proc = pyb_target(pid, &L, &s);
	if (proc)
		ev->pystack = pyb_current_stack(ctx, proc, L, s, pid, tid);
	/* the walks' time is the probe's, not the collection's: the start is
	 * taken again where the native walk ends */
	ev->start_ns = bpf_ktime_get_ns();
	gc_open.update(&tid, ev);
	if (proc && (proc->flags & PYB_PROC_NATIVE_STACKS)) {
		struct pyb_native_scratch *ns = pyb_native_begin(pid, ctx->ip, ctx->sp, ctx->bp);

		if (ns)
			native_walk_gc_tail.call(ctx, 0);
	}
	return 0;
}

int gc_done(struct pt_regs *ctx)
{
	u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), idx;
	u32 pid = id >> 32, tid = (u32)id, zero = 0, slot;
	struct pyb_gc_probes *probes = gc_probes.lookup(&pid);
	struct pyb_gc_event *ev = gc_open.lookup(&tid), *out;
	u64 *head = gc_log_head.lookup(&zero);

	if (!ev || !probes || !head || now < ev->start_ns)
		return 0;
	ev->duration_ns = now - ev->start_ns;
	ev->collected = gc_arg(ctx, &probes->collected);
	if (!run_over(now)) {
		struct pyb_count_key key = {
			.pid = pid, .tid = tid, .kind = PYB_KIND_GC_PAUSE,
			.pystack = ev->pystack, .user_stack = ev->user_stack, .kernel_stack = -1,
		};

		bpf_get_current_comm(&key.comm, sizeof(key.comm));
		pyb_count_add(&key, (ev->duration_ns + 500) / 1000);
		idx = __sync_fetch_and_add(head, 1);
		slot = idx & (GC_LOG_SIZE - 1);
		out = gc_log.lookup(&slot);
		if (out) {
			out->seq = 0;
			out->pid = ev->pid;
			out->tid = ev->tid;
			out->generation = ev->generation;
			out->collected = ev->collected;
			out->start_ns = ev->start_ns;
			out->duration_ns = ev->duration_ns;
			out->pystack = ev->pystack;
			asm volatile("" ::: "memory"); /* seq last */
			out->seq = idx + 1;
		}
	}
	gc_open.delete(&tid);
	return 0;
}

int on_gc_sample(struct bpf_perf_event_data *ctx)
{
	u32 pid = bpf_get_current_pid_tgid() >> 32, tid = (u32)bpf_get_current_pid_tgid();
	u64 *n;
	struct pyb_proc *proc;
	struct pyb_layout *L;
	u32 layout;

	/* every sample counted as pyprofile counts them: the session checks
	 * the rate the kernel reached, and so the time a sample stands for */
	if (!pid) {
		pyb_stat(PYB_STAT_IDLE);
		return 0;
	}
	if (!(proc = procs.lookup(&pid))) {
		pyb_stat(PYB_STAT_OTHER);
		return 0;
	}
	pyb_stat(PYB_STAT_SAMPLES);
	if (!(n = gc_sampled.lookup(&pid)))
		return 0;
	layout = proc->layout;
	L = layouts.lookup(&layout);
	if (L && !run_over(bpf_ktime_get_ns()) && pyb_collecting(proc, L, tid))
		__sync_fetch_and_add(n, 1);
	return 0;
}
