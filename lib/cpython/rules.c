/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/rules.h"

#include <stddef.h>

/* Sources: CPython's Include/ (cpython/frameobject.h, internal/pycore_frame.h,
 * cpython/unicodeobject.h, internal/pycore_gil.h, cpython/pystate.h) per tag;
 * ../shared/reference/cpython-internals.md summarizes them. */
#define GIL_BUILD(m, model, instr, shim, tags, lines, gil, dbg, tid)                            \
	{ .minor = m, .free_threaded = false, .frame_model = model, .instr_unit = instr,         \
	  .first_shim_owner = shim, .stackref_tag_mask = tags, .str_state_interned_bits = 2,   \
	  .line_format = lines, .gil_home = gil, .has_debug_offsets = dbg, .thread_id = tid }

static const struct py_rules rules[] = {
	GIL_BUILD(8, PY_FRAMES_OBJECTS, PY_INSTR_LASTI_BYTES, 0, 0, PY_LINES_LNOTAB,
		  PY_GIL_IN_RUNTIME, false, PY_TID_FROM_PTHREAD),
	GIL_BUILD(9, PY_FRAMES_OBJECTS, PY_INSTR_LASTI_BYTES, 0, 0, PY_LINES_LNOTAB,
		  PY_GIL_IN_RUNTIME, false, PY_TID_FROM_PTHREAD),
	GIL_BUILD(10, PY_FRAMES_OBJECTS, PY_INSTR_LASTI_UNITS, 0, 0, PY_LINES_PEP626,
		  PY_GIL_IN_RUNTIME, false, PY_TID_FROM_PTHREAD),
	/* 3.11: owner exists, but shims arrive in 3.12 (FRAME_OWNED_BY_CSTACK = 3) */
	GIL_BUILD(11, PY_FRAMES_CFRAME, PY_INSTR_POINTER, 0, 0, PY_LINES_PEP657,
		  PY_GIL_IN_RUNTIME, false, PY_TID_NATIVE),
	GIL_BUILD(12, PY_FRAMES_CFRAME, PY_INSTR_POINTER, 3, 0, PY_LINES_PEP657,
		  PY_GIL_IN_INTERPRETER, false, PY_TID_NATIVE),
	GIL_BUILD(13, PY_FRAMES_CURRENT, PY_INSTR_POINTER, 3, 0, PY_LINES_PEP657,
		  PY_GIL_IN_INTERPRETER, true, PY_TID_NATIVE),
	/* 3.14: f_executable is a _PyStackRef; owner 3 = INTERPRETER, 4 = CSTACK */
	GIL_BUILD(14, PY_FRAMES_CURRENT, PY_INSTR_POINTER, 3, 3, PY_LINES_PEP657,
		  PY_GIL_IN_INTERPRETER, true, PY_TID_NATIVE),
	GIL_BUILD(15, PY_FRAMES_CURRENT, PY_INSTR_POINTER, 3, 3, PY_LINES_PEP657,
		  PY_GIL_IN_INTERPRETER, true, PY_TID_NATIVE),
	/* Free-threaded builds: 32-byte object header (offsets say so), the
	 * interned state a whole byte from 3.14. No GIL unless re-enabled. */
	{ .minor = 13, .free_threaded = true, .frame_model = PY_FRAMES_CURRENT,
	  .instr_unit = PY_INSTR_POINTER, .first_shim_owner = 3, .stackref_tag_mask = 0,
	  .str_state_interned_bits = 2, .line_format = PY_LINES_PEP657,
	  .gil_home = PY_GIL_IN_INTERPRETER, .has_debug_offsets = true, .thread_id = PY_TID_NATIVE },
	{ .minor = 14, .free_threaded = true, .frame_model = PY_FRAMES_CURRENT,
	  .instr_unit = PY_INSTR_POINTER, .first_shim_owner = 3, .stackref_tag_mask = 3,
	  .str_state_interned_bits = 8, .line_format = PY_LINES_PEP657,
	  .gil_home = PY_GIL_IN_INTERPRETER, .has_debug_offsets = true, .thread_id = PY_TID_NATIVE },
	{ .minor = 15, .free_threaded = true, .frame_model = PY_FRAMES_CURRENT,
	  .instr_unit = PY_INSTR_POINTER, .first_shim_owner = 3, .stackref_tag_mask = 3,
	  .str_state_interned_bits = 8, .line_format = PY_LINES_PEP657,
	  .gil_home = PY_GIL_IN_INTERPRETER, .has_debug_offsets = true, .thread_id = PY_TID_NATIVE },
};

const struct py_rules *py_rules_for(int minor, bool free_threaded)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].minor == minor && rules[i].free_threaded == free_threaded)
			return &rules[i];
	return NULL;
}

/*
 * Object encodings, per minor. Sources: Include/ (cpython/longintrepr.h,
 * internal/pycore_dict.h, internal/pycore_object.h, internal/pycore_code.h)
 * of each tag, Objects/dict-common.h for 3.8-3.10; ht_cached_keys for
 * 3.13 and 3.14 measured in Debian's and pyenv's builds (its distance from
 * tp_name: 856, as in 3.12; 3.15 publishes the offset itself). Locks
 * park on Python/parking_lot.c from 3.13 (struct wait_entry: park_arg,
 * addr, then the semaphore whose futex word the waiter sleeps on).
 */
#define OBJECTS(m, ft, lng, keys, values, inst, mdict, lplus, ck)                              \
	{ .minor = m, .free_threaded = ft, .long_model = lng, .dict_keys = keys,                 \
	  .dict_values = values, .instance_dict = inst, .managed_dict_offset = mdict,            \
	  .has_localsplus = lplus, .cached_keys_from_tp_name = ck, .parking_lot = m >= 13 }

static const struct py_object_rules object_rules[] = {
	OBJECTS(8, false, PY_LONG_OB_SIZE, PY_DICT_KEYS_SIZE, PY_DICT_VALUES_ARRAY,
		PY_INSTANCE_DICTOFFSET, 0, false, 0),
	OBJECTS(9, false, PY_LONG_OB_SIZE, PY_DICT_KEYS_SIZE, PY_DICT_VALUES_ARRAY,
		PY_INSTANCE_DICTOFFSET, 0, false, 0),
	OBJECTS(10, false, PY_LONG_OB_SIZE, PY_DICT_KEYS_SIZE, PY_DICT_VALUES_ARRAY,
		PY_INSTANCE_DICTOFFSET, 0, false, 0),
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
