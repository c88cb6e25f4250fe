/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/rules.h"

#include <stddef.h>
#include <stdint.h>

/* Sources: CPython's Include/ (cpython/frameobject.h, internal/pycore_frame.h,
 * cpython/unicodeobject.h, internal/pycore_gil.h, cpython/pystate.h) per tag;
 * ../shared/reference/cpython-internals.md summarizes them. */
/* 3.11+ (_PyInterpreterFrame, PyCodeObject with PyObject_VAR_HEAD):
 * FRAME_OWNED_BY_GENERATOR is 1; _co_firsttraceable is an int followed by
 * the co_extra pointer, then co_code_adaptive (16 bytes from it); the
 * free-threaded 3.14+ builds put co_tlbc between (24). 3.12+: co_version
 * is the uint32 before co_localsplusnames and co_localspluskinds, which
 * precede co_filename (20 bytes from it). */
#define V311_GEN_OWNER 1
#define V311_TRACEABLE 16
#define V312_VERSION 20
#define GIL_BUILD(m, model, instr, shim, tags, lines, gil, dbg_since, tid)                      \
	{ .minor = m, .free_threaded = false, .frame_model = model, .instr_unit = instr,         \
	  .first_shim_owner = shim, .stackref_tag_mask = tags, .str_state_interned_bits = 2,   \
	  .line_format = lines, .gil_home = gil, .has_debug_offsets = (dbg_since) != 0,         \
	  .debug_offsets_since = dbg_since, .thread_id = tid,                                     \
	  .generator_owner = (m) >= 11 ? V311_GEN_OWNER : -1,                                    \
	  .firsttraceable_before_code = (m) >= 11 ? V311_TRACEABLE : 0,                          \
	  .version_before_filename = (m) >= 12 ? V312_VERSION : 0, .async = ASYNC_##m,       \
	  .gc = GC_##m }

/*
 * The first pre-release with the _Py_DebugOffsets layout of the final
 * release (CPython's Include/internal/pycore_debug_offsets.h, pycore_runtime.h
 * in 3.13, per tag): 3.13.0rc2 added free_threaded, the GIL state fields and
 * the list/dict/float/long/bytes/unicode/gc sections; 3.14.0b2 added
 * code_object_generation, tlbc_generation and llist_node; 3.15.0b4 inserted
 * thread_state.last_profiled_frame_seq, which moved every later slot.
 */
#define DEBUG_OFFSETS_313 0x030d00c2u /* 3.13.0rc2 */
#define DEBUG_OFFSETS_314 0x030e00b2u /* 3.14.0b2 */
#define DEBUG_OFFSETS_315 0x030f00b4u /* 3.15.0b4 */

/*
 * asyncio, per minor. Sources: Lib/asyncio/tasks.py and Modules/_asynciomodule.c
 * (where tasks are kept), Include/internal/pycore_frame.h (PyFrameState),
 * Objects/genobject.c (_PyGen_yf: how a suspended await is recognised and
 * where the awaited object sits), Include/opcode.h (RESUME). 3.15
 * renumbered the frame states and keeps the awaited object one slot
 * deeper (stackpointer[-2]).
 */
#define NO_STATE INT8_MIN
#define ASYNC_NONE { .task_lists = PY_TASKS_UNSUPPORTED }
#define ASYNC_8 ASYNC_NONE
#define ASYNC_9 ASYNC_NONE
#define ASYNC_10 ASYNC_NONE
#define ASYNC_11                                                                               \
	{ .task_lists = PY_TASKS_ALL_WEAKSET, .yield_from = PY_YF_NEXT_RESUME,                 \
	  .running_loop = PY_LOOP_TS_DICT_HOLDER,                                              \
	  .gen_created = -2, .gen_suspended = -1, .gen_suspended_yf = NO_STATE,                \
	  .gen_suspended_yf_locked = NO_STATE, .gen_executing = 0, .gen_completed = 1,         \
	  .gen_cleared = 4, .resume_op = 151, .resume_op_alt = 150 /* RESUME_QUICK */,         \
	  .await_slot = -1 }
#define ASYNC_12                                                                               \
	{ .task_lists = PY_TASKS_SCHEDULED_EAGER, .yield_from = PY_YF_NEXT_RESUME,             \
	  .running_loop = PY_LOOP_TS_DICT,                                                     \
	  .gen_created = -2, .gen_suspended = -1, .gen_suspended_yf = NO_STATE,                \
	  .gen_suspended_yf_locked = NO_STATE, .gen_executing = 0, .gen_completed = 1,         \
	  .gen_cleared = 4, .resume_op = 151, .resume_op_alt = 240 /* INSTRUMENTED_RESUME */,  \
	  .await_slot = -1 }
#define ASYNC_13_14(lists)                                                                     \
	{ .task_lists = lists, .yield_from = PY_YF_FRAME_STATE,                                \
	  .running_loop = PY_LOOP_TSTATE,                                                      \
	  .gen_created = -3, .gen_suspended = -2, .gen_suspended_yf = -1,                      \
	  .gen_suspended_yf_locked = NO_STATE, .gen_executing = 0, .gen_completed = 1,         \
	  .gen_cleared = 4, .await_slot = -1 }
#define ASYNC_13 ASYNC_13_14(PY_TASKS_SCHEDULED_EAGER)
#define ASYNC_14 ASYNC_13_14(PY_TASKS_LINKED_LISTS)
#define ASYNC_15                                                                               \
	{ .task_lists = PY_TASKS_LINKED_LISTS, .yield_from = PY_YF_FRAME_STATE,                \
	  .running_loop = PY_LOOP_TSTATE,                                                      \
	  .gen_created = 0, .gen_suspended = 1, .gen_suspended_yf = 2,                         \
	  .gen_suspended_yf_locked = 3, .gen_executing = 4, .gen_completed = NO_STATE,         \
	  .gen_cleared = 5, .await_slot = -2 }

/*
 * The cyclic collector's state, per minor (Include/internal/pycore_gc.h,
 * pycore_interp.h, pycore_runtime.h of each tag; checked by offsetof()
 * against the headers and by walking the lists of the matrix's live
 * interpreters, ../shared/reference/memory-and-gc.md 1b-1d). A GC state
 * begins with trash_delete_later, enabled and debug (3.15: enabled,
 * debug), then generations[3] of struct gc_generation {PyGC_Head head;
 * int threshold, count;} (24 bytes), the permanent generation after them
 * (after generation0, a pointer, through 3.13). 3.14.0-3.14.4 ran the
 * incremental collector (young, old[0], old[1] where generations were,
 * 240 bytes); 3.14.5 brought the generational one back (264 bytes, the
 * same places). Debian's 3.13 aligns PyGC_Head to 4 (gchead-alignment.diff):
 * its generations start at +20.
 */
#define GC_OLD(where, at) { .home = where, .state = at, .size = 240, .heads = 24,      \
			    .permanent = 104, .collecting = 200 }
