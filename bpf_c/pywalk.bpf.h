/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python stack walking in BPF, shared by every tool. Reads only user memory
 * of the current task (bpf_probe_read_user) with offsets user space checked
 * against that very process; never reads kernel structs.
 *
 * Cost per frame: the frame struct (from 3.11 most often out of a copy of
 * the frames below it, pyb_read_frame), one user-memory read of the code
 * object's fields (its "window", see struct pyb_layout), then three small
 * ones for its name and file strings (length, state and last 8 characters
 * of each, mostly in one read a string) and its line table (length and
 * first 8 bytes), unless this
 * CPU's memo of code objects already has it (pyb_code_ident_memo); a code
 * object met earlier in the same walk costs no read at all. The address
 * alone does not tell a code object: a freed code object's address (and
 * its strings') is taken by the next one of the same size. User space
 * names code objects by (address, identity).
 */

#include "../lib/abi/py_abi.h"
#include "asyncio_walk.bpf.h"
#include "loop_guard.bpf.h"

BPF_HASH(procs, u32, struct pyb_proc, 4096);
BPF_ARRAY(layouts, struct pyb_layout, PYB_MAX_LAYOUTS);
/* host tid -> PyThreadState*, a cache that BPF fills as it finds threads
 * and user space fills for processes with many threads (py_registry.c);
 * every entry is checked before use. LRU: threads come and go. */
BPF_TABLE("lru_hash", u32, u64, tstates, 65536);

/* Bytes of a thread's frames read at once (pyb_read_frame). */
#define PYB_FRAME_WINDOW 2048
/* Frames further than this from that copy are in other memory. */
#define PYB_FRAME_FAR (1ULL << 20)
/* Where in pyb_scratch.window a frame read alone goes: past the copy (at
 * most 257 words) and past the 16 words of a frame begun in it. */
#define PYB_FRAME_ALONE (PYB_FRAME_WINDOW / 8 + 16)

/* A str's header and up to this many characters are read at once
 * (pyb_str_ident): the names of code objects and files are mostly shorter. */
#define PYB_STR_CHARS 64
#define PYB_STR_READ 128
/* Bytes of a thread state read at once (pyb_find_tstate's cached path). */
#define PYB_TSTATE_WINDOW 512

/* 1 if a walked frame (its PYB_FRAME_* flags) is where an eval-loop run
 * begins: a 3.8-3.10 frame object or an entry frame, or from 3.12 a shim. */
static __always_inline u32 pyb_frame_begins_eval(u32 flags)
{
	return (flags & (PYB_FRAME_ENTRY | PYB_FRAME_SHIM)) != 0;
}

/* Code objects this CPU identified lately (pyb_code_ident_memo). */
#define PYB_CODE_MEMO 256
/* Walks of a CPU between reads of a function that had no version */
#define PYB_FUNC_RECHECK 64
struct pyb_code_memo {
	u64 code, fields, ident;
	u64 walk; /* the last walk (pyb_scratch.walks) that met it */
	u64 func; /* 3.11: the function it was met through (pyb_func_version) */
	u32 func_version; /* and that function's version then (0: none) */
	u32 pid;
	u32 traceable; /* its first traceable instruction (cw_traceable) */
	u32 func_read; /* the function was read when it was met (else, not yet) */
};

