/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Native user stacks unwound in BPF, with or without frame pointers
 * (lib/abi/native_abi.h): for each frame, the trie of the process's mapped
 * files gives the file of its address; a file that keeps frame pointers is
 * walked by its rbp chain, any other by its unwind table (rows user space
 * built from .eh_frame), binary-searched for the row of the address. The
 * walk stops, with its reason, where neither says where the caller is:
 * never a guess.
 *
 * Registers come from the event (a sample or uprobe in user mode) or, in
 * the kernel, from the task's saved user registers (bpf_task_pt_regs).
 *
 * With PYB_PYTHON_ROOT (the default; 0 with --startup-frames), a walk
 * stops at the outermost eval-loop run of the Python stack walked just
 * before it: the frames below it (the interpreter's start-up, a thread's
 * bootstrap) are the ones the report leaves out, often a third of them.
 *
 * Compile-time parameters (-D): UNWIND_ROWS, NATIVE_STACKS_SIZE,
 * PYB_PYTHON_ROOT.
 */
#ifndef PYBPF_NATIVE_UNWIND_BPF_H
#define PYBPF_NATIVE_UNWIND_BPF_H

#include "../lib/abi/native_abi.h"
#include "maps_gen.bpf.h"

#ifndef USER_STACKS
#define USER_STACKS 1
#endif
#ifndef PYB_PYTHON_ROOT
#define PYB_PYTHON_ROOT 1
#endif
/* 8-byte rows: 8 MiB of kernel memory, enough for hundreds of libraries
 * (libpython ~60K rows, libc ~25K); one row when native stacks are off */
#ifndef UNWIND_ROWS
#if USER_STACKS
#define UNWIND_ROWS (1 << 20)
#else
#define UNWIND_ROWS 1
#endif
#endif
/* distinct native stacks: as many as kernel ones (--stack-storage-size) */
#ifndef NATIVE_STACKS_SIZE
#ifdef STACK_STORAGE_SIZE
#define NATIVE_STACKS_SIZE STACK_STORAGE_SIZE
#else
#define NATIVE_STACKS_SIZE 16384
#endif
#endif

BPF_ARRAY(unwind_rows, struct pyb_unwind_row, UNWIND_ROWS);
BPF_F_TABLE("lpm_trie", struct pyb_native_map_key, struct pyb_native_map, native_maps, 262144,
	    BPF_F_NO_PREALLOC);
BPF_F_TABLE("hash", u32, struct pyb_native_stack, native_stacks, NATIVE_STACKS_SIZE,
	    BPF_F_NO_PREALLOC);
struct pyb_uregs {
	u64 ip, sp, bp;
};

/* Rows found lately, per CPU (in the walk's scratch), by address: the same
 * few hundred call sites recur in every sample. An entry is a copy of the
 * row with the next row's address, so that a hit touches no part of the
 * 8 MiB table. It cannot go stale: user space appends a file's rows once
 * and never rewrites them while the programs run (lib/bpf/native_maps.c),
 * so a file's first row names its rows for the whole run. */
#define PYB_ROW_CACHE 512

struct pyb_row_memo {
	u32 first_row; /* the file's (struct pyb_native_map) */
	u32 next_pc;   /* the next row's pc, or 2^32 - 1 after the file's last */
	struct pyb_unwind_row row;
};

/* Bytes of a thread's stack read at once (pyb_stack_u64). */
#define PYB_STACK_WINDOW 4096
#define PYB_STACK_BELOW 64

/* Per-CPU room for a walk: more than the BPF stack can hold beside the
 * callers' frames. */
struct pyb_native_scratch {
	struct pyb_native_stack st;
	struct pyb_native_map_key mk;
	struct pyb_uregs r;
	struct pyb_proc_event ev;
	struct pyb_count_key key; /* pyprofile: the sample's, counted at the end */
	u64 h;     /* hash of the frames so far */
	u32 pid;
	u32 done;  /* the walk is over (st.end says why) */
	u32 evals_left; /* eval-loop frames until the outermost, or 0: walk on */
	/* the process's eval loop (struct pyb_proc's), copied at the walk's
	 * start: each program of the chain would otherwise look it up again */
	u64 eval_start[PYB_EVAL_RANGES], eval_end[PYB_EVAL_RANGES];
	struct pyb_row_memo row_cache[PYB_ROW_CACHE]; /* rows by hashed address */
	/* the mapping of the walk's last frame (a copy of its trie value):
	 * callers are mostly in the same file as their callees */
	struct pyb_native_map map;
	/* pyb_stack_u64's copy of the stack: stack_len bytes from stack_at */
	u64 stack_at, stack_len;
	u64 stack[PYB_STACK_WINDOW / 8];
	u64 began; /* PYB_NOW() when the walk began (PYB_PHASES) */
	u32 gated; /* mappings changed since user space read them: leaf only */
};
BPF_PERCPU_ARRAY(native_scratch, struct pyb_native_scratch, 1);

