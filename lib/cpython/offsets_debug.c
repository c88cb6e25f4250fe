/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/offsets_debug.h"

#include <stdio.h>
#include <string.h>

/*
 * Each layout lists the u64 slots of _Py_DebugOffsets in order, as
 * "section.field" (Include/internal/pycore_debug_offsets.h, or
 * pycore_runtime.h in 3.13). Only the names matter to us; position is
 * what a name resolves to.
 */
static const char *const layout_313[] = {
	"cookie", "version", "free_threaded",
	"runtime_state.size", "runtime_state.finalizing", "runtime_state.interpreters_head",
	"interpreter_state.size", "interpreter_state.id", "interpreter_state.next",
	"interpreter_state.threads_head", "interpreter_state.gc",
	"interpreter_state.imports_modules", "interpreter_state.sysdict",
	"interpreter_state.builtins", "interpreter_state.ceval_gil",
	"interpreter_state.gil_runtime_state", "interpreter_state.gil_runtime_state_enabled",
	"interpreter_state.gil_runtime_state_locked", "interpreter_state.gil_runtime_state_holder",
	"thread_state.size", "thread_state.prev", "thread_state.next", "thread_state.interp",
	"thread_state.current_frame", "thread_state.thread_id", "thread_state.native_thread_id",
	"thread_state.datastack_chunk", "thread_state.status",
	"interpreter_frame.size", "interpreter_frame.previous", "interpreter_frame.executable",
	"interpreter_frame.instr_ptr", "interpreter_frame.localsplus", "interpreter_frame.owner",
	"code_object.size", "code_object.filename", "code_object.name", "code_object.qualname",
	"code_object.linetable", "code_object.firstlineno", "code_object.argcount",
	"code_object.localsplusnames", "code_object.localspluskinds",
	"code_object.co_code_adaptive",
	"pyobject.size", "pyobject.ob_type",
	"type_object.size", "type_object.tp_name", "type_object.tp_repr", "type_object.tp_flags",
	"tuple_object.size", "tuple_object.ob_item", "tuple_object.ob_size",
	"list_object.size", "list_object.ob_item", "list_object.ob_size",
	"dict_object.size", "dict_object.ma_keys", "dict_object.ma_values",
	"float_object.size", "float_object.ob_fval",
	"long_object.size", "long_object.lv_tag", "long_object.ob_digit",
	"bytes_object.size", "bytes_object.ob_size", "bytes_object.ob_sval",
	"unicode_object.size", "unicode_object.state", "unicode_object.length",
	"unicode_object.asciiobject_size",
	"gc.size", "gc.collecting",
	NULL,
};

