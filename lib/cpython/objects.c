/* SPDX-License-Identifier: Apache-2.0 */
/* Set-up of the object reader: offsets and the built-in types' addresses. */
#include "cpython/objects.h"

#include <stdio.h>
#include <string.h>

#include "sys/elf_image.h"

static int32_t have(int32_t v, int32_t fallback)
{
	return v != PY_OFFSET_ABSENT ? v : fallback;
}

/* 0 plus v, or absent when the base is. */
static int32_t from(int32_t base, int32_t v)
{
	return base != PY_OFFSET_ABSENT ? base + v : PY_OFFSET_ABSENT;
}

/* PyTypeObject is public and has kept its layout from 3.8 on: from
 * tp_name, tp_basicsize +8, tp_itemsize +16, tp_flags +144, tp_base +232,
 * tp_dict +240, tp_dictoffset +264, tp_mro +320. The offsets give
 * tp_name and tp_flags; the others follow when those two agree with it.
 * PyHeapTypeObject keeps ht_qualname just before ht_cached_keys. */
static void derive_type_offsets(struct py_objects *o)
{
	const struct py_offsets *f = &o->p->off;
	int32_t name = f->type_flags - f->type_name == 144 ? f->type_name : PY_OFFSET_ABSENT;

	o->type_name = f->type_name;
	o->type_flags = f->type_flags;
	o->type_basicsize = have(f->type_basicsize, from(f->type_name, 8));
	o->type_itemsize = from(o->type_basicsize, 8);
	o->type_base = from(name, 232);
	o->type_dict = from(name, 240);
	o->type_dictoffset = have(f->type_dictoffset, from(name, 264));
	o->type_mro = from(name, 320);
	o->cached_keys = f->heaptype_cached_keys;
	if (o->cached_keys == PY_OFFSET_ABSENT && o->rules->cached_keys_from_tp_name)
		o->cached_keys = from(f->type_name, o->rules->cached_keys_from_tp_name);
	o->heap_qualname = from(o->cached_keys, -8);
}

static int derive_offsets(struct py_objects *o)
{
	const struct py_offsets *f = &o->p->off;
	static const struct {
		const char *name;
		size_t at;
	} need[] = {
		{ "type_name", offsetof(struct py_objects, type_name) },
		{ "type_flags", offsetof(struct py_objects, type_flags) },
		{ "tuple_items", offsetof(struct py_objects, tuple_items) },
		{ "list_items", offsetof(struct py_objects, list_items) },
		{ "float_value", offsetof(struct py_objects, float_value) },
		{ "long_tag", offsetof(struct py_objects, long_tag) },
		{ "long_digits", offsetof(struct py_objects, long_digits) },
		{ "dict_keys", offsetof(struct py_objects, dict_keys) },
		{ "dict_values", offsetof(struct py_objects, dict_values) },
	};

	o->hdr = f->object_type + 8;
	derive_type_offsets(o);
	o->var_size = have(f->varobject_size, o->hdr);
	o->tuple_items = f->tuple_items;
	o->list_items = f->list_items;
	o->float_value = f->float_value;
	o->long_tag = f->long_tag;
	o->long_digits = f->long_digits;
	/* ma_used, md_dict, ob_ref and wr_object follow the header in every
	 * version; PySetObject is fill, used, mask, table after it. */
	o->dict_used = o->hdr;
	o->dict_keys = f->dict_keys;
	o->dict_values = f->dict_values;
	o->set_used = have(f->set_used, o->hdr + 8);
	o->set_mask = have(f->set_mask, o->hdr + 16);
	o->set_table = have(f->set_table, o->hdr + 24);
	o->cell_ref = have(f->cell_ref, o->hdr);
	o->module_dict = o->hdr;
	o->weakref_object = o->hdr;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		int32_t v = *(const int32_t *)((const char *)o + need[i].at);

		if (v < 0 || v > 4096) {
			snprintf(o->why, sizeof(o->why), "no offset for %s in this build", need[i].name);
			return -1;
		}
	}
	return 0;
}

/* The built-in types and singletons, by symbol: the one place that opens
 * the interpreter's file for them. */
static int resolve_symbols(struct py_objects *o)
{
	static const struct {
		const char *sym;
		size_t at;
	} syms[] = {
		{ "_Py_NoneStruct", offsetof(struct py_objects, none) },
		{ "_Py_TrueStruct", offsetof(struct py_objects, true_obj) },
		{ "_Py_FalseStruct", offsetof(struct py_objects, false_obj) },
		{ "PyType_Type", offsetof(struct py_objects, t_type) },
		{ "PyLong_Type", offsetof(struct py_objects, t_int) },
		{ "PyBool_Type", offsetof(struct py_objects, t_bool) },
		{ "PyFloat_Type", offsetof(struct py_objects, t_float) },
		{ "PyUnicode_Type", offsetof(struct py_objects, t_str) },
		{ "PyBytes_Type", offsetof(struct py_objects, t_bytes) },
		{ "PyTuple_Type", offsetof(struct py_objects, t_tuple) },
		{ "PyList_Type", offsetof(struct py_objects, t_list) },
		{ "PyDict_Type", offsetof(struct py_objects, t_dict) },
		{ "PySet_Type", offsetof(struct py_objects, t_set) },
		{ "PyFrozenSet_Type", offsetof(struct py_objects, t_frozenset) },
		{ "PyCell_Type", offsetof(struct py_objects, t_cell) },
		{ "PyModule_Type", offsetof(struct py_objects, t_module) },
		{ "_PyWeakref_RefType", offsetof(struct py_objects, t_weakref) },
		{ "PyCoro_Type", offsetof(struct py_objects, t_coro) },
		{ "PyGen_Type", offsetof(struct py_objects, t_gen) },
	};
	struct elf_image img;

	if (py_process_open_interp(o->p, &img) < 0) {
		snprintf(o->why, sizeof(o->why), "cannot read %.120s", o->p->interp_open);
		return -1;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		uint64_t value, size;

		if (elf_image_symbol(&img, syms[i].sym, &value, &size) < 0) {
			snprintf(o->why, sizeof(o->why), "no %s symbol in %.100s", syms[i].sym,
				 o->p->interp_path);
			elf_image_close(&img);
			return -1;
		}
		*(uint64_t *)((char *)o + syms[i].at) = o->p->load_bias + value;
	}
	elf_image_close(&img);
	return 0;
}

int py_objects_init_layout(struct py_objects *o, struct py_process *p)
{
	memset(o, 0, sizeof(*o));
	o->p = p;
	o->rules = py_object_rules_for(p->version.minor, p->free_threaded);
	if (!o->rules) {
		snprintf(o->why, sizeof(o->why), "no object rules for Python %s", p->version_str);
		return -1;
	}
	return derive_offsets(o);
}

int py_objects_init(struct py_objects *o, struct py_process *p)
{
	if (py_objects_init_layout(o, p) < 0)
		return -1;
	return resolve_symbols(o);
}