#define GC_8 GC_OLD(PY_GC_IN_RUNTIME, 344)
#define GC_9 GC_OLD(PY_GC_IN_INTERPRETER, 616)
#define GC_10 GC_OLD(PY_GC_IN_INTERPRETER, 616)
#define GC_11 GC_OLD(PY_GC_IN_INTERPRETER, 648)
#define GC_12 GC_OLD(PY_GC_IN_INTERPRETER, 112)
#define GC_13 { .home = PY_GC_IN_INTERPRETER, .state = 7400, .size = 240, .heads = 24,     \
		.heads_alt = 20, .permanent = 104, .collecting = 200 }
#define GC_14 { .home = PY_GC_IN_INTERPRETER, .state = 7408, .size = 264,                  \
		.size_incremental = 240, .heads = 24, .permanent = 96, .collecting = 192 }
#define GC_15 { .home = PY_GC_IN_INTERPRETER, .state = 7400, .size = 176, .heads = 8,      \
		.permanent = 80, .collecting = 112 }

static const struct py_rules rules[] = {
	GIL_BUILD(8, PY_FRAMES_OBJECTS, PY_INSTR_LASTI_BYTES, 0, 0, PY_LINES_LNOTAB,
		  PY_GIL_IN_RUNTIME, 0, PY_TID_FROM_PTHREAD),
	GIL_BUILD(9, PY_FRAMES_OBJECTS, PY_INSTR_LASTI_BYTES, 0, 0, PY_LINES_LNOTAB,
		  PY_GIL_IN_RUNTIME, 0, PY_TID_FROM_PTHREAD),
	GIL_BUILD(10, PY_FRAMES_OBJECTS, PY_INSTR_LASTI_UNITS, 0, 0, PY_LINES_PEP626,
		  PY_GIL_IN_RUNTIME, 0, PY_TID_FROM_PTHREAD),
	/* 3.11: owner exists, but shims arrive in 3.12 (FRAME_OWNED_BY_CSTACK = 3) */
	GIL_BUILD(11, PY_FRAMES_CFRAME, PY_INSTR_POINTER, 0, 0, PY_LINES_PEP657,
		  PY_GIL_IN_RUNTIME, 0, PY_TID_NATIVE),
	GIL_BUILD(12, PY_FRAMES_CFRAME, PY_INSTR_POINTER, 3, 0, PY_LINES_PEP657,
		  PY_GIL_IN_INTERPRETER, 0, PY_TID_NATIVE),
	GIL_BUILD(13, PY_FRAMES_CURRENT, PY_INSTR_POINTER, 3, 0, PY_LINES_PEP657,
		  PY_GIL_IN_INTERPRETER, DEBUG_OFFSETS_313, PY_TID_NATIVE),
	/* 3.14: f_executable is a _PyStackRef; owner 3 = INTERPRETER, 4 = CSTACK */
	GIL_BUILD(14, PY_FRAMES_CURRENT, PY_INSTR_POINTER, 3, 3, PY_LINES_PEP657,
		  PY_GIL_IN_INTERPRETER, DEBUG_OFFSETS_314, PY_TID_NATIVE),
	GIL_BUILD(15, PY_FRAMES_CURRENT, PY_INSTR_POINTER, 3, 3, PY_LINES_PEP657,
		  PY_GIL_IN_INTERPRETER, DEBUG_OFFSETS_315, PY_TID_NATIVE),
	/* Free-threaded builds: 32-byte object header (offsets say so), the
	 * interned state a whole byte from 3.14. No GIL unless re-enabled. */
	{ .minor = 13, .free_threaded = true, .frame_model = PY_FRAMES_CURRENT,
	  .instr_unit = PY_INSTR_POINTER, .first_shim_owner = 3, .stackref_tag_mask = 0,
	  .str_state_interned_bits = 2, .line_format = PY_LINES_PEP657,
	  .gil_home = PY_GIL_IN_INTERPRETER, .has_debug_offsets = true,
	  .debug_offsets_since = DEBUG_OFFSETS_313, .thread_id = PY_TID_NATIVE,
	  .generator_owner = V311_GEN_OWNER, .firsttraceable_before_code = V311_TRACEABLE,
	  .version_before_filename = V312_VERSION },
	{ .minor = 14, .free_threaded = true, .frame_model = PY_FRAMES_CURRENT,
	  .instr_unit = PY_INSTR_POINTER, .first_shim_owner = 3, .stackref_tag_mask = 3,
	  .str_state_interned_bits = 8, .line_format = PY_LINES_PEP657,
	  .gil_home = PY_GIL_IN_INTERPRETER, .has_debug_offsets = true,
	  .debug_offsets_since = DEBUG_OFFSETS_314, .thread_id = PY_TID_NATIVE,
	  .generator_owner = V311_GEN_OWNER, .firsttraceable_before_code = V311_TRACEABLE + 8,
	  .version_before_filename = V312_VERSION },
	{ .minor = 15, .free_threaded = true, .frame_model = PY_FRAMES_CURRENT,
	  .instr_unit = PY_INSTR_POINTER, .first_shim_owner = 3, .stackref_tag_mask = 3,
	  .str_state_interned_bits = 8, .line_format = PY_LINES_PEP657,
	  .gil_home = PY_GIL_IN_INTERPRETER, .has_debug_offsets = true,
	  .debug_offsets_since = DEBUG_OFFSETS_315, .thread_id = PY_TID_NATIVE,
	  .generator_owner = V311_GEN_OWNER, .firsttraceable_before_code = V311_TRACEABLE + 8,
	  .version_before_filename = V312_VERSION },
};

