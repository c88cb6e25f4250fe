/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pymem (growth): the memory Python processes get from the kernel, by the
 * Python + native + kernel stack that asked for it.
 *
 * Resident memory: exceptions:page_fault_user, and page_fault_kernel on a
 * user address (a system call writing into a buffer never touched yet),
 * run in the faulting thread's context, as pyoffcpu's sched_switch does
 * (the kernel stack only for the latter, the system call's):
 * a fault on a page that is not present (error code bit 0 clear) makes a
 * page resident and is charged PAGE_BYTES to the thread's stacks
 * (PYB_KIND_RESIDENT); a fault on a present page (write-protect, copy on
 * write) is counted apart and charged nothing. Only tracepoint fields are
 * read.
 *
 * Mapped memory: mmap, munmap, brk and mremap, per process, from their
 * system call tracepoints (what was asked at entry, charged at a
 * successful exit): totals only, no stacks.
 *
 * Compile-time parameters (-D): PYSTACKS_SIZE, COUNTS_SIZE (pystacks.bpf.h),
 * STACK_STORAGE_SIZE, USER_STACKS, KERNEL_STACKS, THREAD_FILTER (0 or a
 * host tid), PYB_PAGE_BYTES.
 */
#include <uapi/linux/ptrace.h>

#include "pystacks.bpf.h"
#include "../lib/abi/mem_abi.h"

/* x86's page fault error code: the page was present (a protection fault) */
#define PYB_PF_PROT 1
/* the highest user address on x86-64 (4-level and 5-level paging alike
 * keep user addresses below this) */
#define PYB_USER_MAX 0x00ffffffffffffffULL

BPF_STACK_TRACE(stack_traces, STACK_STORAGE_SIZE);
BPF_HASH(mem_totals, u32, struct pyb_mem_totals, 4096);
/* LRU: a thread that exits inside a call leaves an entry behind */
BPF_TABLE("lru_hash", u32, struct pyb_mem_call, mem_calls, 16384);

/* zeros, to make an entry from (no room on the BPF stack for one) */
BPF_PERCPU_ARRAY(mem_zero, struct pyb_mem_totals, 1);

static __always_inline struct pyb_mem_totals *totals_of(u32 pid)
{
	struct pyb_mem_totals *t = mem_totals.lookup(&pid), *zero;
	u32 z = 0;

	if (t)
		return t;
	zero = mem_zero.lookup(&z);
	if (!zero)
		return NULL;
	mem_totals.insert(&pid, zero);
	return mem_totals.lookup(&pid);
}

/* The end of a fault's native walk: count its page. */
BPF_PROG_ARRAY(native_walk_fault_tail, 1);
int native_walk_fault(void *ctx)
{
	struct pyb_native_scratch *ns = pyb_native_chain_step(ctx);

	if (!ns)
		return 0;
	if (!ns->done)
		native_walk_fault_tail.call(ctx, 0);
	/* done, or out of tail calls */
	ns->key.user_stack = pyb_native_store(ns);
	pyb_count_add(&ns->key, PYB_PAGE_BYTES);
	return 0;
}

static __always_inline void on_fault(void *ctx, u64 error_code, bool in_kernel)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct pyb_count_key *key;
	struct pyb_mem_totals *t;
	struct pyb_scratch *s;
	struct pyb_layout *L;
	struct pyb_proc *proc;

	if (!tid || (THREAD_FILTER && tid != THREAD_FILTER))
		return;
	proc = pyb_target(pid, &L, &s);
	if (!proc)
		return;
	t = totals_of(pid);
	if (error_code & PYB_PF_PROT) {
		if (t)
			__sync_fetch_and_add(&t->prot_faults, 1);
		return;
	}
	if (t) {
		__sync_fetch_and_add(&t->faults, 1);
		if (in_kernel)
			__sync_fetch_and_add(&t->kernel_faults, 1);
	}
	pyb_stat(PYB_STAT_SAMPLES);
	/* in the walk's scratch, not on the BPF stack, which the walk fills */
	key = &s->key;
	__builtin_memset(key, 0, sizeof(*key));
	key->pid = pid;
	key->tid = tid;
	key->kind = PYB_KIND_RESIDENT;
	bpf_get_current_comm(&key->comm, sizeof(key->comm));
	key->pystack = pyb_current_stack(ctx, proc, L, s, pid, tid);
	key->user_stack = -1;
	/* a fault taken in user mode has only the fault handler's entry for a
	 * kernel stack: kept only for one taken inside a system call */
	key->kernel_stack = !in_kernel	 ? PYB_STACK_ID_USER_MODE
			    : KERNEL_STACKS ? stack_traces.get_stackid(ctx, 0)
					    : -1;
	if (USER_STACKS && (proc->flags & PYB_PROC_NATIVE_STACKS)) {
		struct pyb_native_scratch *ns = pyb_native_begin_task(pid);

		if (ns) {
			ns->key = *key;
			native_walk_fault_tail.call(ctx, 0);
		}
	}
	/* no native stack wanted, or the chain is not loaded */
	pyb_count_add(key, PYB_PAGE_BYTES);
}