/* Verified against the 3.14 and 3.15 headers; see offsets/README.md. */
static const char *const layout_314[] = {
	"cookie", "version", "free_threaded",
	"runtime_state.size", "runtime_state.finalizing", "runtime_state.interpreters_head",
	"interpreter_state.size", "interpreter_state.id", "interpreter_state.next",
	"interpreter_state.threads_head", "interpreter_state.threads_main", "interpreter_state.gc",
	"interpreter_state.imports_modules", "interpreter_state.sysdict",
	"interpreter_state.builtins", "interpreter_state.ceval_gil",
	"interpreter_state.gil_runtime_state", "interpreter_state.gil_runtime_state_enabled",
	"interpreter_state.gil_runtime_state_locked", "interpreter_state.gil_runtime_state_holder",
	"interpreter_state.code_object_generation", "interpreter_state.tlbc_generation",
	"thread_state.size", "thread_state.prev", "thread_state.next", "thread_state.interp",
	"thread_state.current_frame", "thread_state.thread_id", "thread_state.native_thread_id",
	"thread_state.datastack_chunk", "thread_state.status",
	"interpreter_frame.size", "interpreter_frame.previous", "interpreter_frame.executable",
	"interpreter_frame.instr_ptr", "interpreter_frame.localsplus", "interpreter_frame.owner",
	"interpreter_frame.stackpointer", "interpreter_frame.tlbc_index",
	"code_object.size", "code_object.filename", "code_object.name", "code_object.qualname",
	"code_object.linetable", "code_object.firstlineno", "code_object.argcount",
	"code_object.localsplusnames", "code_object.localspluskinds",
	"code_object.co_code_adaptive", "code_object.co_tlbc",
	"pyobject.size", "pyobject.ob_type",
	"type_object.size", "type_object.tp_name", "type_object.tp_repr", "type_object.tp_flags",
	"tuple_object.size", "tuple_object.ob_item", "tuple_object.ob_size",
	"list_object.size", "list_object.ob_item", "list_object.ob_size",
	"set_object.size", "set_object.used", "set_object.table", "set_object.mask",
	"dict_object.size", "dict_object.ma_keys", "dict_object.ma_values",
	"float_object.size", "float_object.ob_fval",
	"long_object.size", "long_object.lv_tag", "long_object.ob_digit",
	"bytes_object.size", "bytes_object.ob_size", "bytes_object.ob_sval",
	"unicode_object.size", "unicode_object.state", "unicode_object.length",
	"unicode_object.asciiobject_size",
	"gc.size", "gc.collecting",
	"gen_object.size", "gen_object.gi_name", "gen_object.gi_iframe", "gen_object.gi_frame_state",
	"llist_node.next", "llist_node.prev",
	"debugger_support.eval_breaker", "debugger_support.remote_debugger_support",
	"debugger_support.remote_debugging_enabled", "debugger_support.debugger_pending_call",
	"debugger_support.debugger_script_path", "debugger_support.debugger_script_path_size",
	NULL,
};

static const char *const layout_315[] = {
	"cookie", "version", "free_threaded",
	"runtime_state.size", "runtime_state.finalizing", "runtime_state.interpreters_head",
	"interpreter_state.size", "interpreter_state.id", "interpreter_state.next",
	"interpreter_state.threads_head", "interpreter_state.threads_main", "interpreter_state.gc",
	"interpreter_state.imports_modules", "interpreter_state.sysdict",
	"interpreter_state.builtins", "interpreter_state.ceval_gil",
	"interpreter_state.gil_runtime_state", "interpreter_state.gil_runtime_state_enabled",
	"interpreter_state.gil_runtime_state_locked", "interpreter_state.gil_runtime_state_holder",
	"interpreter_state.code_object_generation", "interpreter_state.tlbc_generation",
	"thread_state.size", "thread_state.prev", "thread_state.next", "thread_state.interp",
	"thread_state.current_frame", "thread_state.base_frame", "thread_state.last_profiled_frame",
	"thread_state.last_profiled_frame_seq", "thread_state.thread_id",
	"thread_state.native_thread_id", "thread_state.datastack_chunk", "thread_state.status",
	"thread_state.holds_gil", "thread_state.gil_requested", "thread_state.current_exception",
	"thread_state.exc_state",
	"err_stackitem.exc_value",
	"interpreter_frame.size", "interpreter_frame.previous", "interpreter_frame.executable",
	"interpreter_frame.instr_ptr", "interpreter_frame.localsplus", "interpreter_frame.owner",
	"interpreter_frame.stackpointer", "interpreter_frame.tlbc_index",
	"code_object.size", "code_object.filename", "code_object.name", "code_object.qualname",
	"code_object.linetable", "code_object.firstlineno", "code_object.argcount",
	"code_object.localsplusnames", "code_object.localspluskinds",
	"code_object.co_code_adaptive", "code_object.co_tlbc",
	"pyobject.size", "pyobject.ob_type",
	"type_object.size", "type_object.tp_name", "type_object.tp_repr", "type_object.tp_flags",
	"type_object.tp_basicsize", "type_object.tp_dictoffset",
	"heap_type_object.size", "heap_type_object.ht_cached_keys",
	"tuple_object.size", "tuple_object.ob_item", "tuple_object.ob_size",
	"list_object.size", "list_object.ob_item", "list_object.ob_size",
	"set_object.size", "set_object.used", "set_object.table", "set_object.mask",
	"dict_object.size", "dict_object.ma_keys", "dict_object.ma_values",
	"float_object.size", "float_object.ob_fval",
	"long_object.size", "long_object.lv_tag", "long_object.ob_digit",
	"bytes_object.size", "bytes_object.ob_size", "bytes_object.ob_sval",
	"unicode_object.size", "unicode_object.state", "unicode_object.length",
	"unicode_object.asciiobject_size", "unicode_object.compactunicodeobject_size",
	"gc.size", "gc.collecting", "gc.frame", "gc.generation_stats_size", "gc.generation_stats",
	"gen_object.size", "gen_object.gi_name", "gen_object.gi_iframe", "gen_object.gi_frame_state",
	"llist_node.next", "llist_node.prev",
	"debugger_support.eval_breaker", "debugger_support.remote_debugger_support",
	"debugger_support.remote_debugging_enabled", "debugger_support.debugger_pending_call",
	"debugger_support.debugger_script_path", "debugger_support.debugger_script_path_size",
	NULL,
};