struct pyb_scratch {
	struct pyb_stack stack;
	struct pyb_code_memo memo[PYB_CODE_MEMO];
	u64 walks; /* walks this CPU began */
	u64 ident_keep; /* for pyb_code_ident_memo: 0 for a shim frame, else ~0 */
	u64 file_ptr, file_walk, file_ident; /* pyb_file_ident's last */
	u64 frame[16]; /* room for asyncio.bpf.h, once the walk is done */
	u64 window_at, window_len; /* window holds window_len bytes from there */
	u64 frame_alone; /* the last frame was far from window, read alone */
	u64 walk_evals; /* eval-loop runs of the walk's stack (pyb_python_evals) */
	/* pyb_read_frame's: a copy of frames, and a frame read alone */
	u64 window[PYB_FRAME_ALONE + 16];
	u64 code[PYB_CODE_SPAN_MAX / 8]; /* a code object's window, likewise */
	u64 lines[4];  /* the head of a line table (bytes object) */
	u64 func_win[16]; /* a function's code and version (pyb_func_version) */
	u64 func, func_version; /* the frame's function and its version, or 0 */
	u64 func_read; /* 1: pyb_code_ident_memo read the function */
	u64 ident_began; /* PYB_PHASES: when pyb_code_ident_memo began reading */
	u64 traceable; /* pyb_code_ident_memo's code object's first traceable unit */
	u64 str_meta[3]; /* a str's length, hash and state (pyb_str_ident) */
	u64 str_buf[PYB_STR_READ / 8]; /* the same and its characters, in one read */
	u64 ts_window[PYB_TSTATE_WINDOW / 8]; /* a thread state's first bytes */
	u64 ident_failed; /* nonzero: a read of the identity failed */
	struct pyb_count_key key; /* pyprofile, pymem: the event's count key */
	u64 found_ts; /* pyb_find_tstate's match so far */
	u32 scan_turns; /* and the thread states it looked at */
	PYB_ASYNC_SCRATCH
};
BPF_PERCPU_ARRAY(pyb_scratch_map, struct pyb_scratch, 1);
BPF_PERCPU_ARRAY(stats, u64, PYB_STAT_MAX);
#ifdef PYB_PHASES
BPF_PERCPU_ARRAY(pyb_phases, u64, PYB_PHASE_MAX);
/* adds v to phase slot which (enum pyb_phase); only when measuring */
static __always_inline void pyb_phase_add(int which, u64 v)
{
	u64 *p = pyb_phases.lookup(&which);

	if (p)
		*p += v;
}
#define PYB_PHASE(which, v) pyb_phase_add(which, v)
#define PYB_NOW() bpf_ktime_get_ns()
#else
#define PYB_PHASE(which, v) ((void)sizeof(v)) /* v unevaluated */
#define PYB_NOW() 0ULL
#endif

/* Frame fields sit below 128 bytes in every layout: word index masked to
 * 0..15 keeps the verifier sure reads stay inside the buffer. */
#define WORD(off) (((u32)(off) >> 3) & 15)
/* Likewise in the code window (PYB_CODE_SPAN_MAX bytes). */
#define CWORD(off) (((u32)(off) >> 3) & (PYB_CODE_SPAN_MAX / 8 - 1))
/* All ones when a layout's byte offset is a field (>= 0), zero for -1. */
#define HAS(off) (~(u64)((s64)(off) >> 63))

static __always_inline void pyb_stat(int which)
{
	u64 *v = stats.lookup(&which);

	if (v)
		(*v)++;
}

/* Hides a value's origin from the compiler, so that it cannot turn
 * arithmetic back into compares: each compare is a branch, and branches
 * in loops multiply the verifier's states. */
#define PYB_OPAQUE(x) asm volatile("" : "+r"(x))

/* Reads that fail give 0 (bpf_probe_read_user zeroes the destination),
 * without a branch. */
