/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pymem --alloc: libc allocations still outstanding, by Python + native
 * stack. Uprobes on the libc each target has mapped (attached per process
 * by user space, so no other process traps): an allocating call's entry
 * notes its size per thread, its return records the address with the size
 * and the stack (walked there: the return address is the caller's code),
 * and adds the size to that stack's count in `counts`; free and munmap take
 * the address's size back off the stack that allocated it. `counts` thus
 * holds the bytes still outstanding per stack at any time.
 *
 * One program per way a call passes its size (malloc, valloc and pvalloc
 * take it first; memalign and aligned_alloc second), one for the returns
 * of all of them. An anonymous mmap made inside an allocating call
 * (glibc's malloc maps large blocks itself) is not counted twice: it is
 * skipped while the thread is inside one.
 *
 * Compile-time parameters (-D): PYSTACKS_SIZE, COUNTS_SIZE, ALLOCS_SIZE,
 * USER_STACKS, MIN_SIZE, MAX_SIZE, SAMPLE_EVERY (1: every allocation; N: each
 * with probability 1/N, its size weighted by N).
 */
#include <uapi/linux/ptrace.h>

#include "pystacks.bpf.h"

enum alloc_call_kind { CALL_PLAIN, CALL_REALLOC, CALL_MEMALIGN, CALL_MMAP };
enum { SKIP_NONE, SKIP_FILTERED, SKIP_SAMPLED };

/* The call in progress on a thread, from entry to return. */
struct alloc_call {
	u64 size;
	u64 arg;  /* realloc: the old block; posix_memalign: where the block goes */
	u32 kind; /* enum alloc_call_kind */
	u32 skip; /* SKIP_*: not recorded (only the old block of a realloc counts) */
};

/* An outstanding allocation: its (weighted) size and the stack it went to. */
struct alloc_rec {
	u64 size;
	struct pyb_count_key key;
};

/* Between a return and the end of its native walk (same CPU: tail calls). */
struct alloc_pending {
	u64 addr;
	struct alloc_rec rec;
};

/* Indexes of alloc_stats (user space reads the same numbers). */
enum {
	ALLOC_ST_CALLS,     /* allocating calls that returned a block */
	ALLOC_ST_RECORDED,  /* of them recorded (passed -z/-Z and sampling) */
	ALLOC_ST_BYTES,     /* bytes of the recorded ones (weighted) */
	ALLOC_ST_FREES,     /* free/munmap of a recorded block */
	ALLOC_ST_FREED,     /* their bytes (weighted) */
	ALLOC_ST_UNMATCHED, /* free/munmap of a block not recorded (made before the run, filtered) */
	ALLOC_ST_LOST,      /* blocks not recorded: the allocs map was full */
	ALLOC_ST_REUSED,    /* a block returned again without a free seen: the old one dropped */
	ALLOC_ST_FILTERED,  /* outside -z/-Z */
	ALLOC_ST_SAMPLED_OUT, /* not drawn by the sampling (SAMPLE_EVERY) */
	ALLOC_ST_FAILED,    /* calls that returned no block */
	ALLOC_ST_MAX,
};

BPF_HASH(calls, u32, struct alloc_call, 65536);
BPF_F_TABLE("hash", u64, struct alloc_rec, allocs, ALLOCS_SIZE, BPF_F_NO_PREALLOC);
BPF_PERCPU_ARRAY(alloc_pending_map, struct alloc_pending, 1);
BPF_PERCPU_ARRAY(alloc_stats, u64, ALLOC_ST_MAX);
/* When the run ended (user space sets it): later calls are ignored. The
 * probes are closed one by one after it, which takes a while; meanwhile
 * frees seen without their allocations would empty the stacks. */
BPF_ARRAY(run_end, u64, 1);

static __always_inline bool run_over(void)
{
	u32 zero = 0;
	u64 *end = run_end.lookup(&zero);

	return end && *end && bpf_ktime_get_ns() > *end;
}

static __always_inline void alloc_stat(u32 i, u64 v)
{
	u64 *c = alloc_stats.lookup(&i);

	if (c)
		*c += v;
}

/* The entry of an allocating call of a registered process. */
static __always_inline int note_call(u64 size, u64 arg, u32 kind)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct alloc_call c = { .size = size, .arg = arg, .kind = kind };

	if (!procs.lookup(&pid) || run_over())
		return 0;
	if (size < MIN_SIZE || size > MAX_SIZE)
		c.skip = SKIP_FILTERED;
	else if (SAMPLE_EVERY > 1 && bpf_get_prandom_u32() % SAMPLE_EVERY)
		c.skip = SKIP_SAMPLED;
	calls.update(&tid, &c);
	return 0;
}

int alloc_enter_size1(struct pt_regs *ctx)
{
	return note_call(PT_REGS_PARM1(ctx), 0, CALL_PLAIN);
}

int alloc_enter_size2(struct pt_regs *ctx)
{
	return note_call(PT_REGS_PARM2(ctx), 0, CALL_PLAIN);
}

int alloc_enter_calloc(struct pt_regs *ctx)
{
	u64 n = PT_REGS_PARM1(ctx), each = PT_REGS_PARM2(ctx);

	/* a product that could overflow (one factor of 2^32 or more): a
	 * calloc we cannot size, not recorded (libc refuses those that do) */
	if ((n | each) >> 32)
		return 0;
	return note_call(n * each, 0, CALL_PLAIN);
}

int alloc_enter_realloc(struct pt_regs *ctx)
{
	return note_call(PT_REGS_PARM2(ctx), PT_REGS_PARM1(ctx), CALL_REALLOC);
}

int alloc_enter_posix_memalign(struct pt_regs *ctx)
{
	return note_call(PT_REGS_PARM3(ctx), PT_REGS_PARM1(ctx), CALL_MEMALIGN);
}

#define PYB_MAP_ANONYMOUS 0x20

/* An anonymous mapping asked of libc, unless inside an allocating call
 * (that call's block is recorded instead). File mappings are not
 * allocations: not counted. */
int alloc_enter_mmap(struct pt_regs *ctx)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();

	if (!(PT_REGS_PARM4(ctx) & PYB_MAP_ANONYMOUS) || calls.lookup(&tid))
		return 0;
	return note_call(PT_REGS_PARM2(ctx), 0, CALL_MMAP);
}

