/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Python objects read from outside, for arguments, locals and thread
 * names: short, bounded representations of None, bool, int, float, str,
 * bytes, tuple, list, dict, set and frozenset, the type name of anything
 * else, dict lookups and instance attributes. Every read goes through
 * remote_read; garbage gives "<unreadable>", never a crash or a loop.
 */
#ifndef PYBPF_CPYTHON_OBJECTS_H
#define PYBPF_CPYTHON_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/process.h"
#include "cpython/rules.h"

#define PY_REPR_MAX 256 /* a value's text is cut there */

/* What a reader needs beyond struct py_process: the object layouts
 * (offsets completed where _Py_DebugOffsets leaves gaps) and the
 * addresses of the built-in types and singletons. */
struct py_objects {
	struct py_process *p;
	const struct py_object_rules *rules;
	int32_t hdr; /* bytes of PyObject's header (16; 32 free-threaded) */
	int32_t type_name, type_flags, type_basicsize, type_dictoffset, cached_keys;
	int32_t var_size, tuple_items, list_items, float_value, long_tag, long_digits;
	int32_t dict_used, dict_keys, dict_values, set_used, set_mask, set_table;
	int32_t cell_ref, module_dict;
	uint64_t none, true_obj, false_obj;
	uint64_t t_int, t_bool, t_float, t_str, t_bytes, t_tuple, t_list, t_dict, t_set,
		t_frozenset, t_cell, t_module;
	char why[160]; /* set when init failed */
};

/*
 * Prepares o for p (symbols from the interpreter file, offsets from p).
 * Returns 0, or -1 with the reason in o->why (offsets this build lacks).
 */
int py_objects_init(struct py_objects *o, struct py_process *p);

/* The layouts alone, no symbols (the fuzz target sets the types itself). */
int py_objects_init_layout(struct py_objects *o, struct py_process *p);

/* Type of the object at addr; 0 if unreadable. */
uint64_t py_obj_type(const struct py_objects *o, uint64_t addr);

/* tp_name of a type object ("int", "_thread.lock"). Returns 0 or -1. */
int py_type_name(const struct py_objects *o, uint64_t type, char *buf, size_t len);

/*
 * A short representation of the object at addr, like repr() for the
 * built-in types it knows (cut to fit, containers to their first items
 * and their length), "<TypeName at 0x...>" for others, "<unreadable>"
 * when its memory makes no sense. Always writes a string; returns 0, or
 * -1 when the object was unreadable.
 */
int py_obj_repr(const struct py_objects *o, uint64_t addr, char *buf, size_t len);

/* The value of an int object that fits 64 bits (as unsigned: idents). */
int py_obj_u64(const struct py_objects *o, uint64_t addr, uint64_t *value);

/* A str object as UTF-8, cut to fit. Returns 0 or -1. */
int py_obj_str(const struct py_objects *o, uint64_t addr, char *buf, size_t len);

/* Calls fn for each item of a dict (at most max), in storage order; fn
 * returns non-zero to stop. Returns the dict's length or -1. */
typedef int (*py_dict_fn)(uint64_t key, uint64_t value, void *arg);
long py_dict_each(const struct py_objects *o, uint64_t dict, size_t max, py_dict_fn fn, void *arg);

/* The value under str key `name` in a dict. Returns 0, or -1 if absent. */
int py_dict_get(const struct py_objects *o, uint64_t dict, const char *name, uint64_t *value);

/* An instance attribute (its __dict__ or inline values; no descriptors). */
int py_obj_attr(const struct py_objects *o, uint64_t obj, const char *name, uint64_t *value);

/* Each instance attribute (name, value), at most max. Returns 0 or -1. */
int py_obj_attrs_each(const struct py_objects *o, uint64_t obj, size_t max, py_dict_fn fn,
		      void *arg);

/* The dict of a module object. Returns 0 or -1. */
int py_module_dict(const struct py_objects *o, uint64_t module, uint64_t *dict);

#endif