/*
 * Mappings found lately in the trie, per CPU, by process and 2 MiB region
 * of address. A trie look-up walks a node per level, each cold when the
 * CPU has run other processes since (1.6 us a look-up over a hundred
 * processes); a hit reads one entry. An entry stands for the trie's answer
 * while its process's mapping generation is the one it was found in: a
 * walk reads the trie only when the generation user space last read is
 * the process's current one (gated otherwise), any change that could
 * remove or replace a mapping moves it, and a registration begins at a
 * generation 2^20 past the last one's (lib/bpf/native_maps.c): the same
 * pid and generation come back only 4,096 registrations later, the bound
 * the stored stacks' generations already live with.
 */
#define PYB_MAP_CACHE 2048 /* 96 KiB a CPU: a hundred processes' few files each */
struct pyb_map_memo {
	u32 pid, gen;
	struct pyb_native_map map;
};
BPF_PERCPU_ARRAY(map_cache, struct pyb_map_memo, PYB_MAP_CACHE);
/* walks per way they ended (enum pyb_native_end), per process */
BPF_HASH(native_ends, u64, u64, 16384);

/* Where a file's rows can be: 2^20 rows searched in 20 halvings. */
#define PYB_ROW_SEARCH_STEPS 20

/* The row of file m for address pc (as linked): the last with row.pc <= pc;
 * the CPU's cache of recent rows first, else a binary search. */
static __always_inline struct pyb_unwind_row *pyb_find_row(struct pyb_native_scratch *ns,
							   const struct pyb_native_map *m, u64 pc)
{
	u32 lo = 0, n = m->nrows, first = m->first_row, idx, next;
	u32 slot = (u32)((pc ^ ((u64)first << 7)) * 0x9e3779b1U) >> 23 & (PYB_ROW_CACHE - 1);
	struct pyb_row_memo *c = &ns->row_cache[slot];
	struct pyb_unwind_row *r, *after;

	if (!n)
		return NULL;
	if (c->first_row == first && c->row.pc <= pc && pc < c->next_pc)
		return &c->row;
	PYB_PHASE(PYB_PHASE_ROW_SEARCHES, 1);
	for (int k = 0; k < PYB_ROW_SEARCH_STEPS; k++) {
		u32 half = n >> 1;

		idx = first + lo + half;
		r = unwind_rows.lookup(&idx);
		if (!r)
			return NULL;
		/* branchless, so that the verifier follows one path */
		lo += half & -(u32)(r->pc <= pc);
		n -= half;
	}
	idx = first + lo;
	r = unwind_rows.lookup(&idx);
	if (!r || r->pc > pc)
		return NULL;
	next = idx + 1;
	after = next - first < m->nrows ? unwind_rows.lookup(&next) : NULL;
	c->first_row = first;
	c->next_pc = after ? after->pc : 0xffffffffU;
	c->row = *r;
	return &c->row;
}

static __always_inline int pyb_read_user_u64(u64 addr, u64 *v)
{
	return bpf_probe_read_user(v, sizeof(*v), (void *)addr);
}

/*
 * The 8 bytes of the walked thread's stack at addr. A read of user memory
 * costs several times what copying a few hundred bytes does, and a caller's
 * frame is above its callee's: a word is read with the rest of its page
 * above it (up to PYB_STACK_WINDOW bytes), and the words the walk asks for
 * next are taken from that copy while they are in it. The window never
 * leaves addr's page, so it reads only where a read of the word would, and
 * it holds the stack as it was in this walk (the thread is stopped).
 */
