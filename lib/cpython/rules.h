/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What differs between CPython minor versions, one row per minor (and
 * per free-threaded build, kept apart): the single place where a reader
 * learns how to walk a given interpreter. Detected once per process
 * (struct py_process.rules); the user-space walker, the BPF layout, the
 * GIL finder and the line-table decoder all read the same row. Struct
 * offsets are not here: they come from _Py_DebugOffsets, DWARF or the
 * generated tables (cpython/offsets.h), whose field list says which
 * versions need which field (offsets/field_specs.def).
 *
 * Adding a version: one row in rules.c (see offsets/README.md).
 */
#ifndef PYBPF_CPYTHON_RULES_H
#define PYBPF_CPYTHON_RULES_H

#include <stdbool.h>
#include <stdint.h>

/* How the walker reaches a thread's innermost frame. */
enum py_frame_model {
	PY_FRAMES_OBJECTS, /* 3.8-3.10: tstate->frame, PyFrameObject chain */
	PY_FRAMES_CFRAME,  /* 3.11-3.12: tstate->cframe->current_frame */
	PY_FRAMES_CURRENT, /* 3.13+: tstate->current_frame */
};

/* What the frame's instruction field holds. */
enum py_instr_unit {
	PY_INSTR_LASTI_BYTES, /* 3.8-3.9: f_lasti, a byte offset */
	PY_INSTR_LASTI_UNITS, /* 3.10: f_lasti, in 2-byte code units */
	PY_INSTR_POINTER,     /* 3.11+: prev_instr / instr_ptr into the bytecode */
};

/* Format of co_lnotab / co_linetable. */
enum py_line_format {
	PY_LINES_LNOTAB, /* 3.8-3.9 */
	PY_LINES_PEP626, /* 3.10 */
	PY_LINES_PEP657, /* 3.11+ location table */
};

/* Where the GIL's struct lives. */
enum py_gil_home {
	PY_GIL_IN_RUNTIME,     /* 3.8-3.11: _PyRuntime.ceval.gil */
	PY_GIL_IN_INTERPRETER, /* 3.12+: each interpreter's ceval.gil pointer */
};

/* How a thread state names its OS thread. */
enum py_thread_id {
	PY_TID_FROM_PTHREAD, /* 3.8-3.10: pthread_self() only; the tid is in glibc's struct */
	PY_TID_NATIVE,       /* 3.11+: native_thread_id */
};

/* Where asyncio keeps its tasks (lib/cpython/asyncio*.c). */
enum py_task_lists {
	PY_TASKS_UNSUPPORTED = 0,  /* 3.8-3.10: no asyncio support */
	PY_TASKS_ALL_WEAKSET,      /* 3.11: asyncio.tasks._all_tasks (WeakSet) */
	PY_TASKS_SCHEDULED_EAGER,  /* 3.12-3.13: _scheduled_tasks (WeakSet) + _eager_tasks (set) */
	PY_TASKS_LINKED_LISTS,     /* 3.14+: C tasks on per-thread and per-interpreter lists
				      (pure-Python tasks still in _scheduled_tasks/_eager_tasks) */
};

/* How a suspended generator frame says it is inside "yield from"/await. */
enum py_yield_from_test {
	PY_YF_NEXT_RESUME,  /* 3.11-3.12: the next instruction is RESUME with oparg >= 2 */
	PY_YF_FRAME_STATE,  /* 3.13+: gi_frame_state == FRAME_SUSPENDED_YIELD_FROM */
};

/* Where a thread's running event loop is recorded. */
enum py_running_loop {
	PY_LOOP_TS_DICT_HOLDER, /* 3.11: tstate->dict["__asyncio_running_event_loop__"].rl_loop */
	PY_LOOP_TS_DICT,        /* 3.12: tstate->dict["__asyncio_running_event_loop__"] */
	PY_LOOP_TSTATE,         /* 3.13+: a field of the thread state */
};

