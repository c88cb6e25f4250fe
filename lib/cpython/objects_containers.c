/* SPDX-License-Identifier: Apache-2.0 */
/* Dicts, sets, lists and tuples, weak references, attributes, modules. */
#include "cpython/objects.h"

#include <string.h>

#include "sys/remote_mem.h"

#define MRO_MAX 64
#define CHUNK 256 /* dict entries or set slots read at once */
#define PLAUSIBLE_LEN (1LL << 40)
/* slots of one set looked at: a set of asyncio's 100000 tasks spans 2^18 */
#define SET_SLOTS_MAX (4 * PY_SCAN_MAX)

/* ---- dicts ------------------------------------------------------------------ */

/* Where a keys object keeps its entries, and how they look. */
struct dict_layout {
	uint64_t entries;
	size_t entry_size, key_at, value_at;
	int64_t nentries;
	uint64_t values; /* split dict: the values array; 0 if combined */
};

/* PY_DICT_KEYS_LOG2 (3.11+): where the keys object keeps its fields */
#define KEYS_LOG2_INDEX_BYTES 9
#define KEYS_KIND 10
#define KEYS_NENTRIES 24
#define KEYS_INDICES 32

int py_dict_keys_fields(const struct py_objects *o, struct py_dict_keys_fields *f)
{
	if (o->rules->dict_keys != PY_DICT_KEYS_LOG2 || o->dict_keys < 0)
		return -1;
	f->dict_keys = o->dict_keys;
	f->log2_index_bytes = KEYS_LOG2_INDEX_BYTES;
	f->kind = KEYS_KIND;
	f->nentries = KEYS_NENTRIES;
	f->indices = KEYS_INDICES;
	return 0;
}

static int dict_layout(const struct py_objects *o, uint64_t keys, uint64_t values,
		       struct dict_layout *l)
{
	uint8_t h[40];

	memset(l, 0, sizeof(*l));
	if (!keys || remote_read(o->p->pid, keys, h, sizeof(h)) < 0)
		return -1;
	if (o->rules->dict_keys == PY_DICT_KEYS_SIZE) {
		int64_t size, nentries;
		unsigned ix;

		memcpy(&size, h + 8, 8);
		memcpy(&nentries, h + 32, 8);
		if (size < 8 || (size & (size - 1)) || size > (1LL << 32) || nentries < 0 ||
		    nentries > size)
			return -1;
		ix = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
		l->entries = keys + 40 + (uint64_t)size * ix;
		l->entry_size = 24;
		l->key_at = 8;
		l->value_at = 16;
		l->nentries = nentries;
	} else {
		unsigned log2_size = h[8], log2_index_bytes = h[KEYS_LOG2_INDEX_BYTES],
			 kind = h[KEYS_KIND];
		int64_t nentries;

		memcpy(&nentries, h + KEYS_NENTRIES, 8);
		if (log2_size < 3 || log2_size > 32 || log2_index_bytes < log2_size ||
		    log2_index_bytes > log2_size + 3 || kind > 2 || nentries < 0 ||
		    nentries > (1LL << log2_size))
			return -1;
		l->entries = keys + KEYS_INDICES + (1ULL << log2_index_bytes);
		l->entry_size = kind == 0 ? 24 : 16;
		l->key_at = kind == 0 ? 8 : 0;
		l->value_at = kind == 0 ? 16 : 8;
		l->nentries = nentries;
	}
	if (values)
		l->values = values + (o->rules->dict_values == PY_DICT_VALUES_HEADED ? 8 : 0);
	return 0;
}

/* Calls fn for each (key, value) of a layout, at most max, in chunks;
 * deleted entries and a split dict's unused slots are skipped. */