const struct py_rules *py_rules_for(int minor, bool free_threaded)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].minor == minor && rules[i].free_threaded == free_threaded)
			return &rules[i];
	return NULL;
}

bool py_rules_debug_layout_valid(const struct py_rules *r, uint32_t hex)
{
	bool final = ((hex >> 4) & 0xf) == 0xf;

	if (!r->has_debug_offsets || (hex >> 16) != (0x0300u | (uint32_t)r->minor))
		return false;
	return final || hex >= r->debug_offsets_since;
}

const char *py_rules_bpf_refusal(const struct py_rules *r)
{
	if (r->free_threaded)
		return "not supported by the BPF tools: threads of free-threaded builds run "
		       "their own copies of the bytecode, which the BPF walker does not "
		       "follow, so line numbers would be wrong";
	return NULL;
}

/*
 * Object encodings, per minor. Sources: Include/ (cpython/longintrepr.h,
 * internal/pycore_dict.h, internal/pycore_object.h, internal/pycore_code.h)
 * of each tag, Objects/dict-common.h for 3.8-3.10; ht_cached_keys for
 * 3.13 and 3.14 measured in Debian's and pyenv's builds (its distance from
 * tp_name: 856, as in 3.12; 3.15 publishes the offset itself); 3.8-3.10's
 * from the headers (ht_qualname, just before it, at 864, 856 and 864 from
 * the type: the census names classes by it). Locks
 * park on Python/parking_lot.c from 3.13 (struct wait_entry: park_arg,
 * addr, then the semaphore whose futex word the waiter sleeps on).
 * Py_TPFLAGS_MANAGED_DICT is bit 4 from 3.11 (object.h), and
 * Py_TPFLAGS_INLINE_VALUES bit 2 from 3.13; Py_TPFLAGS_MANAGED_WEAKREF
 * bit 3 from 3.12, when both make _PyType_PreHeaderSize 16 bytes (3.11:
 * the managed dict alone, values and dict pointers).
 */