static const char *const *layout_for(int minor)
{
	switch (minor) {
	case 13:
		return layout_313;
	case 14:
		return layout_314;
	case 15:
		return layout_315;
	default:
		return NULL;
	}
}

static long slot_of(const char *const *layout, const char *name)
{
	for (long i = 0; layout[i]; i++)
		if (strcmp(layout[i], name) == 0)
			return i;
	return -1;
}

size_t debug_offsets_size(int minor)
{
	const char *const *layout = layout_for(minor);
	size_t n = 0;

	if (!layout)
		return 0;
	while (layout[n])
		n++;
	return n * sizeof(uint64_t);
}

/* Our field <- debug-offset slot, where the meaning is the same. */
static const struct {
	const char *field, *slot;
} direct[] = {
	{ "runtime_interpreters_head", "runtime_state.interpreters_head" },
	{ "interp_next", "interpreter_state.next" },
	{ "interp_threads_head", "interpreter_state.threads_head" },
	{ "interp_ceval_gil", "interpreter_state.ceval_gil" },
	{ "tstate_next", "thread_state.next" },
	{ "tstate_interp", "thread_state.interp" },
	{ "tstate_frame", "thread_state.current_frame" },
	{ "tstate_thread_id", "thread_state.thread_id" },
	{ "tstate_native_thread_id", "thread_state.native_thread_id" },
	{ "frame_previous", "interpreter_frame.previous" },
	{ "frame_code", "interpreter_frame.executable" },
	{ "frame_instr", "interpreter_frame.instr_ptr" },
	{ "frame_owner", "interpreter_frame.owner" },
	{ "frame_tlbc_index", "interpreter_frame.tlbc_index" },
	{ "code_filename", "code_object.filename" },
	{ "code_name", "code_object.name" },
	{ "code_qualname", "code_object.qualname" },
	{ "code_firstlineno", "code_object.firstlineno" },
	{ "code_linetable", "code_object.linetable" },
	{ "code_adaptive", "code_object.co_code_adaptive" },
	{ "code_tlbc", "code_object.co_tlbc" },
	{ "object_type", "pyobject.ob_type" },
	{ "bytes_size", "bytes_object.ob_size" },
	{ "bytes_data", "bytes_object.ob_sval" },
	{ "unicode_length", "unicode_object.length" },
	{ "unicode_state", "unicode_object.state" },
	{ "unicode_ascii_size", "unicode_object.asciiobject_size" },
	{ "unicode_compact_size", "unicode_object.compactunicodeobject_size" },
	/* locals, objects, modules (pydump) */
	{ "interp_modules", "interpreter_state.imports_modules" },
	{ "frame_localsplus", "interpreter_frame.localsplus" },
	{ "code_argcount", "code_object.argcount" },
	{ "code_localsplusnames", "code_object.localsplusnames" },
	{ "code_localspluskinds", "code_object.localspluskinds" },
	{ "type_name", "type_object.tp_name" },
	{ "type_flags", "type_object.tp_flags" },
	{ "type_basicsize", "type_object.tp_basicsize" },
	{ "type_dictoffset", "type_object.tp_dictoffset" },
	{ "heaptype_cached_keys", "heap_type_object.ht_cached_keys" },
	{ "varobject_size", "tuple_object.ob_size" },
	{ "tuple_items", "tuple_object.ob_item" },
	{ "list_items", "list_object.ob_item" },
	{ "float_value", "float_object.ob_fval" },
	{ "long_tag", "long_object.lv_tag" },
	{ "long_digits", "long_object.ob_digit" },
	{ "dict_keys", "dict_object.ma_keys" },
	{ "dict_values", "dict_object.ma_values" },
	{ "set_used", "set_object.used" },
	{ "set_mask", "set_object.mask" },
	{ "set_table", "set_object.table" },
};

