/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Data exchanged between the BPF programs and user space. This file is
 * embedded in front of every BPF program and included by lib/, so both
 * sides read the same bytes the same way. No includes.
 */
#ifndef PYBPF_PY_ABI_H
#define PYBPF_PY_ABI_H

#include "py_offset_fields.h"

#ifdef PYB_BPF
typedef u64 pyb_u64;
typedef u32 pyb_u32;
typedef s32 pyb_s32;
typedef s64 pyb_s64;
typedef u8 pyb_u8;
#else
#include <stdint.h>
typedef uint64_t pyb_u64;
typedef uint32_t pyb_u32;
typedef int32_t pyb_s32;
typedef int64_t pyb_s64;
typedef uint8_t pyb_u8;
#endif

/* Deepest Python stack recorded; deeper ones are marked truncated.
 * Overridable at compile time (-DPYB_MAX_FRAMES=N). */
#ifndef PYB_MAX_FRAMES
#define PYB_MAX_FRAMES 192
#endif
#define PYB_MAX_LAYOUTS 16
#define PYB_MAX_THREAD_SCAN 256 /* thread states searched per unknown thread */

enum pyb_frame_model {
	PYB_FRAMES_OBJECTS = 0, /* 3.8-3.10 */
	PYB_FRAMES_CFRAME = 1,  /* 3.11-3.12 */
	PYB_FRAMES_CURRENT = 2, /* 3.13+ */
};

/* One interpreter build's layout: offsets plus what the table cannot say. */
struct pyb_layout {
#define PYB_LAYOUT_MEMBER(name, ...) pyb_s32 name;
	PY_OFFSET_FIELDS(PYB_LAYOUT_MEMBER)
#undef PYB_LAYOUT_MEMBER
	pyb_u32 frame_model;
	pyb_u32 minor;
	pyb_u32 frame_span;     /* bytes of a frame struct read at once */
	pyb_u32 stackref_mask;  /* 3.14+: _PyStackRef tag bits to clear */
	pyb_u32 lasti_scale;    /* 3.8-3.10: f_lasti units in bytes (1 or 2) */
	pyb_u32 owner_shim;     /* 3.12+: owner >= this is no Python frame; 0 = none */
	pyb_u32 owner_generator; /* 3.11+: frames a generator owns are always complete */
	pyb_u32 str_ascii_bit;  /* bit of the "ascii" flag in a str's state */
	/* The bytes of a code object read per frame, its "window":
	 * [cw_at, cw_at + cw_span), cw_span < PYB_CODE_SPAN_MAX; and where in
	 * it (byte offsets from cw_at; -1: the version has no such field) the
	 * fields are that tell code objects apart (PYB_CODE_IDENT) or say
	 * where the code becomes traceable. */
	pyb_u32 cw_at, cw_span;
	pyb_s32 cw_name, cw_file, cw_lines; /* str, str, bytes pointers */
	pyb_s32 cw_firstline;  /* int co_firstlineno */
	pyb_s32 cw_units;      /* 3.11+: ob_size, the bytecode's length in code units */
	pyb_s32 cw_version;    /* 3.12+: uint32 co_version, a creation counter */
	pyb_s32 cw_traceable;  /* 3.11+: int _co_firsttraceable, in code units */
	pyb_u32 lines_head_word; /* (bytes_data - bytes_size) / 8 (< 4) */
};

#define PYB_CODE_SPAN_MAX 256

enum pyb_proc_flags {
	PYB_PROC_OTHER_PIDNS = 1 << 0, /* tids in the interpreter differ from host tids */
	PYB_PROC_NATIVE_STACKS = 1 << 1, /* its files are in native_maps: unwind native stacks */
	PYB_PROC_MAPS_STALE = 1 << 2,    /* BPF met an address in no known file: user
					    space reads the mappings again (and clears it) */
};

/* Code ranges of the eval loop kept for BPF (a process with more has
 * none: its native walks go to the outermost frame). */
#define PYB_EVAL_RANGES 4

/* A registered Python process (key: host tgid). */
struct pyb_proc {
	pyb_u64 runtime_addr;
	pyb_u64 pidns_dev, pidns_ino;
	pyb_u32 layout;
	pyb_u32 flags;
	pyb_s32 pthread_tid_offset;
	pyb_u32 pad;
	/* _PyEval_EvalFrameDefault's code in the process, [start, end);
	 * unused ranges are 0, 0 */
	pyb_u64 eval_start[PYB_EVAL_RANGES], eval_end[PYB_EVAL_RANGES];
	/* the main interpreter's collector: its `collecting` int and its GIL,
	 * whose holder runs a collection (cpython/gc_flag.h); 0: unknown */
	pyb_u64 gc_collecting, gc_gil;
};