static __always_inline int pyb_stack_u64(struct pyb_native_scratch *ns, u64 addr, u64 *v)
{
	u64 rel = addr - ns->stack_at;

	if (addr & 7)
		return pyb_read_user_u64(addr, v);
	if (rel >= PYB_STACK_WINDOW || rel + 8 > ns->stack_len) {
		/* from a few words below (a frame's saved registers are
		 * below its return address) to the end of the page */
		u64 at = addr - PYB_STACK_BELOW, page = addr & ~4095ULL, len;

		if ((s64)(at - page) < 0) /* user addresses are below 2^63 */
			at = page;
		len = page + 4096 - at; /* 8 to 4096, aligned */
		if (len > PYB_STACK_WINDOW)
			len = PYB_STACK_WINDOW;
		ns->stack_len = 0;
		u64 t = PYB_NOW();

		if (bpf_probe_read_user(ns->stack, len, (void *)at))
			return -1;
		PYB_PHASE(PYB_PHASE_STACK_READS, 1);
		PYB_PHASE(PYB_PHASE_STACK_READ_NS, PYB_NOW() - t);
		ns->stack_at = at;
		ns->stack_len = len;
		rel = addr - at;
		if (rel >= PYB_STACK_WINDOW) /* never: for the verifier */
			return -1;
	}
	*v = ns->stack[(rel >> 3) & (PYB_STACK_WINDOW / 8 - 1)];
	return 0;
}

static __always_inline void pyb_native_end_count(u32 pid, u32 why)
{
	u64 key = ((u64)pid << 32) | why, one = 1, *n = native_ends.lookup(&key);

	if (n)
		__sync_fetch_and_add(n, 1);
	else
		native_ends.update(&key, &one);
}

/*
 * One step: from the frame at r (code of file m) to its caller. Returns a
 * reason the walk ends (PYB_NATIVE_COMPLETE: the caller is in r), or -1
 * to go on.
 */
static __always_inline int pyb_native_step(struct pyb_native_scratch *ns,
					   const struct pyb_native_map *m, struct pyb_uregs *r,
					   bool leaf)
{
	u64 cfa, ra, bp = r->bp;
	/* a caller's address is the return address: the call is just before */
	u64 pc = r->ip - m->bias - (leaf ? 0 : 1);

	if ((m->flags & PYB_NMAP_FP) && (!leaf || !m->nrows)) {
		/* the leaf may be in its prologue: its row says, if it has one */
		if (!r->bp)
			return PYB_NATIVE_COMPLETE;
		if (pyb_stack_u64(ns, r->bp, &bp) || pyb_stack_u64(ns, r->bp + 8, &ra))
			return PYB_NATIVE_UNREADABLE;
		cfa = r->bp + 16;
	} else {
		struct pyb_unwind_row *row = pyb_find_row(ns, m, pc);
		u32 kind = row ? row->kind : PYB_CFA_NONE;

		if (kind == PYB_CFA_NONE)
			return PYB_NATIVE_NO_INFO;
		if (kind == PYB_CFA_END)
			return PYB_NATIVE_COMPLETE;
		if (kind == PYB_CFA_SIGNAL) {
			/* struct ucontext at rsp: its mcontext's gregs at 40,
			 * rbp the 11th, rsp the 16th, rip the 17th */
			if (pyb_stack_u64(ns, r->sp + 40 + 10 * 8, &bp) ||
			    pyb_stack_u64(ns, r->sp + 40 + 15 * 8, &cfa) ||
			    pyb_stack_u64(ns, r->sp + 40 + 16 * 8, &ra))
				return PYB_NATIVE_UNREADABLE;
			r->ip = ra;
			r->sp = cfa;
			r->bp = bp;
			return ra ? -1 : PYB_NATIVE_COMPLETE;
		}
		if (kind == PYB_CFA_RBP)
			cfa = r->bp + (s64)row->cfa_off8 * 8;
		else
			cfa = r->sp + (s64)row->cfa_off8 * 8;
		if (kind == PYB_CFA_PLT && (r->ip & 15) >= (u64)(s64)row->rbp_off)
			cfa += 8;
		if (pyb_stack_u64(ns, cfa - 8, &ra))
			return PYB_NATIVE_UNREADABLE;
		if (kind != PYB_CFA_PLT && row->rbp_off &&
		    pyb_stack_u64(ns, cfa + (s64)row->rbp_off * 8, &bp))
			return PYB_NATIVE_UNREADABLE;
	}
	/* callers' frames are above their callees' */
	if (cfa <= r->sp)
		return PYB_NATIVE_BAD_FRAME;
	r->ip = ra;
	r->sp = cfa;
	r->bp = bp;
	return ra ? -1 : PYB_NATIVE_COMPLETE;
}