static __always_inline u64 pyb_read_u64(u64 addr)
{
	u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

static __always_inline s32 pyb_read_s32(u64 addr)
{
	s32 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* a if the mask is all ones, else b */
#define PYB_PICK(mask, a, b) (((a) & (mask)) | ((b) & ~(mask)))

/*
 * The thread id the interpreter stored for a thread state: its
 * native_thread_id (3.11+), or (3.8-3.10) the tid inside glibc's struct
 * pthread, found at the thread's pthread_self(). Without a branch (it runs
 * in the thread-list search): where a version needs one read, the second
 * reads the first's address again.
 */
static __always_inline u32 pyb_tstate_tid(struct pyb_proc *proc, struct pyb_layout *L, u64 ts)
{
	s64 native = L->tstate_native_thread_id;
	u64 pthread = (u64)(native >> 63); /* all ones without a native id */
	u64 at = ts + PYB_PICK(pthread, (u64)(s64)L->tstate_thread_id, (u64)native);

	PYB_OPAQUE(pthread);
	u64 v = pyb_read_u64(at);
	u64 t = (u32)pyb_read_s32(PYB_PICK(pthread, v + (u64)(s64)proc->pthread_tid_offset, at));

	return (u32)PYB_PICK(pthread, t, v);
}

/* The innermost frame of thread state ts; 0 if it has none. 3.11-3.12
 * reach it through the thread's _PyCFrame: without a branch, as above. */
static __always_inline u64 pyb_top_frame(struct pyb_layout *L, u64 ts)
{
	u64 cframe = 0 - (u64)(L->frame_model == PYB_FRAMES_CFRAME);

	PYB_OPAQUE(cframe);
	u64 at = ts + L->tstate_frame, f = pyb_read_u64(at);
	u64 cur = pyb_read_u64(PYB_PICK(cframe, f + (u64)(s64)L->cframe_current_frame, at));

	return PYB_PICK(cframe, cur, f);
}

/*
 * top, the current frame of thread state ts, or 0 if it runs no Python
 * code: from 3.15 an idle thread state's current frame is the sentinel
 * base frame it holds (tstate->base_frame), never 0. Without a branch, as
 * above; a version without a base frame compares with the thread state's
 * first word instead (its prev link: never a frame).
 */
static __always_inline u64 pyb_python_top(struct pyb_layout *L, u64 ts, u64 top)
{
	s64 off = L->tstate_base_frame;
	u64 none = (u64)(off >> 63); /* all ones without a base frame */

	PYB_OPAQUE(none);
	u64 d = top ^ pyb_read_u64(ts + PYB_PICK(none, 0, (u64)off));

	PYB_OPAQUE(d);
	return top & (0 - ((d | (0 - d)) >> 63)); /* top, unless it is the base */
}

/*
 * The current frame of cached thread state ts if it is still thread tid's
 * and runs Python code, else 0: what pyb_tstate_tid, pyb_top_frame and
 * pyb_python_top read, with the thread state's first bytes read at once
 * (then the thread id takes one more read on 3.8-3.10, the frame one more
 * on 3.11-3.12). A layout whose fields lie past PYB_TSTATE_WINDOW (none
 * we know) is read field by field.
 */
static __always_inline u64 pyb_cached_top(struct pyb_proc *proc, struct pyb_layout *L,
					  struct pyb_scratch *s, u64 ts, u32 tid)
{
	s64 native = L->tstate_native_thread_id, tid_off = L->tstate_thread_id;
	s64 base = L->tstate_base_frame, frame = L->tstate_frame, span = frame;
	u64 top, t;

	span = tid_off > span ? tid_off : span;
	span = native > span ? native : span;
	span = base > span ? base : span;
	if (span > PYB_TSTATE_WINDOW - 8 || tid_off < 0 || frame < 0 ||
	    (((u64)tid_off | (u64)frame | (u64)(native < 0 ? 0 : native) |
	      (u64)(base < 0 ? 0 : base)) & 7)) {
		if (pyb_tstate_tid(proc, L, ts) != tid)
			return 0;
		return pyb_python_top(L, ts, pyb_top_frame(L, ts));
	}
	if (bpf_probe_read_user(s->ts_window, ((u32)span & (PYB_TSTATE_WINDOW - 8)) + 8, (void *)ts))
		return 0;
#define TSW(off) s->ts_window[((u64)(off) >> 3) & (PYB_TSTATE_WINDOW / 8 - 1)]
	if (native >= 0)
		t = (u32)TSW(native);
	else
		t = (u32)pyb_read_s32(TSW(tid_off) + (u64)(s64)proc->pthread_tid_offset);
	if (t != tid)
		return 0;
	top = TSW(frame);
	if (L->frame_model == PYB_FRAMES_CFRAME)
		top = pyb_read_u64(top + (u64)(s64)L->cframe_current_frame);
	/* as pyb_python_top: not the base frame (or, without one, the first word) */
	return top != TSW(base < 0 ? 0 : base) ? top : 0;
#undef TSW
}

/* The id the interpreter knows the current thread by (host_tid, or its
 * tid in the process's PID namespace); 0 if unknown. */
static __always_inline u32 pyb_ns_tid(struct pyb_proc *proc, u32 host_tid)
{
	struct bpf_pidns_info ns = {};

	if (!(proc->flags & PYB_PROC_OTHER_PIDNS))
		return host_tid;
	if (bpf_get_ns_current_pid_tgid(proc->pidns_dev, proc->pidns_ino, &ns, sizeof(ns)))
		return 0;
	return ns.pid;
}

/*
 * The current thread's PyThreadState, or 0; *frame is its innermost frame.
 *
 * A cached thread state is used while it names this thread and has a
 * frame (pyb_python_top). One with no frame may be freed memory that still holds the tid
 * (a C thread that calls into Python through PyGILState_Ensure/Release
 * gets a new thread state each time), or idle while the thread runs in
 * another interpreter: then every interpreter's list is searched again,
 * and a thread state with a frame wins over one without.
 */
static __always_inline u64 pyb_find_tstate(struct pyb_proc *proc, struct pyb_layout *L,
					   u32 host_tid, struct pyb_scratch *s, u64 *frame)
{
	u32 tid = pyb_ns_tid(proc, host_tid);
	u64 *cached = tstates.lookup(&host_tid);
	u64 interp, ts, top = 0;
	int turn;

	*frame = 0;
	if (!tid)
		return 0;
	if (cached) {
		ts = *cached;
		if (ts) {
			top = pyb_cached_top(proc, L, s, ts, tid);
			if (top) {
				*frame = top;
				s->found_ts = ts; /* for --async: the thread's running task */
				return ts;
			}
		}
	}
	/* The match so far lives in map memory, whose contents the verifier
	 * does not follow: the paths with and without one stay one state. */
	s->found_ts = 0;
	/* reads from a null interpreter fail (give 0) and end the search */
	interp = pyb_read_u64(proc->runtime_addr + L->runtime_interpreters_head);
	ts = pyb_read_u64(interp + L->interp_threads_head);
	PYB_FOR(turn, PYB_MAX_THREAD_SCAN, s->scan_turns, searched) {
		if (!ts) {
			/* the next interpreter's list (each step costs one turn) */
			interp = pyb_read_u64(interp + L->interp_next);
			if (!interp)
				break;
			ts = pyb_read_u64(interp + L->interp_threads_head);
			continue;
		}
		if (pyb_tstate_tid(proc, L, ts) == tid) {
			/* one without a frame is kept unless one with a frame follows */
			s->found_ts = ts;
			top = pyb_python_top(L, ts, pyb_top_frame(L, ts));
			if (top)
				break;
		}
		ts = pyb_read_u64(ts + L->tstate_next);
	}
searched: __attribute__((unused));
	ts = s->found_ts;
	if (ts) {
		tstates.update(&host_tid, &ts);
		*frame = top;
	} else if (cached) {
		tstates.delete(&host_tid);
	}
	return ts;
}

/*
 * Reads the frame struct at frame (span bytes); the word of s->window it
 * begins at (below PYB_FRAME_ALONE, or PYB_FRAME_ALONE), or a read error.
 * The walk takes a frame's few fields from there, rather than from a copy
 * of the frame (a load and a store a word, 16 a frame).
 *
 * A read of user memory costs several times what copying a frame does, and
 * from 3.11 a thread's frames lie one below the other in its data stack:
 * where the kernel bounds the walk's loop (its verifier's budget leaves
 * room), a frame is read with up to PYB_FRAME_WINDOW bytes below it on its
 * page, and the frames the walk meets there next are taken from that copy.
 * The window never leaves the pages the frame itself is on, so it reads
 * only when a read of the frame alone would, and what it holds is the
 * memory as it was in this walk (the thread is stopped while it is walked;
 * the GIL holder pygil walks is not, and one copy of its frames is a more
 * coherent picture of them than reads one after the other).
 */
static __always_inline int pyb_read_frame(struct pyb_layout *L, struct pyb_scratch *s, u64 frame,
					  u32 span)
{
#ifdef PYB_MAY_GOTO
	if (L->frame_model != PYB_FRAMES_OBJECTS && !(frame & 7)) {
		u64 rel = frame - s->window_at;

		/* far from the copy (by more than a data stack chunk): most
		 * often a frame of other memory, the C stack (3.12+'s entry
		 * frames) or a generator, read alone and the copy kept for the
		 * frames of the data stack that follow; the second far one in
		 * a row (the data stack's older chunk, or generators awaiting
		 * each other) takes a copy of its own */
		if (s->window_len && !s->frame_alone && rel + PYB_FRAME_FAR > 2 * PYB_FRAME_FAR) {
			u64 t = PYB_NOW();
			int err = bpf_probe_read_user(&s->window[PYB_FRAME_ALONE], span,
						      (void *)frame);

			PYB_PHASE(PYB_PHASE_FRAME_READS, 1);
			PYB_PHASE(PYB_PHASE_FRAME_READ_NS, PYB_NOW() - t);
			s->frame_alone = 1;
			return err < 0 ? err : PYB_FRAME_ALONE;
		}
		s->frame_alone = 0;
		if (rel > PYB_FRAME_WINDOW - span || rel + span > s->window_len) {
			u64 end = frame + span, at = end - PYB_FRAME_WINDOW, page = frame & ~4095ULL;
			u64 len;

			if ((s64)(at - page) < 0) /* user addresses are below 2^63 */
				at = page;
			at &= ~7ULL; /* at most frame, which is aligned */
			len = end - at;
			s->window_len = 0;
			rel = ~0ULL;
			u64 t = PYB_NOW();

			if (len <= PYB_FRAME_WINDOW + 8 &&
			    bpf_probe_read_user(s->window, len, (void *)at) == 0) {
				PYB_PHASE(PYB_PHASE_FRAME_READS, 1);
				PYB_PHASE(PYB_PHASE_FRAME_READ_NS, PYB_NOW() - t);
				s->window_at = at;
				s->window_len = len;
				rel = frame - at;
			}
		}
		if (rel <= PYB_FRAME_WINDOW - span)
			return (int)((rel >> 3) & (PYB_FRAME_WINDOW / 8 - 1));
	}
#endif
	int err = bpf_probe_read_user(&s->window[PYB_FRAME_ALONE], span, (void *)frame);

	return err < 0 ? err : PYB_FRAME_ALONE;
}

/* PYB_STR_IDENT of the str at ptr (see py_abi.h): its length and state
 * (with the hash between them, left out: it changes) and its last 8
 * characters, kept only if it is ASCII and 8 or more long. Reads that
 * fail leave 0, and say so in s->ident_failed.
 *
 * Where the kernel bounds the walk's loop (PYB_MAY_GOTO: the verifier's
 * budget has room for a branch here), one read takes the header with up
 * to PYB_STR_CHARS characters after it, never past the header's page (so
 * it fails only where a read of the header alone would), and a second
 * read the last characters only if they are not in that copy; else the
 * header and the last characters take a read each, without a branch.
 */
static __always_inline u64 pyb_str_ident(struct pyb_layout *L, struct pyb_scratch *s, u64 ptr)
{
	u64 tail = 0, at = ptr + L->unicode_length, len, state;

#ifdef PYB_MAY_GOTO
	u32 head = (u32)(L->unicode_ascii_size - L->unicode_length) & 63;
	u32 n = 4096 - (u32)(at & 4095), o;

	n = n < head + PYB_STR_CHARS ? n : head + PYB_STR_CHARS;
	n = n < sizeof(s->str_meta) ? sizeof(s->str_meta) : n;
	s->ident_failed |= (u64)bpf_probe_read_user(s->str_buf, n & (PYB_STR_READ - 1), (void *)at);
	len = s->str_buf[0];
	state = s->str_buf[2];
	o = head + (u32)len - 8; /* where the last 8 characters begin in the copy */
	if (len - 8 <= PYB_STR_CHARS - 8 && o + 8 <= n) {
		u32 w = (o >> 3) & 15, sh = (o & 7) * 8;

		/* unaligned: the high bytes of one word, the low of the next */
		tail = s->str_buf[w] >> sh | (s->str_buf[(w + 1) & 15] << 1) << (63 - sh);
	} else if (len >= 8) {
		s->ident_failed |= (u64)bpf_probe_read_user(
			&tail, sizeof(tail), (void *)(ptr + L->unicode_ascii_size + len - 8));
	}
#else
	/* in scratch memory, not on the BPF stack, which the walk fills */
	s->ident_failed |= (u64)bpf_probe_read_user(s->str_meta, sizeof(s->str_meta), (void *)at);
	len = s->str_meta[0];
	state = s->str_meta[2];
	s->ident_failed |= (u64)bpf_probe_read_user(
		&tail, sizeof(tail), (void *)(ptr + L->unicode_ascii_size + len - 8));
#endif
	u64 ascii = state >> (L->str_ascii_bit & 63);
	u64 short_str = (len - 8) >> 63; /* 1 when len < 8 */

	PYB_OPAQUE(ascii);
	PYB_OPAQUE(short_str);
	tail &= 0 - ((ascii & 1) & (short_str ^ 1));
	return PYB_STR_IDENT(ptr, len, tail);
}

/*
 * PYB_STR_IDENT of a code object's file name at ptr. The code objects of a
 * stack mostly share one (a module's functions hold its file name's str):
 * where the kernel has may_goto (room for the branch), a file name met in
 * this walk is not read again. That is sound for the reason the code memo
 * is (pyb_code_ident_memo): a code object of an older frame held its str
 * when the walk began and holds it still, so a str met at the same address
 * in one walk is one object.
 */
static __always_inline u64 pyb_file_ident(struct pyb_layout *L, struct pyb_scratch *s, u64 ptr)
{
#ifdef PYB_MAY_GOTO
	u64 failed = s->ident_failed, ident;

	if (s->file_walk == s->walks && s->file_ptr == ptr)
		return s->file_ident;
	s->ident_failed = 0;
	ident = pyb_str_ident(L, s, ptr);
	if (!s->ident_failed) {
		s->file_ptr = ptr;
		s->file_walk = s->walks;
		s->file_ident = ident;
	}
	s->ident_failed |= failed;
	return ident;
#else
	return pyb_str_ident(L, s, ptr);
#endif
}

/* The int at byte offset off of the code window (0 if the layout has
 * none there). */
static __always_inline u64 pyb_code_int(struct pyb_scratch *s, s32 off)
{
	return (s->code[CWORD(off)] >> ((off & 7) * 8)) & 0xffffffffULL & HAS(off);
}

/* PYB_STR_IDENT of the line table (a bytes object) at ptr: its length
 * and its first 8 bytes (PYB_BYTES_HEAD, without a branch), in one read. */
static __always_inline u64 pyb_lines_ident(struct pyb_layout *L, struct pyb_scratch *s, u64 ptr)
{
	s->ident_failed |= (u64)bpf_probe_read_user(s->lines, sizeof(s->lines),
						    (void *)(ptr + L->bytes_size));
	u64 len = s->lines[0], head = s->lines[L->lines_head_word & 3];
	u64 short_bytes = 0 - ((len - 8) >> 63); /* all ones when len < 8 */

	PYB_OPAQUE(short_bytes);
	head &= PYB_PICK(short_bytes, (1ULL << ((len & 7) * 8)) - 1, ~0ULL);
	return PYB_STR_IDENT(ptr, len, head);
}

/* What a memo entry is checked against: the window's fields (its version
 * among them) and the process. */
static __always_inline u64 pyb_memo_fields(struct pyb_layout *L, struct pyb_scratch *s, u32 pid)
{
	return (((s->code[CWORD(L->cw_name)] * 31 + s->code[CWORD(L->cw_file)]) ^
		 s->code[CWORD(L->cw_lines)]) * 0x9e3779b97f4a7c15ULL +
		(pyb_code_int(s, L->cw_firstline) << 32 | pyb_code_int(s, L->cw_units))) ^
	       (pyb_code_int(s, L->cw_version) << 32 | pid);
}

static __always_inline struct pyb_code_memo *pyb_memo_entry(struct pyb_scratch *s, u64 code,
							    u32 pid)
{
	return &s->memo[(u32)(((code ^ pid) * 0x9e3779b97f4a7c15ULL) >> 56) & (PYB_CODE_MEMO - 1)];
}

/*
 * 3.11 (the layout has frame_func): the version of func, the function of a
 * frame running code, if func holds code (and its version is not 0), else
 * 0. A function gets its version once, from a counter that never gives a
 * number twice, and loses it whenever its code is replaced: a function
 * that has the version it had when a code object's identity was read
 * through it has held that code object, alive, all the while
 * (lib/cpython/func_versions.h, which checks these offsets in the process).
 * Its code and version in one read (user space keeps them < 128 bytes
 * apart, by words).
 */
static __always_inline u32 pyb_func_version(struct pyb_layout *L, struct pyb_scratch *s, u64 func,
					    u64 code)
{
	u32 rel = (u32)(L->func_version - L->func_code) & 0x78;

	if (bpf_probe_read_user(s->func_win, rel + 8, (void *)(func + L->func_code)) ||
	    s->func_win[0] != code)
		return 0;
	return (u32)s->func_win[(rel >> 3) & 15];
}

/*
 * Reads the window of the code object at code (struct pyb_layout) and
 * returns its PYB_CODE_IDENT; its first traceable code unit in s->traceable.
 *
 * The identity takes five more reads (name, file name, line table), each
 * of another object, as often as not on another page: most of what a
 * sample costs on a cold cache. This CPU keeps a memo of the identities it
 * read, which stands for a code object found at the same address with the
 * same fields:
 *  - within one walk, on every version, without reading its window again:
 *    the thread is stopped while it is walked, and each of its frames
 *    holds its code object (and that its strings), so an address seen
 *    twice in one stack (a recursion) is one object (a GIL holder, which
 *    runs on, could only free an inner frame's code object: the walk goes
 *    outwards, to frames older than it);
 *  - from one walk to the next from 3.12, where a code object carries
 *    co_version, a number the interpreter gives each new code object; not
 *    where there is none (3.8-3.11: a code object made where a freed one
 *    was, with its strings where the freed one's were, differs only in
 *    what they say) or it is 0 (the interpreter's count ran out);
 *  - on 3.11, where the kernel has may_goto (the verifier's budget has
 *    room), while func, the frame's function, keeps the version it had
 *    when the identity was read (pyb_func_version): one read of the
 *    function instead of the code object's window and strings. A
 *    function that has no version (one only C code calls, a module's
 *    body) costs its identity's reads each walk, as before.
 */
static __always_inline u64 pyb_code_ident_memo(struct pyb_layout *L, struct pyb_scratch *s,
					       u64 code, u32 pid)
{
	struct pyb_code_memo *m = pyb_memo_entry(s, code, pid);
	u64 ident, keep = s->ident_keep;

	/* met earlier in this walk: the same object, its window unread; or
	 * an interpreter's shim frame, which tracebacks leave out: its
	 * "code" need not be one (3.13+ put None in the eval loop's entry
	 * frame), and reading it as one costs failed reads (a fault each,
	 * the dearest thing a read can do) in every walk */
	if (((m->walk ^ s->walks) & keep) == 0 && ((m->code ^ code) & keep) == 0) {
		s->traceable = m->traceable & keep;
		return m->ident & keep;
	}
#ifdef PYB_PHASES
	s->ident_began = PYB_NOW(); /* in scratch: with clocks, the stack is full */
#endif
#ifdef PYB_MAY_GOTO
	/* in scratch memory, as what follows: the BPF stack is full */
	/* s->func: the frame's function, which the walk took from the frame */
	s->func_version = 0;
	s->func_read = 0;
	/* Read before the identity: the function must have held the code
	 * object through the reads for the identity to be kept by it. Read
	 * only for a code object this CPU met before through the same
	 * function (one met once, by a walk of a process that will not come
	 * back soon, would pay a read of memory as cold as the rest); and
	 * one that had no version then (most never get one) only every
	 * PYB_FUNC_RECHECK walks. */
	if (s->func && m->func == s->func && m->code == code && m->pid == pid &&
	    (m->func_version || !m->func_read || !(s->walks & (PYB_FUNC_RECHECK - 1)))) {
		s->func_read = 1;
		s->func_version = pyb_func_version(L, s, s->func, code);
		/* the same entry, found again: fewer values kept across the
		 * read (its function, code and process matched above) */
		m = pyb_memo_entry(s, code, pid);
		if (s->func_version && m->func_version == s->func_version) {
			m->walk = s->walks;
			s->traceable = m->traceable;
			PYB_PHASE(PYB_PHASE_FUNC_HITS, 1);
			return m->ident;
		}
	}
#endif
	u32 span = L->cw_span & (PYB_CODE_SPAN_MAX - 1);

	bpf_probe_read_user(s->code, span, (void *)(code + L->cw_at));
	PYB_PHASE(PYB_PHASE_CODE_READS, 1);
	s->traceable = pyb_code_int(s, L->cw_traceable);
	if (pyb_code_int(s, L->cw_version) && m->code == code &&
	    m->fields == pyb_memo_fields(L, s, pid)) {
		m->walk = s->walks;
		return m->ident;
	}
	m->code = 0; /* not whole until its identity is in */
	s->ident_failed = 0;
	ident = PYB_CODE_IDENT(pyb_str_ident(L, s, s->code[CWORD(L->cw_name)]),
			       pyb_file_ident(L, s, s->code[CWORD(L->cw_file)]),
			       pyb_lines_ident(L, s, s->code[CWORD(L->cw_lines)]),
			       pyb_code_int(s, L->cw_firstline), pyb_code_int(s, L->cw_units),
			       pyb_code_int(s, L->cw_version));
	/* found again rather than kept across the reads: the BPF stack is full */
	m = pyb_memo_entry(s, code, pid);
	m->fields = pyb_memo_fields(L, s, pid);
	m->ident = ident;
	m->walk = s->walks;
	m->traceable = (u32)s->traceable;
#ifdef PYB_MAY_GOTO
	m->func = s->func;
	m->func_version = (u32)s->func_version;
	m->func_read = (u32)s->func_read;
	m->pid = pid;
#endif
	/* an identity some read of which failed is not kept: it would stand
	 * for the object, unnamed, for as long as the entry lasts */
	m->code = code & (0 - (u64)(s->ident_failed == 0));
	PYB_PHASE(PYB_PHASE_IDENTS, 1);
	PYB_PHASE(PYB_PHASE_IDENT_FAILS, s->ident_failed != 0);
	PYB_PHASE(PYB_PHASE_IDENT_NS, PYB_NOW() - s->ident_began);
	return ident;
}

/*
 * Walks the Python frames from frame (a thread's innermost) into s->stack
 * (innermost first) and returns a hash of them (never 0).
 *
 * Written for the verifier: every layout field is read once before the
 * loop; the body branches only on "end of chain", "full" and "read
 * failed"; per-version differences are arithmetic, and frames CPython
 * does not show (interpreter shims, incomplete frames) are stored
 * (flagged) rather than skipped, so the frame count is the loop counter
 * and the verifier's states never fork per iteration.
 */
static __always_inline u64 pyb_walk(struct pyb_layout *L, u64 frame, struct pyb_scratch *s,
				    u32 pid)
{
	u64 hash = 0xcbf29ce484222325ULL ^ pid;
	u32 span = L->frame_span & 127;
	u32 w_code = WORD(L->frame_code), w_prev = WORD(L->frame_previous);
	u32 w_instr = WORD(L->frame_instr), instr_shift = (L->frame_instr & 4) * 8;
	u32 owner_word = WORD(L->frame_owner), owner_shift = (L->frame_owner & 7) * 8;
	u32 entry_word = WORD(L->frame_is_entry), entry_shift = (L->frame_is_entry & 7) * 8;
	/* all-ones when the layout has the field / property, else zero */
	u64 has_entry = HAS(L->frame_is_entry);
	u64 owner_shim = L->owner_shim, has_shim = (u64)((s64)(0 - owner_shim) >> 63);
	u64 owner_gen = L->owner_generator, has_traceable = HAS(L->cw_traceable) & 1;
	u64 model = L->frame_model;
	u64 objects = (model - 1) >> 63; /* 1 for PYB_FRAMES_OBJECTS */
	u64 tag_mask = ~(u64)L->stackref_mask, adaptive = (u64)(s64)L->code_adaptive;
	u64 scale = L->lasti_scale;
	u32 n = 0;

	s->stack.pid = pid;
	s->walks++; /* memo entries of earlier walks stand only from 3.12 */
	s->window_len = 0;
	s->walk_evals = 0;
	PYB_FOR(n, PYB_MAX_FRAMES, s->stack.len, walked) {
		if (!frame)
			break;
		int at = pyb_read_frame(L, s, frame, span);

		if (at < 0) {
			s->stack.flags |= PYB_STACK_READ_ERROR;
			break;
		}
		/* the frame's words: FW(k) is its k-th (k < 16) */
		const u64 *fw = &s->window[(u32)at]; /* at most PYB_FRAME_ALONE */
#define FW(k) fw[(k) & 15]
		u64 code = FW(w_code) & tag_mask;
		u64 instr = FW(w_instr);
		u64 owner = (FW(owner_word) >> owner_shift) & 0xff;
		u64 shim = ((~(owner - owner_shim)) >> 63) & has_shim; /* owner >= shim */
		/* 3.8-3.10: f_lasti (int) scaled to bytes, and every frame object
		 * is its own eval-loop run; 3.11+: pointer into the bytecode. */
		s64 lasti = (s32)(instr >> instr_shift);
		s64 offset = (s64)objects * (lasti * (s64)scale) +
			     (1 - (s64)objects) * (s64)(instr - code - adaptive);
		u64 entry = (FW(entry_word) >> entry_shift) & 0xff & has_entry;
#ifdef PYB_MAY_GOTO
		u32 idx = n; /* below PYB_MAX_FRAMES: the loop's head says so */
#else
		u32 idx = n % PYB_MAX_FRAMES; /* the counted loop's verifier needs it */
#endif

		PYB_ASYNC_WALK_FRAME(s, idx, frame, owner, owner_gen);
		frame = FW(w_prev);
#ifdef PYB_MAY_GOTO
		s->func = FW(WORD(L->frame_func)) & HAS(L->frame_func);
		s->ident_keep = shim - 1; /* all ones unless a shim */
#else
		/* counted loops: the verifier's budget has no room for it */
		s->ident_keep = ~0ULL;
#endif
#undef FW
		u64 ident = pyb_code_ident_memo(L, s, code, pid);
		/* incomplete (_PyFrame_IsIncomplete): not owned by a generator,
		 * and its instruction before the first traceable one */
		u64 other_owner = ((owner ^ owner_gen) | (0 - (owner ^ owner_gen))) >> 63;
		u64 early = (u64)(offset - (s64)(s->traceable * 2)) >> 63;
		u64 hidden = early & other_owner & has_traceable;

		s->stack.frames[idx].code = code;
		s->stack.frames[idx].instr_offset = (s32)offset;
		u32 flags = (u32)(objects | ((entry | (0 - entry)) >> 63) | (shim << 1) |
				  (hidden << 2));

		s->stack.frames[idx].flags = flags;
#ifdef PYB_MAY_GOTO
		s->walk_evals += pyb_frame_begins_eval(flags);
#endif
		s->stack.frames[idx].ident = ident;
		hash = (hash ^ code) * 0x100000001b3ULL;
		hash = (hash ^ ident) * 0x100000001b3ULL;
		hash = (hash ^ (u32)offset) * 0x100000001b3ULL;
	}
walked: __attribute__((unused));
	PYB_FOR_END(s->stack.len, n);
	/* Not "n >= PYB_MAX_FRAMES": a compare would make n precise, and the
	 * verifier then checks what follows once for every value of n. A
	 * frame left unread without a read error means the loop ran out. */
	if (frame && !(s->stack.flags & PYB_STACK_READ_ERROR))
		s->stack.flags |= PYB_STACK_TRUNCATED;
	hash ^= s->stack.flags;
	return hash ? hash : 1;
}