/* The block at addr is gone: its bytes come off the stack that made it. */
static __always_inline void forget_block(u64 addr)
{
	struct alloc_rec *r = allocs.lookup(&addr);
	u64 size, *total;

	if (!r) {
		alloc_stat(ALLOC_ST_UNMATCHED, 1);
		return;
	}
	size = r->size;
	/* its stack's count found before the record goes (no copy of the
	 * key on the BPF stack, which the walk fills) */
	total = counts.lookup(&r->key);
	if (allocs.delete(&addr) < 0)
		return; /* another CPU forgot it first */
	if (total)
		__sync_fetch_and_add(total, -size);
	alloc_stat(ALLOC_ST_FREES, 1);
	alloc_stat(ALLOC_ST_FREED, size);
}

/* free(ptr) and munmap(addr, len): a block recorded at that address. */
int alloc_enter_free(struct pt_regs *ctx)
{
	u64 addr = PT_REGS_PARM1(ctx);
	u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (addr && procs.lookup(&pid) && !run_over())
		forget_block(addr);
	return 0;
}

/* Records p->rec at p->addr, and adds its size to its stack's count. */
static __always_inline void record_block(struct alloc_pending *p)
{
	if (allocs.lookup(&p->addr)) {
		/* returned again, its free not seen (made in a way not probed) */
		alloc_stat(ALLOC_ST_REUSED, 1);
		forget_block(p->addr);
	}
	if (allocs.update(&p->addr, &p->rec) < 0) {
		alloc_stat(ALLOC_ST_LOST, 1);
		return;
	}
	alloc_stat(ALLOC_ST_RECORDED, 1);
	alloc_stat(ALLOC_ST_BYTES, p->rec.size);
	pyb_count_add(&p->rec.key, p->rec.size);
}