enum pyb_frame_flags {
	PYB_FRAME_ENTRY = 1 << 0, /* first frame of an eval-loop activation */
	PYB_FRAME_SHIM = 1 << 1,  /* interpreter entry/C-stack frame: no Python
				     function; the frame before it is an entry */
	PYB_FRAME_HIDDEN = 1 << 2, /* incomplete (3.11+): CPython's tracebacks leave it
				      out (_PyFrame_IsIncomplete), so do we */
};

struct pyb_frame {
	pyb_u64 code;
	pyb_s32 instr_offset; /* bytes into the bytecode; <0 not started */
	pyb_u32 flags;
	pyb_u64 ident; /* PYB_CODE_IDENT of the code object: tells it from a
			  later one at the same address */
};

/*
 * Identity of a code object, for telling it from a later one at the same
 * address (with, as often as not, its strings and line table at the same
 * addresses too). Only what never changes in a live code object: its
 * co_qualname (3.11+) or co_name and its co_filename, each as the string's
 * pointer, length and last 8 characters (ASCII strings; never the hash,
 * which is computed the first time the string is hashed); its line table
 * as pointer, length and first 8 bytes; its first line number; (3.11+) its
 * bytecode's length; (3.12+) its co_version, which numbers code objects as
 * they are made. Both sides read the same words and mix them alike.
 */
#define PYB_STR_IDENT(ptr, len, tail)                                              \
	((((pyb_u64)(ptr) * 0x9e3779b97f4a7c15ULL) ^ (pyb_u64)(len)) * 0xff51afd7ed558ccdULL ^ \
	 (pyb_u64)(tail))
/* the first 8 bytes of a bytes object's data, its length cut to them */
#define PYB_BYTES_HEAD(len, head)                                                  \
	((pyb_u64)(len) >= 8 ? (pyb_u64)(head)                                      \
			     : (pyb_u64)(head) & ((1ULL << (((pyb_u64)(len) & 7) * 8)) - 1))
#define PYB_CODE_IDENT(name_ident, file_ident, lines_ident, firstline, units, version)   \
	((((name_ident) * 31 + (file_ident)) ^ ((lines_ident) * 0xc2b2ae3d27d4eb4fULL)) +   \
	 ((pyb_u64)(pyb_u32)(firstline) << 32 | (pyb_u64)(pyb_u32)(units)) *                \
		 0x9e3779b97f4a7c15ULL +                                                     \
	 (pyb_u64)(pyb_u32)(version) * 0xff51afd7ed558ccdULL)

/* Key of `named_codes`: a code object user space has named (pid's
 * code_names cache holds it), so a new stack made of such frames needs no
 * hint: it is named from the map when read. */
struct pyb_named_key {
	pyb_u32 pid;
	pyb_u32 pad;
	pyb_u64 code;
	pyb_u64 ident;
};

enum pyb_stack_flags {
	PYB_STACK_TRUNCATED = 1 << 0, /* more frames than PYB_MAX_FRAMES */
	PYB_STACK_NO_TSTATE = 1 << 1, /* thread has no Python thread state */
	PYB_STACK_READ_ERROR = 1 << 2, /* a frame could not be read: stack is partial */
};

struct pyb_stack {
	pyb_u32 len;
	pyb_u32 flags;
	pyb_u32 pid; /* code addresses are per process */
	pyb_u32 pad;
	struct pyb_frame frames[PYB_MAX_FRAMES];
};

/* Key of the sample counts: one entry per distinct (thread, stacks). */
enum pyb_count_kind {
	PYB_KIND_SAMPLE = 0,   /* pyprofile: on-CPU samples */
	PYB_KIND_BLOCKED = 1,  /* pyoffcpu: off CPU, sleeping or waiting */
	PYB_KIND_RUNNABLE = 2, /* pyoffcpu: off CPU while runnable (waiting for a CPU) */
	PYB_KIND_GIL_WAIT = 3, /* pygil: time waited for the GIL, by the waiter's stack */
	PYB_KIND_GIL_HOLD = 4, /* pygil: time others waited, by the holder's stack */
	PYB_KIND_RESIDENT = 5, /* pymem: bytes made resident by the thread's page faults */
	PYB_KIND_GC_PAUSE = 6,  /* pymem --gc: time collecting, by the triggering stack */
};

