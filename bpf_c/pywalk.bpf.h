/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python stack walking in BPF, shared by every tool. Reads only user memory
 * of the current task (bpf_probe_read_user) with offsets user space checked
 * against that very process; never reads kernel structs.
 *
 * Cost per frame: one user-memory read of the frame struct, then up to
 * five small ones for the code object's identity (PYB_CODE_IDENT): its
 * name and file pointers, and each string's length, hash and tail. The
 * address alone is not enough: a freed code object's address (and its
 * strings') is taken by the next one of the same size. User space names
 * code objects by (address, identity).
 */

#include "py_abi.h"

BPF_HASH(procs, u32, struct pyb_proc, 4096);
BPF_ARRAY(layouts, struct pyb_layout, PYB_MAX_LAYOUTS);
/* host tid -> PyThreadState*, a cache that BPF fills as it finds threads
 * and user space fills for processes with many threads (py_registry.c);
 * every entry is checked before use. LRU: threads come and go. */
BPF_TABLE("lru_hash", u32, u64, tstates, 65536);

struct pyb_scratch {
	struct pyb_stack stack;
	u64 frame[16]; /* one frame struct, read whole, as aligned words */
};
BPF_PERCPU_ARRAY(pyb_scratch_map, struct pyb_scratch, 1);
BPF_PERCPU_ARRAY(stats, u64, PYB_STAT_MAX);

/* Frame fields sit below 128 bytes in every layout: word index masked to
 * 0..15 keeps the verifier sure reads stay inside the buffer. */
#define WORD(off) (((u32)(off) >> 3) & 15)

static __always_inline void pyb_stat(int which)
{
	u64 *v = stats.lookup(&which);

	if (v)
		(*v)++;
}

static __always_inline u64 pyb_read_u64(u64 addr)
{
	u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr) < 0)
		return 0;
	return v;
}

static __always_inline s32 pyb_read_s32(u64 addr)
{
	s32 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr) < 0)
		return 0;
	return v;
}

/* The thread id the interpreter stored for a thread state. */
static __always_inline u32 pyb_tstate_tid(struct pyb_proc *proc, struct pyb_layout *L, u64 ts)
{
	if (L->tstate_native_thread_id >= 0)
		return (u32)pyb_read_u64(ts + L->tstate_native_thread_id);
	/* 3.8-3.10: pthread_self(), then the tid inside glibc's struct pthread */
	u64 pthread = pyb_read_u64(ts + L->tstate_thread_id);

	if (!pthread)
		return 0;
	return (u32)pyb_read_s32(pthread + proc->pthread_tid_offset);
}

/* The current thread's PyThreadState, or 0. */
static __always_inline u64 pyb_find_tstate(struct pyb_proc *proc, struct pyb_layout *L, u32 host_tid)
{
	u32 tid = host_tid;

	if (proc->flags & PYB_PROC_OTHER_PIDNS) {
		struct bpf_pidns_info ns = {};

		if (bpf_get_ns_current_pid_tgid(proc->pidns_dev, proc->pidns_ino, &ns, sizeof(ns)))
			return 0;
		tid = ns.pid;
	}
	u64 *cached = tstates.lookup(&host_tid);

	if (cached) {
		u64 ts = *cached;

		if (ts && pyb_tstate_tid(proc, L, ts) == tid)
			return ts;
		tstates.delete(&host_tid);
	}
	u64 interp = pyb_read_u64(proc->runtime_addr + L->runtime_interpreters_head);
	u64 ts = interp ? pyb_read_u64(interp + L->interp_threads_head) : 0;

	for (int i = 0; i < PYB_MAX_THREAD_SCAN; i++) {
		if (!ts)
			break;
		if (pyb_tstate_tid(proc, L, ts) == tid) {
			tstates.update(&host_tid, &ts);
			return ts;
		}
		ts = pyb_read_u64(ts + L->tstate_next);
	}
	return 0;
}

/* Hides a value's origin from the compiler, so that it cannot turn the
 * arithmetic below back into compares: each compare is a branch, and
 * branches in the frame loop multiply the verifier's states. */
#define PYB_OPAQUE(x) asm volatile("" : "+r"(x))

/* PYB_STR_IDENT of the str at ptr (see py_abi.h): length, hash and state
 * in one read (they follow each other), then its last 8 characters, kept
 * only if it is ASCII and 8 or more long. Reads that fail leave 0. */
static __always_inline u64 pyb_str_ident(struct pyb_layout *L, u64 ptr)
{
	u64 meta[3] = {}, tail = 0;

	bpf_probe_read_user(meta, sizeof(meta), (void *)(ptr + L->unicode_length));
	u64 len = meta[0], state = meta[2];

	bpf_probe_read_user(&tail, sizeof(tail), (void *)(ptr + L->unicode_ascii_size + len - 8));
	u64 ascii = state >> (L->str_ascii_bit & 63);
	u64 short_str = (len - 8) >> 63; /* 1 when len < 8 */

	PYB_OPAQUE(ascii);
	PYB_OPAQUE(short_str);
	tail &= 0 - ((ascii & 1) & (short_str ^ 1));
	return PYB_STR_IDENT(ptr, len, meta[1], tail);
}