static __always_inline void alloc_finish(struct pyb_native_scratch *ns, s32 id)
{
	u32 zero = 0;
	struct alloc_pending *p = alloc_pending_map.lookup(&zero);

	if (!p)
		return;
	__builtin_memcpy(&p->rec.key, &ns->key, sizeof(p->rec.key));
	p->rec.key.user_stack = id;
	record_block(p);
}
BPF_PROG_ARRAY(native_walk_alloc_tail, 1);
int native_walk_alloc(void *ctx)
{
	struct pyb_native_scratch *ns = pyb_native_chain_step(ctx);

	if (!ns)
		return 0;
	if (!ns->done)
		native_walk_alloc_tail.call(ctx, 0);
	/* done, or out of tail calls */
	alloc_finish(ns, pyb_native_store(ns));
	return 0;
}

/* The return of any allocating call: the block it gave. */
int alloc_return(struct pt_regs *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id, zero = 0;
	struct alloc_call *cp = calls.lookup(&tid);
	struct alloc_call c;
	struct alloc_pending *p;
	struct pyb_scratch *s;
	struct pyb_layout *L;
	struct pyb_proc *proc;
	u64 ret = PT_REGS_RC(ctx), addr = ret;

	if (!cp)
		return 0;
	c = *cp;
	calls.delete(&tid);
	if (run_over())
		return 0;
	if (c.kind == CALL_MEMALIGN) {
		addr = 0; /* returns an error number; the block is at *arg */
		if (ret == 0 && bpf_probe_read_user(&addr, sizeof(addr), (void *)c.arg) < 0)
			addr = 0;
	} else if (c.kind == CALL_MMAP && ret == ~0ULL) {
		addr = 0; /* MAP_FAILED */
	}
	/* realloc: the old block is gone once a new one is given (or size 0
	 * freed it) */
	if (c.kind == CALL_REALLOC && c.arg && (addr || !c.size))
		forget_block(c.arg);
	if (!addr) {
		if (c.size)
			alloc_stat(ALLOC_ST_FAILED, 1);
		return 0;
	}
	alloc_stat(ALLOC_ST_CALLS, 1);
	if (c.skip) {
		alloc_stat(c.skip == SKIP_FILTERED ? ALLOC_ST_FILTERED : ALLOC_ST_SAMPLED_OUT, 1);
		return 0;
	}
	proc = pyb_target(pid, &L, &s);
	p = alloc_pending_map.lookup(&zero);
	if (!proc || !p)
		return 0;
	p->addr = addr;
	p->rec.size = c.size * SAMPLE_EVERY;
	__builtin_memset(&p->rec.key, 0, sizeof(p->rec.key));
	p->rec.key.pid = pid;
	p->rec.key.tid = tid;
	p->rec.key.kind = PYB_KIND_SAMPLE;
	p->rec.key.user_stack = -1;
	p->rec.key.kernel_stack = -1;
	bpf_get_current_comm(&p->rec.key.comm, sizeof(p->rec.key.comm));
	pyb_stat(PYB_STAT_SAMPLES);
	p->rec.key.pystack = pyb_current_stack(ctx, proc, L, s, pid, tid);
	if (USER_STACKS && (proc->flags & PYB_PROC_NATIVE_STACKS)) {
		struct pyb_native_scratch *ns = pyb_native_begin(pid, ctx->ip, ctx->sp, ctx->bp);

		if (ns) {
			__builtin_memcpy(&ns->key, &p->rec.key, sizeof(ns->key));
			native_walk_alloc_tail.call(ctx, 0);
		}
	}
	/* no native stack wanted, or the chain is not loaded */
	record_block(p);
	return 0;
}