/* PYB_COUNT_OPEN set by user space only, at the end of a run; PYB_COUNT_GC by BPF. */
enum pyb_count_flags {
	PYB_COUNT_OPEN = 1 << 0, /* the interval was still open when the run ended */
	PYB_COUNT_GC = 1 << 1,   /* set by BPF: sampled while the thread ran a collection */
};

/* A stack id for a stack that was not taken (user space read the Python
 * stack of a thread off CPU since before the run: BPF saw no switch). */
#define PYB_STACK_ID_NONE (-0x7fffffff - 1)
/* The kernel stack id of a sample or fault taken in user mode: -EFAULT,
 * what bpf_get_stackid says there, which BPF stores without asking it. */
#define PYB_STACK_ID_USER_MODE (-14)

struct pyb_count_key {
	pyb_u32 pid;
	pyb_u32 tid;
	pyb_u32 kind;
	pyb_u32 detail;      /* pyoffcpu: why it waited (abi/wait_abi.h); else 0 */
	pyb_u64 pystack;     /* hash of the Python stack, key of `pystacks`; 0 none */
	pyb_s32 user_stack;  /* native user stack id; <0 none */
	pyb_s32 kernel_stack;
	char comm[16];
	/* --async (PYB_ASYNC): the asyncio task the thread ran, as the id user
	 * space gave it (or, not named yet, PYB_TASK_FRAME_BIT | its frame),
	 * and how many of the stack's frames, innermost first, are the task's
	 * (0: no task) */
	pyb_u32 task_depth;
	pyb_u32 flags;       /* enum pyb_count_flags */
	pyb_u64 task;
};

/* --async: key of `task_ids`, a task's coroutine frame in a process, the
 * code it runs and the identity of the task object that runs it
 * (PYB_TASK_IDENT): a task made at the address of one that ended, with the
 * same coroutine, is told apart by its task's name. */
struct pyb_task_key {
	pyb_u32 pid;
	pyb_u32 pad;
	pyb_u64 frame;
	pyb_u64 code;
	pyb_u64 ident; /* 0: the running task could not be found or read */
};
/* task_ids values user space writes for frames it could not match to a
 * task (it ended before it was looked at, or its identity is 0); real ids
 * start above */
#define PYB_TASK_UNKNOWN 1
/* pyb_count_key.task of a sample taken before user space named its task:
 * the task's PYB_TASK_IDENT with this bit set */
#define PYB_TASK_FRAME_BIT (1ULL << 63)
/*
 * Identity of the task object at address task whose name (a str, or from
 * 3.13 an int while the program gave none) has name_ident: for an ASCII
 * str PYB_TASK_STR_IDENT (its first 16 and last 8 characters: short
 * names like "req-12" differ in their first ones), for an int
 * PYB_STR_IDENT(ptr, its size word, its first digits word). Never 0, never
 * with PYB_TASK_FRAME_BIT. Both sides mix it alike.
 */
/* the bytes of word at (bytes at..at+7) that a string of len bytes has */
#define PYB_TASK_NAME_MASK(len, at)                                                       \
	((len) >= (at) + 8 ? ~0ULL : (len) <= (at) ? 0ULL : (1ULL << (((len) - (at)) * 8)) - 1)
#define PYB_TASK_STR_IDENT(ptr, len, w0, w1, tail)                                        \
	PYB_STR_IDENT(ptr, len,                                                           \
		      ((w0) & PYB_TASK_NAME_MASK(len, 0)) ^                               \
			      (((w1) & PYB_TASK_NAME_MASK(len, 8)) * 0x9e3779b97f4a7c15ULL) ^ \
			      (((len) >= 8 ? (tail) : 0ULL) * 0xff51afd7ed558ccdULL))
#define PYB_TASK_IDENT(task, name_ident)                                                  \
	(((((pyb_u64)(task) * 0xc2b2ae3d27d4eb4fULL) ^ (pyb_u64)(name_ident)) &           \
	  (PYB_TASK_FRAME_BIT - 1)) | 1)

/* --async: where BPF finds the task a thread runs, per process (key of
 * `task_src`: host tgid); user space writes it once it has read the
 * process's tasks. Offsets are -1 where the version has no such field. */
