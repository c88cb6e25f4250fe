/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one reader of Python objects in a live interpreter, for locals and
 * arguments (pydump -l), thread names, lock waits, asyncio's tasks and
 * the census of live objects: types (name, module.QualName, sizes, flags,
 * subclasses), None, bool, int, float, str, bytes, tuple, list, dict
 * (combined, split, managed, inline values), set, frozenset, weak
 * references, instance and class attributes, module dicts; and short
 * repr()s of them. Offsets come with the process (struct py_offsets,
 * completed from PyTypeObject's public layout where they leave gaps);
 * the encodings around them are the version's row of struct
 * py_object_rules (cpython/rules.h). Every read goes through
 * remote_read and every size and loop is bounded: garbage makes a call
 * fail (or print "<unreadable>"), never crash, hang or pass for a value.
 */
#ifndef PYBPF_CPYTHON_OBJECTS_H
#define PYBPF_CPYTHON_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/process.h"
#include "cpython/rules.h"

#define PY_REPR_MAX 256       /* a value's text is cut there */
#define PY_SCAN_MAX (1 << 16) /* entries of one dict or set, or items of a list, looked at */

/* What a reader needs beyond struct py_process: the object layouts and
 * the addresses of the built-in types and singletons. */
struct py_objects {
	struct py_process *p;
	const struct py_object_rules *rules;
	int32_t hdr; /* bytes of PyObject's header (16; 32 free-threaded) */
	int32_t type_name, type_basicsize, type_itemsize, type_flags, type_base, type_dict,
		type_dictoffset, type_mro, heap_qualname, cached_keys;
	int32_t var_size, tuple_items, list_items, float_value, long_tag, long_digits;
	int32_t dict_used, dict_keys, dict_values, set_used, set_mask, set_table;
	int32_t cell_ref, module_dict, weakref_object;
	uint64_t none, true_obj, false_obj;
	uint64_t t_type, t_int, t_bool, t_float, t_str, t_bytes, t_tuple, t_list, t_dict, t_set,
		t_frozenset, t_cell, t_module, t_weakref, t_coro, t_gen;
	char why[160]; /* set when init failed */
};

/*
 * Prepares o for p (symbols from the interpreter file, offsets from p).
 * Returns 0, or -1 with the reason in o->why (offsets this build lacks).
 */
int py_objects_init(struct py_objects *o, struct py_process *p);

/* The layouts alone, no symbols (the fuzz targets set the types themselves). */
int py_objects_init_layout(struct py_objects *o, struct py_process *p);

/* ---- types (objects_types.c) ------------------------------------------- */

/* A pointer-sized word of the process (0 and -1 for address 0). */
int py_obj_read_u64(const struct py_objects *o, uint64_t addr, uint64_t *v);

/* Type of the object at addr; 0 if unreadable (or addr not aligned). */
uint64_t py_obj_type(const struct py_objects *o, uint64_t addr);

/* tp_name of a type object ("int", "_thread.lock"). Returns 0 or -1. */
int py_type_name(const struct py_objects *o, uint64_t type, char *buf, size_t len);

/* Whether type is base or derives from it (through tp_mro, or tp_base
 * while there is no MRO yet; bounded). */
bool py_type_is_sub(const struct py_objects *o, uint64_t type, uint64_t base);

/* Whether the object at addr is an instance of type (or of a subclass). */
bool py_obj_is_instance(const struct py_objects *o, uint64_t addr, uint64_t type);

/* Whether a type was made by a class statement or type() (a heap type):
 * its instances may have attributes of their own. */
bool py_type_is_heap(const struct py_objects *o, uint64_t type);

/*
 * A type's full name as Python writes it: "module.QualName" (the class's
 * __module__ and __qualname__; "builtins.int" for built-in types).
 * For the census of live objects. Returns 0, or -1 (buf "?") if unreadable.
 */
int py_type_qualname(const struct py_objects *o, uint64_t type, char *buf, size_t len);

/* The size of the object at addr's own struct: tp_basicsize, plus
 * tp_itemsize per item for variable-size types (ints by their digits).
 * Not counting the GC header nor what it points to. Returns 0 or -1. */
int py_obj_size(const struct py_objects *o, uint64_t addr, uint64_t *bytes);

/* What sizing an object of a type needs, read once per type (the census
 * reads millions of objects of a few thousand types). */
struct py_type_info {
	uint64_t type;
	uint64_t basicsize, itemsize, flags;
	uint64_t preheader; /* bytes before the object: GC header (if GC) and
			       managed dict/weakref pointers (3.11+) */
	bool is_type;       /* its own type is type or a subclass: a real type */
	bool int_like;      /* int or a subclass: items are digits, not ob_size */
};

/* Reads type's info. Returns 0, or -1 if it is not a readable type. */
int py_type_info_read(const struct py_objects *o, uint64_t type, struct py_type_info *ti);

/*
 * The bytes an object of that type takes, its header and item count
 * already read (ob_size: the word after the header, for variable-size
 * types), as sys.getsizeof() counts its own struct: the struct rounded
 * to 8, the GC header and pre-header. What it points to (a list's item
 * array, a dict's table) is not counted. An int-like object is read
 * again (addr) for its digits. Returns 0 or -1.
 */
int py_obj_size_known(const struct py_objects *o, const struct py_type_info *ti, uint64_t addr,
		      int64_t ob_size, uint64_t *bytes);

/* ---- values (objects_values.c) ------------------------------------------ */

/* The value of an int (or int subclass) object that fits 64 bits: as
 * unsigned (idents; negative ints fail) or signed. Returns 0 or -1. */
int py_obj_u64(const struct py_objects *o, uint64_t addr, uint64_t *value);
int py_obj_i64(const struct py_objects *o, uint64_t addr, int64_t *value);

/* Digit count and sign (-1, 0, 1) of an int object whose type was checked;
 * -1 if its header is garbage. */
int py_long_shape(const struct py_objects *o, uint64_t addr, size_t *ndigits, int *sign);

/* n 30-bit digits of an int, least significant first. Returns 0 or -1. */
int py_long_digits(const struct py_objects *o, uint64_t addr, size_t n, uint32_t *d);

/* A str object as UTF-8, cut to fit (marked "..."). Returns 0 or -1. */
int py_obj_str(const struct py_objects *o, uint64_t addr, char *buf, size_t len);

/* Whether the object at addr is a str equal to s. */
bool py_obj_str_eq(const struct py_objects *o, uint64_t addr, const char *s);

/* ---- containers (objects_containers.c) ------------------------------------ */

/* Called for each item; returns non-zero to stop the walk. Sets pass 0 as value. */
typedef int (*py_item_fn)(uint64_t key, uint64_t value, void *arg);

/* ma_used of a dict (or dict subclass); -1 if unreadable. */
long py_dict_len(const struct py_objects *o, uint64_t dict);

/*
 * Calls fn for each item of a dict (or subclass), at most max, in storage
 * order. Returns -1 if the dict is unreadable, else the non-zero value fn
 * stopped the walk with, or 0.
 */
int py_dict_each(const struct py_objects *o, uint64_t dict, size_t max, py_item_fn fn, void *arg);

/* The value under str key `name` in a dict: 0, 1 if absent, -1 if unreadable. */
int py_dict_get(const struct py_objects *o, uint64_t dict, const char *name, uint64_t *value);

/* Calls fn(key, 0, arg) for each member of a set or frozenset (or
 * subclass), at most max. Returns like py_dict_each. */
/* Where a dict keeps its keys object and that object its fields, for a
 * reader of the entries outside this model (BPF reads asyncio's dict of
 * running tasks): 3.11+'s keys layout only (PY_DICT_KEYS_LOG2); -1 else. */
struct py_dict_keys_fields {
	int32_t dict_keys, log2_index_bytes, kind, nentries, indices;
};
int py_dict_keys_fields(const struct py_objects *o, struct py_dict_keys_fields *f);

int py_set_each(const struct py_objects *o, uint64_t set, size_t max, py_item_fn fn, void *arg);

/* The length of a set or frozenset; -1 if unreadable. */
long py_set_len(const struct py_objects *o, uint64_t set);

/* Items of a list or tuple (exactly those types), up to max. Returns
 * their count (*length: the whole length, may be NULL) or -1. */
int py_sequence(const struct py_objects *o, uint64_t seq, uint64_t *out, size_t max,
		int64_t *length);

/* The object a weak reference points to; 0 if it died (None) or unreadable. */
uint64_t py_weakref_target(const struct py_objects *o, uint64_t ref);

/* An instance attribute, from the instance's own storage (its __dict__,
 * managed or not, or inline values; no descriptors): 0, 1 absent, -1. */
int py_obj_attr(const struct py_objects *o, uint64_t obj, const char *name, uint64_t *value);

/* An attribute: the instance's own, then the dicts of its classes along
 * the MRO (descriptors are not called: a property comes back as the
 * property object). 0, 1 absent, -1 unreadable. */
int py_obj_getattr(const struct py_objects *o, uint64_t obj, const char *name, uint64_t *value);

/* Each instance attribute (name, value), at most max. Returns like py_dict_each. */
int py_obj_attrs_each(const struct py_objects *o, uint64_t obj, size_t max, py_item_fn fn,
		      void *arg);

/* The dict of a module object. Returns 0 or -1. */
int py_module_dict(const struct py_objects *o, uint64_t module, uint64_t *dict);

/* The dict of sys.modules[name], given sys.modules: 0, 1 absent, -1. */
int py_module_dict_by_name(const struct py_objects *o, uint64_t modules, const char *name,
			   uint64_t *dict);

/* ---- repr (objects_repr.c) ----------------------------------------------- */

/*
 * A short representation of the object at addr, like repr() for the
 * built-in types it knows (cut to fit, containers to their first items
 * and their length), "<TypeName at 0x...>" for others, "<unreadable>"
 * when its memory makes no sense. Always writes a string; returns 0, or
 * -1 when the object was unreadable.
 */
int py_obj_repr(const struct py_objects *o, uint64_t addr, char *buf, size_t len);

#endif