/* Frames walked by one program of a chain (the verifier follows each
 * frame's code some 8K instructions' worth: a walk is a chain of tail
 * calls, up to 33, each doing a batch). */
#define PYB_NATIVE_BATCH 4

/* Begins a walk of the current thread's user stack from (ip, sp, bp) in
 * ns, the per-CPU scratch the chain's programs go on from. */
static __always_inline void pyb_native_begin_in(struct pyb_native_scratch *ns, u32 pid, u64 ip,
						u64 sp, u64 bp)
{
	ns->r.ip = ip;
	ns->r.sp = sp;
	ns->r.bp = bp;
	ns->mk.prefixlen = 96;
	ns->mk.pid = pid;
	ns->pid = pid;
	ns->st.len = 0;
	ns->st.end = PYB_NATIVE_TOO_DEEP;
	ns->h = 0xcbf29ce484222325ULL;
	ns->done = 0;
	ns->map.end = 0; /* none yet */
	ns->stack_len = 0;
	ns->began = PYB_NOW();
}

/* The same, looking the scratch up; NULL if there is none. */
static __always_inline struct pyb_native_scratch *pyb_native_begin(u32 pid, u64 ip, u64 sp, u64 bp)
{
	u32 zero = 0;
	struct pyb_native_scratch *ns = native_scratch.lookup(&zero);

	if (ns)
		pyb_native_begin_in(ns, pid, ip, sp, bp);
	return ns;
}

/* The same from the current task's user registers, saved when it entered
 * the kernel (pt_regs is laid out by the x86-64 entry code, a fixed ABI).
 * bp to sp in one read, into the stack copy (empty until the walk reads
 * the stack): a read's entry costs more than its 128 bytes. */
#define PYB_REGS_AT offsetof(struct pt_regs, bp)
#define PYB_REGS_SPAN (offsetof(struct pt_regs, sp) + 8 - PYB_REGS_AT)
#define PYB_REGS_WORD(field) ((offsetof(struct pt_regs, field) - PYB_REGS_AT) / 8)
_Static_assert(PYB_REGS_SPAN <= PYB_STACK_WINDOW && PYB_REGS_AT % 8 == 0,
	       "pt_regs' bp..sp fits the stack copy, by words");
static __always_inline struct pyb_native_scratch *pyb_native_begin_task(u32 pid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	u32 zero = 0;
	struct pyb_native_scratch *ns = native_scratch.lookup(&zero);

	if (!ns)
		return NULL;
	if (bpf_probe_read_kernel(ns->stack, PYB_REGS_SPAN, (char *)regs + PYB_REGS_AT)) {
		pyb_native_end_count(pid, PYB_NATIVE_NO_REGS);
		return NULL;
	}
	pyb_native_begin_in(ns, pid, ns->stack[PYB_REGS_WORD(ip)], ns->stack[PYB_REGS_WORD(sp)],
			    ns->stack[PYB_REGS_WORD(bp)]);
	return ns;
}

/*
 * The eval-loop runs of the Python stack walked just before on this CPU
 * (this thread's, in pyb_scratch_map): its entry frames, or from 3.12 its
 * shims; 0 if it is not whole or there is none (pyb_current_stack empties
 * it then). Where the kernel has may_goto the walk counted them as it
 * stored its frames; else they are counted here, in the native walk's
 * first step, a program of its own: the entry program's BPF stack is full.
 */
