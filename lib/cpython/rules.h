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

struct py_rules {
	int minor;
	bool free_threaded;
	enum py_frame_model frame_model;
	enum py_instr_unit instr_unit;
	/* frame owner values from this one up are not Python frames (shims,
	 * C-stack entries); 0: frames have no owner field */
	int first_shim_owner;
	/* tag bits of a _PyStackRef to clear from the frame's code reference
	 * (3.14+); 0: a plain pointer */
	uint64_t stackref_tag_mask;
	/* bits of PyASCIIObject.state before kind:3, compact:1, ascii:1 */
	int str_state_interned_bits;
	enum py_line_format line_format;
	enum py_gil_home gil_home;
	bool has_debug_offsets; /* _Py_DebugOffsets at &_PyRuntime (3.13+) */
	enum py_thread_id thread_id;
};

/* The row for 3.minor (free-threaded or not), or NULL if we have none. */
const struct py_rules *py_rules_for(int minor, bool free_threaded);

/* The bit of PyASCIIObject.state that says "ascii". */
static inline unsigned py_rules_str_ascii_bit(const struct py_rules *r)
{
	return (unsigned)r->str_state_interned_bits + 4;
}

/*
 * How objects keep what pydump reads out of them (arguments and locals,
 * thread names). Struct offsets come with the other offsets; these are
 * the encodings around them, per minor (free-threaded rows apart).
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