/* asyncio (the objects it looks into follow struct py_object_rules). */
struct py_async_rules {
	enum py_task_lists task_lists;
	enum py_yield_from_test yield_from;
	enum py_running_loop running_loop;
	/* PyFrameState values (gi_frame_state) */
	int8_t gen_created, gen_suspended, gen_suspended_yf, gen_suspended_yf_locked,
		gen_executing, gen_completed, gen_cleared;
	/* PY_YF_NEXT_RESUME: RESUME and its quickened/instrumented twin */
	uint8_t resume_op, resume_op_alt;
	/* slot below the stack top (-1 or -2) holding what a suspended await awaits */
	int8_t await_slot;
};

/* Where the cyclic collector keeps its state (struct _gc_runtime_state). */
enum py_gc_home {
	PY_GC_NONE = 0,        /* free-threaded: no lists to walk */
	PY_GC_IN_RUNTIME,      /* 3.8: _PyRuntime.gc, one for every interpreter */
	PY_GC_IN_INTERPRETER,  /* 3.9+: each interpreter's gc */
};

/*
 * The collector's layout (lib/cpython/gc_layout.h reads it and checks it
 * against the live process). Offsets into the GC state. 3.13+ take the
 * state's offset, size and `collecting` from _Py_DebugOffsets; the
 * values here are what those must say.
 */
struct py_gc_rules {
	enum py_gc_home home;
	int32_t state;      /* from _PyRuntime (3.8) or the interpreter state */
	int32_t size;       /* sizeof the state (3.14: 240 incremental, 264 generational) */
	int32_t size_incremental; /* 3.14.0-3.14.4's size with young/old[2] lists; 0: none */
	int32_t heads;      /* the three list heads (struct gc_generation, 24 bytes apart) */
	int32_t heads_alt;  /* another place a build may put them (Debian's 3.13: 20); 0: none */
	int32_t permanent;  /* gc.freeze()'s permanent generation */
	int32_t collecting; /* int, 1 while a collection runs */
};

struct py_rules {
	int minor;
	bool free_threaded;
	enum py_frame_model frame_model;
	enum py_instr_unit instr_unit;
	/* frame owner values from this one up are not Python frames (shims,
	 * C-stack entries); 0: frames have no owner field */
	int first_shim_owner;
	/* FRAME_OWNED_BY_GENERATOR (3.11+): such frames are always complete;
	 * -1: frames have no owner field */
	int generator_owner;
	/* 3.11+: bytes from PyCodeObject._co_firsttraceable (an int, the index
	 * of the first traceable instruction: frames whose instruction is
	 * before it are incomplete and hidden, _PyFrame_IsIncomplete) to
	 * co_code_adaptive, whose offset _Py_DebugOffsets, DWARF and the tables
	 * give; 0: no such field (3.8-3.10) */
	int firsttraceable_before_code;
	/* 3.12+: bytes from PyCodeObject.co_version (a uint32 numbering code
	 * objects as they are made, never changed after) to co_filename; 0:
	 * no such field */
	int version_before_filename;
	/* tag bits of a _PyStackRef to clear from the frame's code reference
	 * (3.14+); 0: a plain pointer */
	uint64_t stackref_tag_mask;
	/* bits of PyASCIIObject.state before kind:3, compact:1, ascii:1 */
	int str_state_interned_bits;
	enum py_line_format line_format;
	enum py_gil_home gil_home;
	bool has_debug_offsets; /* _Py_DebugOffsets at &_PyRuntime (3.13+) */
	/* PY_VERSION_HEX of the first pre-release whose _Py_DebugOffsets has
	 * the layout offsets_debug.c knows for this minor (earlier alphas and
	 * betas had others); 0 without _Py_DebugOffsets */
	uint32_t debug_offsets_since;
	enum py_thread_id thread_id;
	struct py_async_rules async;
	struct py_gc_rules gc;
};

/* The row for 3.minor (free-threaded or not), or NULL if we have none. */
const struct py_rules *py_rules_for(int minor, bool free_threaded);

/*
 * Whether the _Py_DebugOffsets of a build whose PY_VERSION_HEX is hex has
 * the layout we know for r's minor: every final release and release
 * candidate from r->debug_offsets_since on do; older pre-releases do not.
 */
bool py_rules_debug_layout_valid(const struct py_rules *r, uint32_t hex);

