/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Plain Python objects read out of a live interpreter, defensively: types
 * are compared with the live type objects, every size is bounded, and a
 * garbled object makes a call fail (-1), never loop or crash. Enough to
 * find asyncio's tasks: module dicts, instance attributes, sets, weak
 * references, ints, lists and tuples.
 */
#ifndef PYBPF_CPYTHON_PYOBJ_H
#define PYBPF_CPYTHON_PYOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/asyncio_layout.h"
#include "cpython/process.h"

#define PYOBJ_MAX_ITEMS 65536 /* entries of one dict, set, list or tuple read at most */

/* The interpreter's built-in type objects (and None), by symbol. */
struct pyobj_types {
	uint64_t type, str, long_, dict, set, list, tuple, weakref, module, coro, gen, none;
};

struct pyobj {
	struct py_process *p;
	const struct py_async_layout *L;
	struct pyobj_types t;
};

/* Finds the built-in types in the interpreter's symbols. Returns 0 or -1. */
int pyobj_init(struct pyobj *o, struct py_process *p, const struct py_async_layout *L);

int pyobj_u64(const struct pyobj *o, uint64_t addr, uint64_t *v);

/* ob_type of obj; 0 if unreadable. */
uint64_t pyobj_type(const struct pyobj *o, uint64_t obj);
bool pyobj_is(const struct pyobj *o, uint64_t obj, uint64_t type);
/* Whether type is base or derives from it (through tp_mro, bounded). */
bool pyobj_type_is_sub(const struct pyobj *o, uint64_t type, uint64_t base);
/* tp_name, a C string. Returns 0 or -1. */
int pyobj_type_name(const struct pyobj *o, uint64_t type, char *buf, size_t len);

/* A str, as UTF-8. Returns 0, or -1 if obj is not a readable str. */
int pyobj_str(const struct pyobj *o, uint64_t obj, char *buf, size_t len);
bool pyobj_str_eq(const struct pyobj *o, uint64_t obj, const char *s);
/* A small int (fits in 62 bits). Returns 0 or -1. */
int pyobj_long(const struct pyobj *o, uint64_t obj, int64_t *v);

/* Calls fn(key, value, arg) for each item of a dict until fn returns non-zero
 * (returned). -1 if dict is not a readable dict. */
typedef int (*pyobj_item_fn)(uint64_t key, uint64_t value, void *arg);
int pyobj_dict_each(const struct pyobj *o, uint64_t dict, pyobj_item_fn fn, void *arg);
/* The value of str key in a dict: 0 and *value, 1 if absent, -1 if unreadable. */
int pyobj_dict_get(const struct pyobj *o, uint64_t dict, const char *key, uint64_t *value);

/* Calls fn(key, 0, arg) for each key of a set. */
int pyobj_set_each(const struct pyobj *o, uint64_t set, pyobj_item_fn fn, void *arg);
/* Items of a list or tuple, up to max. Returns the count or -1. */
int pyobj_sequence(const struct pyobj *o, uint64_t seq, uint64_t *out, size_t max);
/* The object a weak reference points to; 0 if it died (None) or unreadable. */
uint64_t pyobj_weakref_target(const struct pyobj *o, uint64_t ref);

/* An attribute: the instance's own dict (managed or not), then the dicts
 * of its classes along the MRO (descriptors are not called: a property
 * comes back as the property object). 0 and *value, 1 absent, -1 unreadable. */
int pyobj_getattr(const struct pyobj *o, uint64_t obj, const char *name, uint64_t *value);

/* A module's __dict__: sys.modules[module].__dict__. 0, 1 absent, -1. */
int pyobj_module_dict(const struct pyobj *o, uint64_t modules, const char *module,
		      uint64_t *dict);

/* A module's global: sys.modules[module].__dict__[name]. 0, 1 absent, -1. */
int pyobj_module_global(const struct pyobj *o, uint64_t modules, const char *module,
			const char *name, uint64_t *value);

#endif
