/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every struct offset a CPython walker uses, as one X-macro list. Shared
 * verbatim by lib/ (user space) and the BPF programs (embedded with them),
 * so both sides agree on the layout of struct py_offsets. No includes: it
 * must compile in either world.
 */
#ifndef PYBPF_PY_OFFSET_FIELDS_H
#define PYBPF_PY_OFFSET_FIELDS_H

#define PY_OFFSET_FIELDS(X)                                                    \
	X(runtime_interpreters_head)                                           \
	X(runtime_gil)                                                         \
	X(interp_next)                                                         \
	X(interp_threads_head)                                                 \
	X(interp_ceval_gil)                                                    \
	X(gil_last_holder)                                                     \
	X(gil_locked)                                                          \
	X(gil_switch_number)                                                   \
	X(tstate_next)                                                         \
	X(tstate_interp)                                                       \
	X(tstate_frame)                                                        \
	X(cframe_current_frame)                                                \
	X(tstate_thread_id)                                                    \
	X(tstate_native_thread_id)                                             \
	X(frame_previous)                                                      \
	X(frame_code)                                                          \
	X(frame_instr)                                                         \
	X(frame_owner)                                                         \
	X(frame_is_entry)                                                      \
	X(frame_tlbc_index)                                                    \
	X(code_filename)                                                       \
	X(code_name)                                                           \
	X(code_qualname)                                                       \
	X(code_firstlineno)                                                    \
	X(code_linetable)                                                      \
	X(code_adaptive)                                                       \
	X(code_tlbc)                                                           \
	X(object_type)                                                         \
	X(bytes_size)                                                          \
	X(bytes_data)                                                          \
	X(unicode_length)                                                      \
	X(unicode_state)                                                       \
	X(unicode_ascii_size)                                                  \
	X(unicode_compact_size)                                                 \
	/* locals, objects, modules: user space only (pydump) */               \
	X(interp_modules)                                                      \
	X(frame_localsplus)                                                    \
	X(frame_globals)                                                       \
	X(code_argcount)                                                       \
	X(code_kwonlyargcount)                                                 \
	X(code_flags)                                                          \
	X(code_varnames)                                                       \
	X(code_cellvars)                                                       \
	X(code_freevars)                                                       \
	X(code_localsplusnames)                                                \
	X(code_localspluskinds)                                                \
	X(type_name)                                                           \
	X(type_flags)                                                          \
	X(type_basicsize)                                                      \
	X(type_dictoffset)                                                     \
	X(heaptype_cached_keys)                                                \
	X(varobject_size)                                                      \
	X(tuple_items)                                                         \
	X(list_items)                                                          \
	X(float_value)                                                         \
	X(long_tag)                                                            \
	X(long_digits)                                                         \
	X(dict_keys)                                                           \
	X(dict_values)                                                         \
	X(set_used)                                                            \
	X(set_mask)                                                            \
	X(set_table)                                                           \
	X(cell_ref)

#endif
