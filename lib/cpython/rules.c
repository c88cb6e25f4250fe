/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/rules.h"

#include <stddef.h>
#include <stdint.h>

/* Sources: CPython's Include/ (cpython/frameobject.h, internal/pycore_frame.h,
 * cpython/unicodeobject.h, internal/pycore_gil.h, cpython/pystate.h) per tag;
 * ../shared/reference/cpython-internals.md summarizes them. */
#define GIL_BUILD(m, model, instr, shim, tags, lines, gil, dbg, tid)                            \
	{ .minor = m, .free_threaded = false, .frame_model = model, .instr_unit = instr,         \
	  .first_shim_owner = shim, .stackref_tag_mask = tags, .str_state_interned_bits = 2,   \
	  .line_format = lines, .gil_home = gil, .has_debug_offsets = dbg, .thread_id = tid,   \
	  .async = ASYNC_##m }

/*
 * asyncio, per minor. Sources: Lib/asyncio/tasks.py and Modules/_asynciomodule.c
 * (where tasks are kept), Include/internal/pycore_frame.h (PyFrameState),
 * Objects/genobject.c (_PyGen_yf: how a suspended await is recognised and
 * where the awaited object sits), Include/internal/pycore_object.h (managed
 * dicts), Include/opcode.h (RESUME). 3.15 renumbered the frame states and
 * keeps the awaited object one slot deeper (stackpointer[-2]).
 */
#define NO_STATE INT8_MIN
#define ASYNC_NONE { .task_lists = PY_TASKS_UNSUPPORTED }
#define ASYNC_8 ASYNC_NONE
#define ASYNC_9 ASYNC_NONE
#define ASYNC_10 ASYNC_NONE
#define ASYNC_11                                                                               \
	{ .task_lists = PY_TASKS_ALL_WEAKSET, .yield_from = PY_YF_NEXT_RESUME,                 \
	  .managed_dict = PY_MDICT_PREHEADER, .running_loop = PY_LOOP_TS_DICT_HOLDER,          \
	  .gen_created = -2, .gen_suspended = -1, .gen_suspended_yf = NO_STATE,                \
	  .gen_suspended_yf_locked = NO_STATE, .gen_executing = 0, .gen_completed = 1,         \
	  .gen_cleared = 4, .resume_op = 151, .resume_op_alt = 150 /* RESUME_QUICK */,         \
	  .await_slot = -1, .frame_owned_by_generator = 1, .long_tag = false,                  \
	  .tpflags_managed_dict = 1u << 4, .tpflags_inline_values = 0 }
#define ASYNC_12                                                                               \
	{ .task_lists = PY_TASKS_SCHEDULED_EAGER, .yield_from = PY_YF_NEXT_RESUME,             \
	  .managed_dict = PY_MDICT_TAGGED, .running_loop = PY_LOOP_TS_DICT,                    \
	  .gen_created = -2, .gen_suspended = -1, .gen_suspended_yf = NO_STATE,                \
	  .gen_suspended_yf_locked = NO_STATE, .gen_executing = 0, .gen_completed = 1,         \
	  .gen_cleared = 4, .resume_op = 151, .resume_op_alt = 240 /* INSTRUMENTED_RESUME */,  \
	  .await_slot = -1, .frame_owned_by_generator = 1, .long_tag = true,                   \
	  .tpflags_managed_dict = 1u << 4, .tpflags_inline_values = 0 }
#define ASYNC_13_14(lists)                                                                     \
	{ .task_lists = lists, .yield_from = PY_YF_FRAME_STATE,                                \
	  .managed_dict = PY_MDICT_INLINE, .running_loop = PY_LOOP_TSTATE,                     \
	  .gen_created = -3, .gen_suspended = -2, .gen_suspended_yf = -1,                      \
	  .gen_suspended_yf_locked = NO_STATE, .gen_executing = 0, .gen_completed = 1,         \
	  .gen_cleared = 4, .await_slot = -1, .frame_owned_by_generator = 1, .long_tag = true, \
	  .tpflags_managed_dict = 1u << 4, .tpflags_inline_values = 1u << 2 }
#define ASYNC_13 ASYNC_13_14(PY_TASKS_SCHEDULED_EAGER)
#define ASYNC_14 ASYNC_13_14(PY_TASKS_LINKED_LISTS)
#define ASYNC_15                                                                               \
	{ .task_lists = PY_TASKS_LINKED_LISTS, .yield_from = PY_YF_FRAME_STATE,                \
	  .managed_dict = PY_MDICT_INLINE, .running_loop = PY_LOOP_TSTATE,                     \
	  .gen_created = 0, .gen_suspended = 1, .gen_suspended_yf = 2,                         \
	  .gen_suspended_yf_locked = 3, .gen_executing = 4, .gen_completed = NO_STATE,         \
	  .gen_cleared = 5, .await_slot = -2, .frame_owned_by_generator = 1, .long_tag = true, \
	  .tpflags_managed_dict = 1u << 4, .tpflags_inline_values = 1u << 2 }

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