/* Why the BPF walker must not read an interpreter with these rules (a
 * sentence for the user), or NULL if it can. Free-threaded builds run
 * per-thread copies of the bytecode, which the BPF walker does not follow:
 * it would print wrong line numbers. */
const char *py_rules_bpf_refusal(const struct py_rules *r);

/* The bit of PyASCIIObject.state that says "ascii". */
static inline unsigned py_rules_str_ascii_bit(const struct py_rules *r)
{
	return (unsigned)r->str_state_interned_bits + 4;
}

/*
 * How objects keep what the object reader (cpython/objects.h) finds in
 * them, for locals, thread names, lock waits, asyncio and the census.
 * Struct offsets come with the other offsets; these are the encodings
 * around them, per minor (free-threaded rows apart).
 */

/* How an int says how many 30-bit digits it has and its sign. */
enum py_long_model {
	PY_LONG_OB_SIZE, /* 3.8-3.11: ob_size = digit count, negative for negative ints */
	PY_LONG_LV_TAG,  /* 3.12+: lv_tag = count << 3 | sign (0 +, 1 zero, 2 -) */
};

/* Layout of a dict's keys object (PyDictKeysObject). */
enum py_dict_keys_model {
	PY_DICT_KEYS_SIZE,  /* 3.8-3.10: dk_size at 8, indices at 40, 24-byte entries */
	PY_DICT_KEYS_LOG2,  /* 3.11+: log2 size at 8, log2 index bytes at 9, kind at 10,
			     * nentries at 24, indices at 32; str-only keys 16-byte entries */
};

/* What a split dict's ma_values points at. */
enum py_dict_values_model {
	PY_DICT_VALUES_ARRAY,  /* 3.8-3.12: the array of values itself */
	PY_DICT_VALUES_HEADED, /* 3.13+: capacity, size, embedded, valid, then the array at 8 */
};

/* Where an instance of a Python class keeps its attributes. */
enum py_instance_dict_model {
	PY_INSTANCE_DICTOFFSET, /* tp_dictoffset only (3.8-3.10) */
	PY_INSTANCE_MANAGED_311, /* MANAGED_DICT: values at obj-32, dict at obj-24 */
	PY_INSTANCE_MANAGED_312, /* MANAGED_DICT: obj-24 is a dict, or values + 1 when odd */
	PY_INSTANCE_INLINE_313,  /* INLINE_VALUES at obj+tp_basicsize while valid, else the
				  * dict at obj-24 (obj-8 free-threaded) */
};

struct py_object_rules {
	int minor;
	bool free_threaded;
	enum py_long_model long_model;
	enum py_dict_keys_model dict_keys;
	enum py_dict_values_model dict_values;
	enum py_instance_dict_model instance_dict;
	int32_t managed_dict_offset; /* from the object, for MANAGED/INLINE models */
	/* tp_flags bits: Py_TPFLAGS_MANAGED_DICT (3.11+), Py_TPFLAGS_INLINE_VALUES
	 * (3.13+); 0: the version has no such bit */
	uint32_t tpflags_managed_dict, tpflags_inline_values;
	/* tp_flags bits whose objects have pointers before the GC header
	 * (_PyType_PreHeaderSize: MANAGED_DICT 3.11, | MANAGED_WEAKREF 3.12+) */
	uint32_t tpflags_preheader;
	/* co_localspluskinds bits (3.11+): 0x20 local, 0x40 cell, 0x80 free,
	 * 0x10 hidden (3.12+: inlined comprehension variables) */
	bool has_localsplus;
	/* 3.13 and 3.14 publish no ht_cached_keys offset: its distance from
	 * tp_name (PyHeapTypeObject after PyTypeObject); 0 = use the offsets */
	int32_t cached_keys_from_tp_name;
	/* threading locks wait on the parking lot (3.13+): the futex word is
	 * a waiter's semaphore, the lock's address 8 bytes before it */
	bool parking_lot;
};

/* The object rules of 3.minor, or NULL. */
const struct py_object_rules *py_object_rules_for(int minor, bool free_threaded);

#endif
