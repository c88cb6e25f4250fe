/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every struct offset a CPython walker uses, as one X-macro list. Shared
 * verbatim by lib/ (user space) and the BPF programs (embedded with them),
 * so both sides agree on the layout of struct py_offsets. No includes: it
 * must compile in either world.
 *
 * X(name, first_minor, last_minor, debug_slot)
 *   first_minor..last_minor: the minor versions whose walker cannot do
 *     without the field (py_offsets_missing checks it; 99: every later
 *     one); 0, 0: no walker needs it (pygil's GIL fields, free-threaded
 *     extras).
 *   debug_slot: the _Py_DebugOffsets field it is read from (3.13+), as
 *     "section.field" (lib/cpython/offsets_debug.c), or 0: not published
 *     there (older versions only, or derived: see offsets_debug.c).
 * Where a field lives in CPython's structs for 3.8-3.12 (DWARF, generated
 * tables): offsets/field_specs.def, one line per field and version range.
 */
#ifndef PYBPF_PY_OFFSET_FIELDS_H
#define PYBPF_PY_OFFSET_FIELDS_H

#define PY_OFFSET_FIELDS(X)                                                          \
	X(runtime_interpreters_head, 8, 99, "runtime_state.interpreters_head")       \
	X(runtime_gil, 0, 0, 0)                                                      \
	X(interp_next, 8, 99, "interpreter_state.next")                              \
	X(interp_threads_head, 8, 99, "interpreter_state.threads_head")              \
	X(interp_ceval_gil, 0, 0, "interpreter_state.ceval_gil")                     \
	X(gil_last_holder, 0, 0, 0)                                                  \
	X(gil_locked, 0, 0, 0)                                                       \
	X(gil_switch_number, 0, 0, 0)                                                \
	X(tstate_next, 8, 99, "thread_state.next")                                   \
	X(tstate_interp, 8, 99, "thread_state.interp")                               \
	X(tstate_frame, 8, 99, "thread_state.current_frame")                         \
	X(tstate_base_frame, 0, 0, "thread_state.base_frame")                        \
	X(cframe_current_frame, 11, 12, 0)                                           \
	X(tstate_thread_id, 8, 99, "thread_state.thread_id")                         \
	X(tstate_native_thread_id, 11, 99, "thread_state.native_thread_id")          \
	X(frame_previous, 8, 99, "interpreter_frame.previous")                       \
	X(frame_code, 8, 99, "interpreter_frame.executable")                         \
	X(frame_instr, 8, 99, "interpreter_frame.instr_ptr")                         \
	X(frame_owner, 11, 99, "interpreter_frame.owner")                            \
	X(frame_is_entry, 11, 11, 0)                                                 \
	X(frame_func, 0, 0, 0)                                                       \
	X(func_code, 0, 0, 0)                                                        \
	X(func_version, 0, 0, 0)                                                     \
	X(frame_tlbc_index, 0, 0, "interpreter_frame.tlbc_index")                    \
	X(code_filename, 8, 99, "code_object.filename")                              \
	X(code_name, 8, 99, "code_object.name")                                      \
	X(code_qualname, 11, 99, "code_object.qualname")                             \
	X(code_firstlineno, 8, 99, "code_object.firstlineno")                        \
	X(code_linetable, 8, 99, "code_object.linetable")                            \
	X(code_adaptive, 11, 99, "code_object.co_code_adaptive")                     \
	X(code_tlbc, 0, 0, "code_object.co_tlbc")                                    \
	X(code_code, 8, 10, 0)                                                       \
	X(code_size, 11, 99, 0)                                                      \
	X(object_type, 8, 99, "pyobject.ob_type")                                    \
	X(bytes_size, 8, 99, "bytes_object.ob_size")                                 \
	X(bytes_data, 8, 99, "bytes_object.ob_sval")                                 \
	X(unicode_length, 8, 99, "unicode_object.length")                            \
	X(unicode_state, 8, 99, "unicode_object.state")                              \
	X(unicode_ascii_size, 8, 99, "unicode_object.asciiobject_size")              \
	X(unicode_compact_size, 8, 99, "unicode_object.compactunicodeobject_size")   \
	/* locals, objects, modules: user space only (pydump) */                      \
	X(interp_modules, 0, 0, "interpreter_state.imports_modules")                  \
	X(frame_localsplus, 0, 0, "interpreter_frame.localsplus")                     \
	X(frame_globals, 0, 0, 0)                                                     \
	X(code_argcount, 0, 0, "code_object.argcount")                                \
	X(code_kwonlyargcount, 0, 0, 0)                                               \
	X(code_flags, 0, 0, 0)                                                        \
	X(code_varnames, 0, 0, 0)                                                     \
	X(code_cellvars, 0, 0, 0)                                                     \
	X(code_freevars, 0, 0, 0)                                                     \
	X(code_localsplusnames, 0, 0, "code_object.localsplusnames")                  \
	X(code_localspluskinds, 0, 0, "code_object.localspluskinds")                  \
	X(type_name, 0, 0, "type_object.tp_name")                                     \
	X(type_flags, 0, 0, "type_object.tp_flags")                                   \
	X(type_basicsize, 0, 0, "type_object.tp_basicsize")                           \
	X(type_dictoffset, 0, 0, "type_object.tp_dictoffset")                         \
	X(heaptype_cached_keys, 0, 0, "heap_type_object.ht_cached_keys")              \
	X(varobject_size, 0, 0, "tuple_object.ob_size")                               \
	X(tuple_items, 0, 0, "tuple_object.ob_item")                                  \
	X(list_items, 0, 0, "list_object.ob_item")                                    \
	X(float_value, 0, 0, "float_object.ob_fval")                                  \
	X(long_tag, 0, 0, "long_object.lv_tag")                                       \
	X(long_digits, 0, 0, "long_object.ob_digit")                                  \
	X(dict_keys, 0, 0, "dict_object.ma_keys")                                     \
	X(dict_values, 0, 0, "dict_object.ma_values")                                 \
	X(set_used, 0, 0, "set_object.used")                                          \
	X(set_mask, 0, 0, "set_object.mask")                                          \
	X(set_table, 0, 0, "set_object.table")                                        \
	X(cell_ref, 0, 0, 0)

#endif