int debug_offsets_decode(const uint8_t *raw, size_t len, int minor, struct py_offsets *o,
			 uint64_t *version_hex, bool *free_threaded, char *err, size_t errlen)
{
	const char *const *layout = layout_for(minor);
	size_t need = debug_offsets_size(minor);
	uint64_t slots[DEBUG_OFFSETS_MAX_BYTES / 8];
	uint64_t gil_base, gil_locked, gil_holder;

	py_offsets_clear(o);
	if (!layout || need > sizeof(slots)) {
		snprintf(err, errlen, "no _Py_DebugOffsets layout known for 3.%d", minor);
		return -1;
	}
	if (len < need) {
		snprintf(err, errlen, "_Py_DebugOffsets truncated");
		return -1;
	}
	if (memcmp(raw, DEBUG_OFFSETS_COOKIE, 8) != 0) {
		snprintf(err, errlen, "no _Py_DebugOffsets cookie at _PyRuntime");
		return -1;
	}
	memcpy(slots, raw, need);
	*version_hex = slots[1];
	*free_threaded = slots[2] != 0;
	if (((*version_hex >> 24) & 0xff) != 3 || (int)((*version_hex >> 16) & 0xff) != minor) {
		snprintf(err, errlen, "_Py_DebugOffsets says version 0x%08llx, expected 3.%d",
			 (unsigned long long)*version_hex, minor);
		return -1;
	}
	for (size_t i = 0; i < sizeof(direct) / sizeof(direct[0]); i++) {
		long s = slot_of(layout, direct[i].slot);

		if (s < 0)
			continue;
		if (slots[s] > 1u << 20) { /* offsets into structs are small */
			snprintf(err, errlen, "implausible %s = %llu", direct[i].slot,
				 (unsigned long long)slots[s]);
			return -1;
		}
		*py_offsets_field(o, direct[i].field) = (int32_t)slots[s];
	}
	/* PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject. */
	if (o->unicode_compact_size == PY_OFFSET_ABSENT && o->unicode_ascii_size != PY_OFFSET_ABSENT)
		o->unicode_compact_size = o->unicode_ascii_size + 16;
	/* Locked and holder are published relative to the interpreter state;
	 * we want them relative to the GIL struct, reached through ceval.gil. */
	gil_base = slots[slot_of(layout, "interpreter_state.gil_runtime_state")];
	gil_locked = slots[slot_of(layout, "interpreter_state.gil_runtime_state_locked")];
	gil_holder = slots[slot_of(layout, "interpreter_state.gil_runtime_state_holder")];
	if (gil_locked > gil_base && gil_holder > gil_base && gil_locked <= 1u << 20 &&
	    gil_holder <= 1u << 20) { /* small offsets into the interpreter state */
		o->gil_locked = (int32_t)(gil_locked - gil_base);
		o->gil_last_holder = (int32_t)(gil_holder - gil_base);
		/* unsigned long switch_number follows int locked (and padding). */
		o->gil_switch_number = o->gil_locked + 8;
	}
	return 0;
}