struct pyb_task_src {
	pyb_u64 current_tasks;    /* 3.11-3.13: the dict {loop: its running task} */
	pyb_u64 str_type, long_type; /* the types a task's name may have */
	pyb_s32 tstate_running_task; /* 3.14+: the thread state's running task */
	pyb_s32 task_coro, task_name; /* in a C task (TaskObj) */
	pyb_s32 gen_iframe;       /* a coroutine's frame in the coroutine */
	pyb_s32 dict_keys;        /* PyDictObject.ma_keys */
	pyb_s32 keys_log2_index_bytes, keys_kind, keys_nentries, keys_indices;
	pyb_s32 pad;
};

/* pyoffcpu: a thread off CPU now (key of `start`: host tid). */
struct pyb_offcpu_start {
	pyb_u64 ts;      /* switched out at; seeded: when the run began */
	pyb_u64 wake_ts; /* woken (blocked threads only); 0 not yet */
	pyb_u32 seeded;  /* 1: user space put it there, for a thread off CPU
			    since before the run (BPF overwrites it when the
			    thread switches out again) */
	pyb_u32 pad;
	struct pyb_count_key key;
};

/* Counters the programs keep, per CPU. */
enum pyb_stat {
	PYB_STAT_SAMPLES = 0,     /* samples of registered Python processes */
	PYB_STAT_NO_TSTATE,       /* ...in threads without a thread state */
	PYB_STAT_TRUNCATED,       /* ...whose Python stack was cut */
	PYB_STAT_READ_ERRORS,     /* ...with an unreadable frame */
	PYB_STAT_STACK_MAP_FULL,  /* stacks that could not be stored */
	PYB_STAT_COUNT_MAP_FULL,  /* samples that could not be counted */
	PYB_STAT_OTHER,           /* samples of other processes (ignored) */
	PYB_STAT_IDLE,            /* samples of an idle CPU (some kernels take them) */
	PYB_STAT_FILTERED,        /* pyoffcpu: intervals outside -m/-M */
	PYB_STAT_NATIVE_MAP_FULL, /* native stacks that could not be stored */
	/* pyoffcpu: a thread that switched out with its last interval still
	 * open (the kernel reported no switch back onto a CPU): ended at the
	 * wake-up seen, or not counted for want of one */
	PYB_STAT_SWITCH_IN_UNSEEN,
	PYB_STAT_SWITCH_IN_LOST,
	/* -p, --children, a launched command: samples (among OTHER's) of a
	 * process asked for that was not registered (yet): starting up, not
	 * Python, or refused */
	PYB_STAT_UNREGISTERED,
	PYB_STAT_MAX,
};

/* Where the sampling program's time goes (pyprofile, PYBPF_PHASES=1 in
 * its environment: bench/sample_phases.py): per-CPU sums over the
 * samples of registered processes, of nanoseconds or of counts. */
enum pyb_phase {
	PYB_PHASE_SAMPLES = 0,
	PYB_PHASE_TSTATE_NS,      /* finding the thread state */
	PYB_PHASE_WALK_NS,        /* the Python walk, storing its stack */
	PYB_PHASE_REST_NS,        /* the rest before the native walk */
	PYB_PHASE_NATIVE_NS,      /* the native walk, its tail calls, storing */
	PYB_PHASE_PY_FRAMES,
	PYB_PHASE_NATIVE_FRAMES,
	PYB_PHASE_FRAME_READS,    /* reads of Python frames (windows from 3.11) */
	PYB_PHASE_FRAME_READ_NS,
	PYB_PHASE_CODE_READS,     /* code objects' windows read */
	PYB_PHASE_IDENTS,         /* code identities read whole (pyb_code_ident_memo) */
	PYB_PHASE_IDENT_NS,       /* ...their time, the window's read included */
	PYB_PHASE_STACK_READS,    /* reads of the native stack */
	PYB_PHASE_STACK_READ_NS,
	PYB_PHASE_ROW_SEARCHES,   /* unwind rows searched, not in the CPU's cache */
	PYB_PHASE_TRIE_LOOKUPS,   /* mappings looked up in the trie */
	PYB_PHASE_STORE_NS,       /* of WALK_NS: the stack looked up, stored if new */
	PYB_PHASE_NEW_STACKS,     /* Python stacks stored (first seen) */
	PYB_PHASE_NATIVE_STORE_NS, /* of NATIVE_NS: likewise */
	PYB_PHASE_NEW_NATIVE,     /* native stacks stored */
	PYB_PHASE_IDENT_FAILS,    /* identities some read of which failed (not kept) */
	PYB_PHASE_BEFORE_NS,      /* pyoffcpu: its own look-ups before the walk */
	PYB_PHASE_SWITCH_IN_NS,   /* pyoffcpu: charging an interval as its thread runs */
	PYB_PHASE_FUNC_HITS,      /* 3.11: identities kept by their function's version */
	PYB_PHASE_MAX,
};