#define TPFLAGS_MANAGED_DICT (1u << 4)
#define TPFLAGS_INLINE_VALUES (1u << 2)
#define TPFLAGS_MANAGED_WEAKREF (1u << 3) /* 3.12+ */
#define OBJECTS(m, ft, lng, keys, values, inst, mdict, lplus, ck)                              \
	{ .minor = m, .free_threaded = ft, .long_model = lng, .dict_keys = keys,                 \
	  .dict_values = values, .instance_dict = inst, .managed_dict_offset = mdict,            \
	  .tpflags_managed_dict = (m) >= 11 ? TPFLAGS_MANAGED_DICT : 0,                          \
	  .tpflags_inline_values = (m) >= 13 ? TPFLAGS_INLINE_VALUES : 0,                        \
	  .tpflags_preheader = (m) >= 12   ? TPFLAGS_MANAGED_DICT | TPFLAGS_MANAGED_WEAKREF      \
			       : (m) == 11 ? TPFLAGS_MANAGED_DICT                                \
					   : 0,                                                  \
	  .has_localsplus = lplus, .cached_keys_from_tp_name = ck, .parking_lot = m >= 13 }

static const struct py_object_rules object_rules[] = {
	OBJECTS(8, false, PY_LONG_OB_SIZE, PY_DICT_KEYS_SIZE, PY_DICT_VALUES_ARRAY,
		PY_INSTANCE_DICTOFFSET, 0, false, 848),
	OBJECTS(9, false, PY_LONG_OB_SIZE, PY_DICT_KEYS_SIZE, PY_DICT_VALUES_ARRAY,
		PY_INSTANCE_DICTOFFSET, 0, false, 840),
	OBJECTS(10, false, PY_LONG_OB_SIZE, PY_DICT_KEYS_SIZE, PY_DICT_VALUES_ARRAY,
		PY_INSTANCE_DICTOFFSET, 0, false, 848),
	OBJECTS(11, false, PY_LONG_OB_SIZE, PY_DICT_KEYS_LOG2, PY_DICT_VALUES_ARRAY,
		PY_INSTANCE_MANAGED_311, -24, true, 0),
	OBJECTS(12, false, PY_LONG_LV_TAG, PY_DICT_KEYS_LOG2, PY_DICT_VALUES_ARRAY,
		PY_INSTANCE_MANAGED_312, -24, true, 0),
	OBJECTS(13, false, PY_LONG_LV_TAG, PY_DICT_KEYS_LOG2, PY_DICT_VALUES_HEADED,
		PY_INSTANCE_INLINE_313, -24, true, 856),
	OBJECTS(14, false, PY_LONG_LV_TAG, PY_DICT_KEYS_LOG2, PY_DICT_VALUES_HEADED,
		PY_INSTANCE_INLINE_313, -24, true, 856),
	OBJECTS(15, false, PY_LONG_LV_TAG, PY_DICT_KEYS_LOG2, PY_DICT_VALUES_HEADED,
		PY_INSTANCE_INLINE_313, -24, true, 0),
	/* free-threaded: no GC header before the object, the dict pointer at -8 */
	OBJECTS(13, true, PY_LONG_LV_TAG, PY_DICT_KEYS_LOG2, PY_DICT_VALUES_HEADED,
		PY_INSTANCE_INLINE_313, -8, true, 856),
	OBJECTS(14, true, PY_LONG_LV_TAG, PY_DICT_KEYS_LOG2, PY_DICT_VALUES_HEADED,
		PY_INSTANCE_INLINE_313, -8, true, 856),
	OBJECTS(15, true, PY_LONG_LV_TAG, PY_DICT_KEYS_LOG2, PY_DICT_VALUES_HEADED,
		PY_INSTANCE_INLINE_313, -8, true, 0),
};

const struct py_object_rules *py_object_rules_for(int minor, bool free_threaded)
{
	for (size_t i = 0; i < sizeof(object_rules) / sizeof(object_rules[0]); i++)
		if (object_rules[i].minor == minor && object_rules[i].free_threaded == free_threaded)
			return &object_rules[i];
	return NULL;
}