/* PYB_CODE_IDENT of the code object at code. The name and file pointers
 * are picked out of the 24 bytes read with masks the layout holds (not an
 * index or a compare: see PYB_OPAQUE). */
static __always_inline u64 pyb_code_ident(struct pyb_layout *L, u64 code)
{
	u64 p[3] = {};

	bpf_probe_read_user(p, sizeof(p), (void *)(code + L->code_ptrs_at));
	u64 name = (p[0] & (u64)(s64)L->name_sel[0]) | (p[1] & (u64)(s64)L->name_sel[1]) |
		   (p[2] & (u64)(s64)L->name_sel[2]);
	u64 file = (p[0] & (u64)(s64)L->file_sel[0]) | (p[1] & (u64)(s64)L->file_sel[1]) |
		   (p[2] & (u64)(s64)L->file_sel[2]);

	return PYB_CODE_IDENT(pyb_str_ident(L, name), pyb_str_ident(L, file));
}

/*
 * Walks the Python frames of thread state ts into s->stack (innermost
 * first) and returns a hash of them (never 0).
 *
 * Written for the verifier: every layout field is read once before the
 * loop; the body branches only on "end of chain", "full" and "read
 * failed"; per-version differences are arithmetic, and interpreter shim
 * frames are stored (flagged) rather than skipped, so the frame count is
 * the loop counter and the verifier's states never fork per iteration.
 */
static __always_inline u64 pyb_walk(struct pyb_proc *proc, struct pyb_layout *L, u64 ts,
				    struct pyb_scratch *s, u32 pid)
{
	u64 hash = 0xcbf29ce484222325ULL ^ pid;
	u64 frame = pyb_read_u64(ts + L->tstate_frame);
	u64 cframe = frame;
	u32 span = L->frame_span & 127;
	u32 w_code = WORD(L->frame_code), w_prev = WORD(L->frame_previous);
	u32 w_instr = WORD(L->frame_instr), instr_shift = (L->frame_instr & 4) * 8;
	u32 owner_word = WORD(L->frame_owner), owner_shift = (L->frame_owner & 7) * 8;
	u32 entry_word = WORD(L->frame_is_entry), entry_shift = (L->frame_is_entry & 7) * 8;
	/* all-ones when the layout has the field / property, else zero */
	u64 has_entry = ~(u64)((s64)L->frame_is_entry >> 63);
	u64 owner_shim = L->owner_shim, has_shim = (u64)((s64)(0 - owner_shim) >> 63);
	u64 model = L->frame_model;
	u64 objects = (model - 1) >> 63; /* 1 for PYB_FRAMES_OBJECTS */
	u64 tag_mask = ~(u64)L->stackref_mask, adaptive = (u64)(s64)L->code_adaptive;
	u64 scale = L->lasti_scale;
	u32 n = 0;

	if (model == PYB_FRAMES_CFRAME)
		frame = cframe ? pyb_read_u64(cframe + L->cframe_current_frame) : 0;
	s->stack.pid = pid;
	for (n = 0; n < PYB_MAX_FRAMES; n++) {
		if (!frame)
			break;
		if (bpf_probe_read_user(s->frame, span, (void *)frame) < 0) {
			s->stack.flags |= PYB_STACK_READ_ERROR;
			break;
		}
		u64 code = s->frame[w_code] & tag_mask;
		u64 instr = s->frame[w_instr];
		u64 owner = (s->frame[owner_word] >> owner_shift) & 0xff;
		u64 shim = ((~(owner - owner_shim)) >> 63) & has_shim; /* owner >= shim */
		/* 3.8-3.10: f_lasti (int) scaled to bytes, and every frame object
		 * is its own eval-loop run; 3.11+: pointer into the bytecode. */
		s64 lasti = (s32)(instr >> instr_shift);
		s64 offset = (s64)objects * (lasti * (s64)scale) +
			     (1 - (s64)objects) * (s64)(instr - code - adaptive);
		u64 entry = (s->frame[entry_word] >> entry_shift) & 0xff & has_entry;
		u32 idx = n % PYB_MAX_FRAMES;

		frame = s->frame[w_prev];
		s->stack.frames[idx].code = code;
		s->stack.frames[idx].instr_offset = (s32)offset;
		s->stack.frames[idx].flags =
			(u32)(objects | ((entry | (0 - entry)) >> 63) | (shim << 1));
		u64 ident = pyb_code_ident(L, code);

		s->stack.frames[idx].ident = ident;
		hash = (hash ^ code) * 0x100000001b3ULL;
		hash = (hash ^ ident) * 0x100000001b3ULL;
		hash = (hash ^ (u32)offset) * 0x100000001b3ULL;
	}
	/* Not "n >= PYB_MAX_FRAMES": a compare would make n precise, and the
	 * verifier then checks what follows once for every value of n. A
	 * frame left unread without a read error means the loop ran out. */
	s->stack.len = n;
	if (frame && !(s->stack.flags & PYB_STACK_READ_ERROR))
		s->stack.flags |= PYB_STACK_TRUNCATED;
	hash ^= s->stack.flags;
	return hash ? hash : 1;
}