static __always_inline u32 pyb_python_evals(u32 pid)
{
	u32 zero = 0, n = 0, len;
	struct pyb_scratch *s = pyb_scratch_map.lookup(&zero);

	if (!s || s->stack.pid != pid ||
	    (s->stack.flags & (PYB_STACK_TRUNCATED | PYB_STACK_READ_ERROR)))
		return 0;
	len = s->stack.len;
#ifdef PYB_MAY_GOTO
	/* counted as it walked (each frame's flags as below) */
	return len ? (u32)s->walk_evals : 0;
#endif
#pragma clang loop unroll(disable)
	for (u32 i = 0; i < PYB_MAX_FRAMES; i++) {
		u32 j = i;

		if (i >= len)
			break;
		/* a compare bounds the index for the verifier (a division,
		 * i % PYB_MAX_FRAMES, costs tens of cycles a turn); opaque, so
		 * that the compiler keeps indexing by it */
		PYB_OPAQUE(j);
		if (j >= PYB_MAX_FRAMES)
			break;
		n += pyb_frame_begins_eval(s->stack.frames[j].flags);
	}
	return n;
}

/* 1 if ip is in the process's eval loop, else 0 (user addresses are below
 * 2^63: a difference's sign bit is the compare, without a branch). */
static __always_inline u32 pyb_in_eval(const struct pyb_native_scratch *ns, u64 ip)
{
	u64 in = 0;

	for (int k = 0; k < PYB_EVAL_RANGES; k++)
		in |= ((ip - ns->eval_end[k]) >> 63) & ~((ip - ns->eval_start[k]) >> 63);
	return (u32)(in & 1);
}

/* The mapping of the walked process that holds ip, copied to ns->map;
 * NULL if none. The CPU's cache first (struct pyb_map_memo), else the
 * trie. Only for a walk that is not gated: st.gen is then the generation
 * the trie describes. */
static __always_inline struct pyb_native_map *pyb_find_map(struct pyb_native_scratch *ns, u64 ip)
{
	u32 pid = ns->pid, gen = ns->st.gen;
	u32 slot = (u32)(((ip >> 21) ^ ((u64)pid << 20)) * 0x9e3779b97f4a7c15ULL >> 53) &
		   (PYB_MAP_CACHE - 1);
	struct pyb_map_memo *c = map_cache.lookup(&slot);
	struct pyb_native_map *m;
	u64 be;

	if (c && c->pid == pid && c->gen == gen && c->map.start <= ip && ip < c->map.end) {
		ns->map = c->map;
		return &ns->map;
	}
	be = __builtin_bswap64(ip);
	__builtin_memcpy(ns->mk.addr, &be, sizeof(be));
	m = native_maps.lookup(&ns->mk);
	PYB_PHASE(PYB_PHASE_TRIE_LOOKUPS, 1);
	if (!m)
		return NULL;
	ns->map = *m;
	if (c) {
		c->pid = pid;
		c->gen = gen;
		c->map = *m;
	}
	return &ns->map;
}

/*
 * Up to PYB_NATIVE_BATCH more frames. A registered process whose walk
 * meets an address in no known file is marked for user space to read its
 * mappings again (a library loaded since), once until it has. The reason
 * a walk ends is kept in memory, not a register, so that every way out
 * reaches the code after the loop in one state.
 */
static __always_inline void pyb_native_batch(void *ctx, struct pyb_native_scratch *ns)
{
	struct pyb_native_stack *st = &ns->st;
	struct pyb_uregs *r = &ns->r;

	/* The generation the stack is named by (here, in the chain, not in
	 * the tools' entry programs, whose stacks are full); past the leaf,
	 * the trie describes only the generation user space last read. */
	if (st->len == 0) {
		struct pyb_maps_gen *g = maps_gen.lookup(&ns->pid);
		struct pyb_maps_sync *s = maps_sync.lookup(&ns->pid);

		st->gen = g ? g->gen : 0;
		ns->gated = !g || !s || g->busy || s->gen != st->gen;
	}

	for (u32 b = 0; b < PYB_NATIVE_BATCH; b++) {
		struct pyb_native_map *m;
		u32 i = st->len;
		int end;

		if (i >= PYB_MAX_NATIVE) {
			st->end = PYB_NATIVE_TOO_DEEP;
			ns->done = 1;
			return;
		}
		st->ips[i] = r->ip;
		st->len = i + 1;
		ns->h = (ns->h ^ r->ip) * 0x100000001b3ULL;
		if (ns->gated) {
			st->end = PYB_NATIVE_MAPS_CHANGED;
			ns->done = 1;
			return;
		}
		if (PYB_PYTHON_ROOT && ns->evals_left) {
			ns->evals_left -= pyb_in_eval(ns, r->ip);
			if (!ns->evals_left) {
				st->end = PYB_NATIVE_PYTHON_ROOT;
				ns->done = 1;
				return;
			}
		}
		m = &ns->map;
		if (r->ip < m->start || r->ip >= m->end)
			m = pyb_find_map(ns, r->ip);
		if (!m) {
			struct pyb_proc *proc = procs.lookup(&ns->pid);

			st->end = PYB_NATIVE_NO_MAPPING;
			ns->done = 1;
			/* two CPUs may both say so: harmless */
			if (proc && !(proc->flags & PYB_PROC_MAPS_STALE)) {
				proc->flags |= PYB_PROC_MAPS_STALE;
				__builtin_memset(&ns->ev, 0, sizeof(ns->ev));
				ns->ev.pid = ns->pid;
				ns->ev.kind = PYB_EVENT_NEW_MAPPING;
				stack_events.perf_submit(ctx, &ns->ev, sizeof(ns->ev));
			}
			return;
		}
		end = pyb_native_step(ns, m, r, i == 0);
		if (end >= 0) {
			st->end = (u32)end;
			ns->done = 1;
			return;
		}
	}
}