static int layout_each(const struct py_objects *o, const struct dict_layout *l, size_t max,
		       py_item_fn fn, void *arg)
{
	uint8_t buf[CHUNK * 24];
	uint64_t vals[CHUNK];
	int64_t end = l->nentries < PY_SCAN_MAX ? l->nentries : PY_SCAN_MAX;
	size_t seen = 0;

	for (int64_t at = 0; at < end && seen < max; at += CHUNK) {
		int64_t n = end - at < CHUNK ? end - at : CHUNK;

		if (remote_read(o->p->pid, l->entries + (uint64_t)at * l->entry_size, buf,
				(size_t)n * l->entry_size) < 0 ||
		    (l->values && remote_read(o->p->pid, l->values + 8 * (uint64_t)at, vals,
					      (size_t)n * 8) < 0))
			return -1;
		for (int64_t i = 0; i < n && seen < max; i++) {
			const uint8_t *e = buf + (size_t)i * l->entry_size;
			uint64_t k, v;
			int rc;

			memcpy(&k, e + l->key_at, 8);
			if (l->values)
				v = vals[i];
			else
				memcpy(&v, e + l->value_at, 8);
			if (!k || !v)
				continue;
			seen++;
			rc = fn(k, v, arg);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static bool is_dict(const struct py_objects *o, uint64_t dict)
{
	uint64_t type = py_obj_type(o, dict);

	return type && (type == o->t_dict || py_type_is_sub(o, type, o->t_dict));
}

long py_dict_len(const struct py_objects *o, uint64_t dict)
{
	int64_t used = 0;

	if (!is_dict(o, dict) ||
	    remote_read(o->p->pid, dict + (uint64_t)o->dict_used, &used, 8) < 0 || used < 0 ||
	    used > PLAUSIBLE_LEN)
		return -1;
	return (long)used;
}

int py_dict_each(const struct py_objects *o, uint64_t dict, size_t max, py_item_fn fn, void *arg)
{
	uint64_t keys = 0, values = 0;
	struct dict_layout l;

	if (!is_dict(o, dict) || py_obj_read_u64(o, dict + (uint64_t)o->dict_keys, &keys) < 0 ||
	    py_obj_read_u64(o, dict + (uint64_t)o->dict_values, &values) < 0 ||
	    dict_layout(o, keys, values, &l) < 0)
		return -1;
	return layout_each(o, &l, max, fn, arg);
}

struct find {
	const struct py_objects *o;
	const char *name;
	uint64_t value;
};

static int find_key(uint64_t key, uint64_t value, void *arg)
{
	struct find *f = arg;

	if (!py_obj_str_eq(f->o, key, f->name))
		return 0;
	f->value = value;
	return 1;
}

/* 0 found, 1 absent, -1 unreadable, from a walk with find_key. */
static int found(int walk, const struct find *f, uint64_t *value)
{
	*value = walk == 1 ? f->value : 0;
	return walk < 0 ? -1 : walk == 1 ? 0 : 1;
}

int py_dict_get(const struct py_objects *o, uint64_t dict, const char *name, uint64_t *value)
{
	struct find f = { o, name, 0 };

	return found(py_dict_each(o, dict, PY_SCAN_MAX, find_key, &f), &f, value);
}

/* ---- sets ----------------------------------------------------------------- */

struct set_table {
	uint64_t table;
	int64_t used, mask;
};

static int set_table(const struct py_objects *o, uint64_t set, struct set_table *s)
{
	uint64_t type = py_obj_type(o, set);

	if (!type || (type != o->t_set && type != o->t_frozenset &&
		      !py_type_is_sub(o, type, o->t_set) && !py_type_is_sub(o, type, o->t_frozenset)))
		return -1;
	if (remote_read(o->p->pid, set + (uint64_t)o->set_used, &s->used, 8) < 0 ||
	    remote_read(o->p->pid, set + (uint64_t)o->set_mask, &s->mask, 8) < 0 ||
	    py_obj_read_u64(o, set + (uint64_t)o->set_table, &s->table) < 0)
		return -1;
	/* mask + 1 is a power of two, at least 8, above the count */
	if (s->mask < 7 || s->mask >= PLAUSIBLE_LEN || (s->mask & (s->mask + 1)) || s->used < 0 ||
	    s->used > s->mask + 1 || !s->table)
		return -1;
	return 0;
}

long py_set_len(const struct py_objects *o, uint64_t set)
{
	struct set_table s;

	return set_table(o, set, &s) < 0 ? -1 : (long)s.used;
}

int py_set_each(const struct py_objects *o, uint64_t set, size_t max, py_item_fn fn, void *arg)
{
	uint64_t buf[CHUNK * 2]; /* key, hash */
	struct set_table s;
	int64_t end;
	size_t seen = 0;

	if (set_table(o, set, &s) < 0)
		return -1;
	end = s.mask + 1 < SET_SLOTS_MAX ? s.mask + 1 : SET_SLOTS_MAX;
	for (int64_t at = 0; at < end && seen < max; at += CHUNK) {
		int64_t n = end - at < CHUNK ? end - at : CHUNK;

		if (remote_read(o->p->pid, s.table + 16 * (uint64_t)at, buf, (size_t)n * 16) < 0)
			return -1;
		for (int64_t i = 0; i < n && seen < max; i++) {
			int rc;

			if (!buf[2 * i] || buf[2 * i + 1] == (uint64_t)-1)
				continue; /* empty, or the dummy of a removed key */
			seen++;
			rc = fn(buf[2 * i], 0, arg);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* ---- sequences and weak references ------------------------------------------ */

int py_sequence(const struct py_objects *o, uint64_t seq, uint64_t *out, size_t max,
		int64_t *length)
{
	uint64_t type = py_obj_type(o, seq), items;
	int64_t n = 0;

	if (!type || (type != o->t_list && type != o->t_tuple) ||
	    remote_read(o->p->pid, seq + (uint64_t)o->var_size, &n, 8) < 0 || n < 0 ||
	    n > PLAUSIBLE_LEN)
		return -1;
	if (length)
		*length = n;
	if ((uint64_t)n > max)
		n = (int64_t)max;
	if (n == 0)
		return 0;
	if (type == o->t_tuple)
		items = seq + (uint64_t)o->tuple_items;
	else if (py_obj_read_u64(o, seq + (uint64_t)o->list_items, &items) < 0 || !items)
		return -1;
	if (remote_read(o->p->pid, items, out, (size_t)n * 8) < 0)
		return -1;
	return (int)n;
}

uint64_t py_weakref_target(const struct py_objects *o, uint64_t ref)
{
	uint64_t target = 0;

	if (!py_obj_is_instance(o, ref, o->t_weakref) ||
	    py_obj_read_u64(o, ref + (uint64_t)o->weakref_object, &target) < 0 ||
	    target == o->none)
		return 0;
	return target;
}

/* ---- attributes ------------------------------------------------------------- */

/* Where an instance keeps its attributes: a dict, or an array of values
 * indexed like its type's shared keys (ht_cached_keys). */
struct instance_storage {
	uint64_t type, dict, values;
};

static int dict_at(const struct py_objects *o, uint64_t ptr_at, struct instance_storage *s)
{
	return py_obj_read_u64(o, ptr_at, &s->dict) < 0 || !s->dict ? -1 : 0;
}

/* 3.13+: the inline values after the object, while they are valid. */
static int inline_values(const struct py_objects *o, uint64_t obj, struct instance_storage *s)
{
	uint8_t head[4]; /* capacity, size, embedded, valid */
	int64_t basicsize = 0;

	if (o->type_basicsize < 0 ||
	    remote_read(o->p->pid, s->type + (uint64_t)o->type_basicsize, &basicsize, 8) < 0 ||
	    basicsize < o->hdr || basicsize > 1 << 16 ||
	    remote_read(o->p->pid, obj + (uint64_t)basicsize, head, sizeof(head)) < 0)
		return -1;
	if (head[3])
		s->values = obj + (uint64_t)basicsize;
	return 0;
}

static int instance_storage(const struct py_objects *o, uint64_t obj, struct instance_storage *s)
{
	const struct py_object_rules *r = o->rules;
	uint64_t flags = 0, slot = 0;
	int64_t dictoffset = 0;

	memset(s, 0, sizeof(*s));
	s->type = py_obj_type(o, obj);
	if (!s->type || py_obj_read_u64(o, s->type + (uint64_t)o->type_flags, &flags) < 0)
		return -1;
	if (!(flags & r->tpflags_managed_dict)) {
		if (o->type_dictoffset < 0 ||
		    remote_read(o->p->pid, s->type + (uint64_t)o->type_dictoffset, &dictoffset, 8) < 0 ||
		    dictoffset <= 0 || dictoffset > 1 << 20)
			return -1;
		return dict_at(o, obj + (uint64_t)dictoffset, s);
	}
	switch (r->instance_dict) {
	case PY_INSTANCE_MANAGED_311:
		if (py_obj_read_u64(o, obj - 32, &slot) < 0)
			return -1;
		if (slot) {
			s->values = slot;
			return 0;
		}
		break;
	case PY_INSTANCE_MANAGED_312:
		if (py_obj_read_u64(o, obj - 24, &slot) < 0 || !slot)
			return -1;
		if (slot & 1)
			s->values = slot + 1;
		else
			s->dict = slot;
		return 0;
	case PY_INSTANCE_INLINE_313:
		if ((flags & r->tpflags_inline_values) && inline_values(o, obj, s) < 0)
			return -1;
		if (s->values)
			return 0;
		break;
	case PY_INSTANCE_DICTOFFSET:
		return -1; /* no managed dicts before 3.11 */
	}
	return dict_at(o, obj + (uint64_t)(int64_t)r->managed_dict_offset, s);
}

/* Each (name, value) of shared-keys storage, at most max. */
static int each_cached(const struct py_objects *o, const struct instance_storage *s, size_t max,
		       py_item_fn fn, void *arg)
{
	uint64_t keys = 0;
	struct dict_layout l;

	if (o->cached_keys < 0 || py_obj_read_u64(o, s->type + (uint64_t)o->cached_keys, &keys) < 0 ||
	    dict_layout(o, keys, s->values, &l) < 0)
		return -1;
	return layout_each(o, &l, max, fn, arg);
}

int py_obj_attrs_each(const struct py_objects *o, uint64_t obj, size_t max, py_item_fn fn,
		      void *arg)
{
	struct instance_storage s;

	if (instance_storage(o, obj, &s) < 0)
		return -1;
	if (s.dict)
		return py_dict_each(o, s.dict, max, fn, arg);
	return each_cached(o, &s, max, fn, arg);
}

int py_obj_attr(const struct py_objects *o, uint64_t obj, const char *name, uint64_t *value)
{
	struct find f = { o, name, 0 };

	return found(py_obj_attrs_each(o, obj, PY_SCAN_MAX, find_key, &f), &f, value);
}

/* A class attribute, from the dicts of the type's MRO. */
static int class_attr(const struct py_objects *o, uint64_t type, const char *name, uint64_t *value)
{
	uint64_t mro = 0, items[MRO_MAX], dict;
	int n;

	if (o->type_mro < 0 || o->type_dict < 0 ||
	    py_obj_read_u64(o, type + (uint64_t)o->type_mro, &mro) < 0 || !mro)
		return -1;
	n = py_sequence(o, mro, items, MRO_MAX, NULL);
	for (int i = 0; i < n; i++) {
		int rc;

		if (py_obj_read_u64(o, items[i] + (uint64_t)o->type_dict, &dict) < 0 || !dict)
			continue; /* 3.12+: static types keep their dict elsewhere */
		rc = py_dict_get(o, dict, name, value);
		if (rc <= 0)
			return rc;
	}
	return n < 0 ? -1 : 1;
}

int py_obj_getattr(const struct py_objects *o, uint64_t obj, const char *name, uint64_t *value)
{
	int rc = py_obj_attr(o, obj, name, value);

	if (rc != 0)
		rc = class_attr(o, py_obj_type(o, obj), name, value);
	return rc;
}

/* ---- modules ------------------------------------------------------------------ */

int py_module_dict(const struct py_objects *o, uint64_t module, uint64_t *dict)
{
	*dict = 0;
	if (!py_obj_is_instance(o, module, o->t_module) ||
	    py_obj_read_u64(o, module + (uint64_t)o->module_dict, dict) < 0 || !is_dict(o, *dict))
		return -1;
	return 0;
}

int py_module_dict_by_name(const struct py_objects *o, uint64_t modules, const char *name,
			   uint64_t *dict)
{
	uint64_t module;
	int rc = py_dict_get(o, modules, name, &module);

	*dict = 0;
	if (rc != 0)
		return rc;
	return py_module_dict(o, module, dict);
}