/* pygil: the GILs of a process (key: host tgid), one per interpreter
 * that has its own (3.12+); slot 0 is the main interpreter's. 0: none. */
#define PYB_MAX_GILS 8
struct pyb_gils {
	pyb_u64 addr[PYB_MAX_GILS];
};

/* pygil: a thread's current GIL wait episode (key: host tid). */
struct pyb_gil_wait {
	pyb_u64 enter_ts;      /* in a GIL futex wait since; 0: not */
	pyb_u64 woken_ts;      /* woken from it at (it may wait for a CPU after); 0: not yet */
	pyb_u64 episode_start; /* 0: no episode open */
	pyb_u64 last_exit;
	pyb_u64 episode_us;    /* blocked time in this episode so far */
	pyb_u64 holder_pending; /* a wait began: its holder is still to note */
	pyb_u64 stack_pending;  /* an episode began: the waiter's stack is still to walk */
	pyb_u64 gil;            /* the GIL it waits for */
	pyb_u64 switch_addr;    /* that GIL's switch_number */
	pyb_u64 switch_at_exit; /* its value when the last wait ended */
	struct pyb_count_key key;    /* the waiter and its Python stack */
	struct pyb_count_key holder; /* who held the GIL when the episode began */
};

/* pygil: per-thread totals (key: host tid). */
struct pyb_gil_thread {
	pyb_u32 pid;
	pyb_u32 gil; /* slot (struct pyb_gils) of the GIL of its latest wait */
	pyb_u64 wait_us;
	pyb_u64 episodes;
	pyb_u64 futex_waits;
};

/* pyoffcpu's log2 histogram of blocked durations, per Python stack. */
struct pyb_hist_key {
	pyb_u64 pystack;
	pyb_u32 pid;
	pyb_u32 slot; /* bpf_log2l(microseconds) */
};

/* Event sent to user space when a process execs or forks (proc_events),
 * or when a Python stack is stored for the first time (stack_events: a
 * hint to name its code objects while the process still lives), or
 * (--async) when a sample runs in an asyncio task not seen before
 * (stack_events: user space names the task while it lives). */
enum pyb_event_kind {
	PYB_EVENT_EXEC,
	PYB_EVENT_FORK,
	PYB_EVENT_NEW_STACK,
	PYB_EVENT_NEW_TASK,
	PYB_EVENT_NEW_MAPPING, /* a native walk met an address in no known file */
};

struct pyb_proc_event {
	pyb_u32 pid;
	pyb_u32 kind; /* enum pyb_event_kind */
	pyb_u64 key;  /* PYB_EVENT_NEW_STACK: its pystacks key; NEW_TASK: the task's frame */
	pyb_u64 arg;  /* PYB_EVENT_NEW_TASK: the code object that frame runs */
};

/* PYB_EVENT_NEW_TASK carries the task's identity too (pyb_task_key.ident),
 * and its name as BPF read it from the task object that sample ran in:
 * user space names a task that ended before it could be read by it. */
enum pyb_task_name_kind {
	PYB_TASK_NAME_NONE,  /* not copied (not ASCII, unreadable, identity 0) */
	PYB_TASK_NAME_ASCII, /* name[]: its first min(name_len, 63) characters */
	PYB_TASK_NAME_INT,   /* 3.13+ unnamed task: an int (name_words) */
};
#define PYB_TASK_NAME_COPY 64
struct pyb_task_event {
	struct pyb_proc_event ev;
	pyb_u64 ident;
	pyb_u64 name_words[2]; /* an int name: its size word and first digits */
	pyb_u32 name_kind;     /* enum pyb_task_name_kind */
	pyb_u32 name_len;      /* an ASCII name: its whole length */
	char name[PYB_TASK_NAME_COPY];
};

/* PYB_EVENT_EXEC carries the new program's name too: a process that ends
 * before user space looks at it is still known by it. */
struct pyb_exec_event {
	struct pyb_proc_event ev;
	char comm[16];
};

#endif