TRACEPOINT_PROBE(exceptions, page_fault_user)
{
	on_fault(args, args->error_code, false);
	return 0;
}

/* The kernel touching a user page for the thread (copy_to_user): the
 * thread's memory all the same. Faults on kernel addresses are not. */
TRACEPOINT_PROBE(exceptions, page_fault_kernel)
{
	if (args->address <= PYB_USER_MAX)
		on_fault(args, args->error_code, true);
	return 0;
}

/* A mapping call of a traced process: what it asked, for its exit. */
static __always_inline void call_enter(u32 nr, u64 len, u64 old_len)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct pyb_mem_call c = { .len = len, .old_len = old_len, .nr = nr };

	if (!procs.lookup(&pid))
		return;
	mem_calls.update(&tid, &c);
}

static __always_inline u64 page_round(u64 len)
{
	return (len + PYB_PAGE_BYTES - 1) & ~(u64)(PYB_PAGE_BYTES - 1);
}

static __always_inline void call_exit(long ret)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct pyb_mem_call *c = mem_calls.lookup(&tid);
	struct pyb_mem_totals *t;

	if (!c)
		return;
	struct pyb_mem_call call = *c;

	mem_calls.delete(&tid);
	/* failures return -errno; mapped addresses are never in that range */
	if (ret < 0 && ret >= -4095)
		return;
	t = totals_of(pid);
	if (!t)
		return;
	__sync_fetch_and_add(&t->map_calls, 1);
	if (call.nr == PYB_MEM_MMAP) {
		__sync_fetch_and_add(&t->mapped, page_round(call.len));
	} else if (call.nr == PYB_MEM_MUNMAP) {
		__sync_fetch_and_add(&t->unmapped, page_round(call.len));
	} else if (call.nr == PYB_MEM_MREMAP) {
		u64 n = page_round(call.len), o = page_round(call.old_len);

		if (n > o)
			__sync_fetch_and_add(&t->mapped, n - o);
		else
			__sync_fetch_and_add(&t->unmapped, o - n);
	}
}

/*
 * The system call tracepoints' records (their format is fixed: the common
 * header, the call's number, then each argument or the return value in 8
 * bytes). Declared here rather than through TRACEPOINT_PROBE: the mapping
 * generations (maps_gen.bpf.h) have programs of their own on mmap, munmap
 * and mremap, and both attach.
 */
struct pymem_sys_enter {
	u64 common;
	s32 nr;
	u32 pad;
	u64 args[6];
};
struct pymem_sys_exit {
	u64 common;
	s32 nr;
	u32 pad;
	s64 ret;
};

/* mmap(addr, len, ...) */
int pymem_enter_mmap(struct pymem_sys_enter *ctx)
{
	call_enter(PYB_MEM_MMAP, ctx->args[1], 0);
	return 0;
}

/* munmap(addr, len) */
int pymem_enter_munmap(struct pymem_sys_enter *ctx)
{
	call_enter(PYB_MEM_MUNMAP, ctx->args[1], 0);
	return 0;
}

/* mremap(addr, old_len, new_len, ...) */
int pymem_enter_mremap(struct pymem_sys_enter *ctx)
{
	call_enter(PYB_MEM_MREMAP, ctx->args[2], ctx->args[1]);
	return 0;
}

/* the exit of each of the three */
int pymem_exit_map_call(struct pymem_sys_exit *ctx)
{
	call_exit(ctx->ret);
	return 0;
}

/* brk returns the break it leaves (the old one if it refused): the
 * change is against the last one seen. Concurrent brk calls of a process
 * are serialized by the kernel but may be seen out of order here: the
 * break only moves by whole pages, so a rare misordering moves bytes
 * between mapped and unmapped, never invents them. */
int pymem_exit_brk(struct pymem_sys_exit *ctx)
{
	u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct pyb_mem_totals *t;
	u64 now = page_round((u64)ctx->ret), last;

	if (!procs.lookup(&pid))
		return 0;
	t = totals_of(pid);
	if (!t)
		return 0;
	last = t->brk_last;
	t->brk_last = now;
	if (!last) {
		__sync_fetch_and_add(&t->brk_unknown, 1);
		return 0;
	}
	if (now == last)
		return 0;
	__sync_fetch_and_add(&t->map_calls, 1);
	if (now > last)
		__sync_fetch_and_add(&t->mapped, now - last);
	else
		__sync_fetch_and_add(&t->unmapped, last - now);
	return 0;
}