/* Stores stack st, of hash h, in native_stacks; its id there, or -1. */
static __always_inline s32 pyb_native_store_hashed(struct pyb_native_stack *st, u64 h)
{
	/* ids are 31 bits: a taken one with another stack is passed over */
	for (u32 probe = 0, id = (u32)h & 0x7fffffff; probe < 4;
	     probe++, id = (id + 1) & 0x7fffffff) {
		struct pyb_native_stack *old = native_stacks.lookup(&id);

		if (old) {
			if (old->hash == h)
				return (s32)id;
			continue;
		}
		PYB_PHASE(PYB_PHASE_NEW_NATIVE, 1);
		if (native_stacks.update(&id, st) < 0)
			break;
		return (s32)id;
	}
	pyb_stat(PYB_STAT_NATIVE_MAP_FULL);
	return -1;
}

/* Stores the walked stack in native_stacks; its id there, or -1. */
static __always_inline s32 pyb_native_store(struct pyb_native_scratch *ns)
{
	struct pyb_native_stack *st = &ns->st;
	u64 h, t = PYB_NOW();
	s32 id;

	pyb_native_end_count(ns->pid, st->end);
	h = (ns->h ^ ((u64)st->len << 8 | st->end)) * 0x100000001b3ULL;
	h = (h ^ st->gen) * 0x100000001b3ULL;
	st->hash = h;
	id = pyb_native_store_hashed(st, h);
	PYB_PHASE(PYB_PHASE_NATIVE_STORE_NS, PYB_NOW() - t);
	return id;
}

/*
 * One program of a chain: a batch of the walk the per-CPU scratch holds.
 * A chain is a tool's program NAME, in the tool's source because libbcc
 * rewrites tail calls only outside macros:
 *
 *	BPF_PROG_ARRAY(NAME_tail, 1);   (user space puts NAME in it)
 *	int NAME(void *ctx)
 *	{
 *		struct pyb_native_scratch *ns = pyb_native_chain_step(ctx);
 *
 *		if (!ns)
 *			return 0;
 *		if (!ns->done)
 *			NAME_tail.call(ctx, 0);
 *		FINISH(ctx, ns, pyb_native_store(ns));   (done, or out of calls)
 *		return 0;
 *	}
 *
 * Its entry is the tool's program that began the walk and tail-calls
 * NAME; if the chain is not loaded (native stacks off), the entry
 * finishes without a native stack.
 */
static __always_inline struct pyb_native_scratch *pyb_native_chain_step(void *ctx)
{
	u32 zero = 0;
	struct pyb_native_scratch *ns = native_scratch.lookup(&zero);

	if (!ns)
		return NULL;
	if (PYB_PYTHON_ROOT && !ns->st.len) {
		struct pyb_proc *proc = procs.lookup(&ns->pid);

		ns->evals_left = 0; /* an unregistered process is walked to its end */
		if (proc) {
			ns->evals_left = pyb_python_evals(ns->pid);
			__builtin_memcpy(ns->eval_start, proc->eval_start, sizeof(ns->eval_start));
			__builtin_memcpy(ns->eval_end, proc->eval_end, sizeof(ns->eval_end));
		}
	}
	pyb_native_batch(ctx, ns);
	return ns;
}

#endif
