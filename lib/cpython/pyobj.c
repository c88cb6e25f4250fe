/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/pyobj.h"

#include <stdlib.h>
#include <string.h>

#include "cpython/code.h"
#include "sys/elf_image.h"
#include "sys/remote_mem.h"

#define MRO_MAX 64
#define CHUNK 4096 /* dict entries or set slots read at once */

int pyobj_init(struct pyobj *o, struct py_process *p, const struct py_async_layout *L)
{
	static const struct {
		const char *sym;
		size_t field;
	} syms[] = {
		{ "PyType_Type", offsetof(struct pyobj_types, type) },
		{ "PyUnicode_Type", offsetof(struct pyobj_types, str) },
		{ "PyLong_Type", offsetof(struct pyobj_types, long_) },
		{ "PyDict_Type", offsetof(struct pyobj_types, dict) },
		{ "PySet_Type", offsetof(struct pyobj_types, set) },
		{ "PyList_Type", offsetof(struct pyobj_types, list) },
		{ "PyTuple_Type", offsetof(struct pyobj_types, tuple) },
		{ "_PyWeakref_RefType", offsetof(struct pyobj_types, weakref) },
		{ "PyModule_Type", offsetof(struct pyobj_types, module) },
		{ "PyCoro_Type", offsetof(struct pyobj_types, coro) },
		{ "PyGen_Type", offsetof(struct pyobj_types, gen) },
		{ "_Py_NoneStruct", offsetof(struct pyobj_types, none) },
	};
	struct elf_image img;
	int rc = 0;

	memset(o, 0, sizeof(*o));
	o->p = p;
	o->L = L;
	if (py_process_open_interp(p, &img) != 0)
		return -1;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		uint64_t value, size;

		if (elf_image_symbol(&img, syms[i].sym, &value, &size) != 0) {
			rc = -1;
			break;
		}
		*(uint64_t *)((char *)&o->t + syms[i].field) = p->load_bias + value;
	}
	elf_image_close(&img);
	return rc;
}

int pyobj_u64(const struct pyobj *o, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return addr ? remote_read_u64(o->p->pid, addr, v) : -1;
}

uint64_t pyobj_type(const struct pyobj *o, uint64_t obj)
{
	uint64_t t = 0;

	if (!obj || (obj & 7) || pyobj_u64(o, obj + (uint64_t)o->p->off.object_type, &t) < 0 ||
	    (t & 7))
		return 0;
	return t;
}

bool pyobj_is(const struct pyobj *o, uint64_t obj, uint64_t type)
{
	return type && pyobj_type(o, obj) == type;
}

static int64_t var_size(const struct pyobj *o, uint64_t obj)
{
	uint64_t v;

	if (pyobj_u64(o, obj + (uint64_t)o->L->var_size, &v) < 0)
		return -1;
	return (int64_t)v;
}

int pyobj_sequence(const struct pyobj *o, uint64_t seq, uint64_t *out, size_t max)
{
	uint64_t type = pyobj_type(o, seq), items;
	int64_t n;

	if (!type || (type != o->t.list && type != o->t.tuple))
		return -1;
	n = var_size(o, seq);
	if (n < 0 || n > PYOBJ_MAX_ITEMS)
		return -1;
	if ((size_t)n > max)
		n = (int64_t)max;
	if (n == 0)
		return 0;
	if (type == o->t.tuple)
		items = seq + (uint64_t)o->L->tuple_items;
	else if (pyobj_u64(o, seq + (uint64_t)o->L->list_items, &items) < 0)
		return -1;
	if (remote_read(o->p->pid, items, out, (size_t)n * 8) < 0)
		return -1;
	return (int)n;
}

bool pyobj_type_is_sub(const struct pyobj *o, uint64_t type, uint64_t base)
{
	uint64_t mro = 0, items[MRO_MAX];
	int n;

	if (!type || !base)
		return false;
	if (type == base)
		return true;
	if (pyobj_u64(o, type + (uint64_t)o->L->type_mro, &mro) == 0 && mro) {
		n = pyobj_sequence(o, mro, items, MRO_MAX);
		for (int i = 0; i < n; i++)
			if (items[i] == base)
				return true;
		return false;
	}
	/* no MRO yet: the base chain */
	for (int depth = 0; depth < MRO_MAX && type; depth++) {
		if (pyobj_u64(o, type + (uint64_t)o->L->type_base, &type) < 0)
			return false;
		if (type == base)
			return true;
	}
	return false;
}

int pyobj_type_name(const struct pyobj *o, uint64_t type, char *buf, size_t len)
{
	uint64_t name;
	size_t n;

	if (!len || pyobj_u64(o, type + (uint64_t)o->L->type_name, &name) < 0 || !name)
		return -1;
	memset(buf, 0, len);
	/* the string may end close to a page end: read less when a read fails */
	for (n = len - 1; n > 0; n /= 2)
		if (remote_read(o->p->pid, name, buf, n) == 0)
			break;
	buf[n] = '\0';
	return n ? 0 : -1;
}

int pyobj_str(const struct pyobj *o, uint64_t obj, char *buf, size_t len)
{
	return py_read_string(o->p, obj, buf, len);
}

bool pyobj_str_eq(const struct pyobj *o, uint64_t obj, const char *s)
{
	const struct py_offsets *off = &o->p->off;
	size_t n = strlen(s), at = (size_t)off->unicode_ascii_size;
	uint8_t raw[512];
	uint64_t type, length;
	uint32_t state;
	char buf[256];

	/* the usual key, a compact ASCII str, in one read: header and text */
	if (n < sizeof(buf) - 4 && at + n + 1 <= sizeof(raw) && off->unicode_length >= 0 &&
	    off->unicode_state >= 0 && (size_t)off->unicode_state + 4 <= at && obj &&
	    remote_read(o->p->pid, obj, raw, at + n + 1) == 0) {
		unsigned shift = (unsigned)o->p->rules->str_state_interned_bits;

		memcpy(&type, raw + off->object_type, 8);
		memcpy(&length, raw + off->unicode_length, 8);
		memcpy(&state, raw + off->unicode_state, 4);
		if (type != o->t.str)
			return false;
		if (((state >> (shift + 3)) & 3) == 3 && ((state >> shift) & 7) == 1)
			return length == n && memcmp(raw + at, s, n) == 0;
	}
	return n < sizeof(buf) - 4 && pyobj_str(o, obj, buf, sizeof(buf)) == 0 &&
	       strcmp(buf, s) == 0;
}

int pyobj_long(const struct pyobj *o, uint64_t obj, int64_t *v)
{
	uint32_t digits[3] = { 0 };
	int64_t size;
	uint64_t ndigits, value = 0;
	bool negative;

	if (!pyobj_type_is_sub(o, pyobj_type(o, obj), o->t.long_))
		return -1;
	size = var_size(o, obj);
	if (o->p->rules->async.long_tag) { /* lv_tag: ndigits << 3 | sign (0 +, 1 zero, 2 -) */
		ndigits = (uint64_t)size >> 3;
		negative = (size & 3) == 2;
	} else {
		negative = size < 0;
		ndigits = negative ? (uint64_t)-size : (uint64_t)size;
	}
	if (ndigits > 2 || (ndigits &&
			    remote_read(o->p->pid, obj + (uint64_t)o->L->long_digits, digits,
					ndigits * 4) < 0))
		return -1;
	for (uint64_t i = ndigits; i-- > 0;)
		value = (value << 30) | (digits[i] & 0x3fffffff);
	*v = negative ? -(int64_t)value : (int64_t)value;
	return 0;
}

/* A dict's keys object, read: entries and (split tables) values. */
struct keys_view {
	uint64_t entries;  /* address of the first entry */
	uint64_t values;   /* split table: address of the first value; 0 combined */
	int64_t nentries;
	size_t entry_size; /* 24 general (hash, key, value), 16 str-keyed (key, value) */
};

static int keys_view(const struct pyobj *o, uint64_t keys, uint64_t values, struct keys_view *v)
{
	uint8_t hdr[64];
	unsigned log2_size, log2_index_bytes, kind;
	int64_t nentries;
	int32_t span = o->L->keys_nentries + 8;

	if (!keys || span > (int32_t)sizeof(hdr) || remote_read(o->p->pid, keys, hdr, (size_t)span) < 0)
		return -1;
	log2_size = hdr[o->L->keys_log2_size];
	log2_index_bytes = hdr[o->L->keys_log2_index_bytes];
	kind = hdr[o->L->keys_kind];
	memcpy(&nentries, hdr + o->L->keys_nentries, 8);
	/* sizes as CPython makes them: indices of 1-8 bytes each */
	if (log2_size < 3 || log2_size > 30 || log2_index_bytes < log2_size ||
	    log2_index_bytes > log2_size + 3 || kind > 2 || nentries < 0 ||
	    nentries > ((int64_t)1 << log2_size) || nentries > PYOBJ_MAX_ITEMS)
		return -1;
	v->entries = keys + (uint64_t)o->L->keys_indices + ((uint64_t)1 << log2_index_bytes);
	v->values = values ? values + (uint64_t)o->L->values_values : 0;
	v->nentries = nentries;
	v->entry_size = kind == 0 ? 24 : 16;
	return 0;
}

/* Calls fn for each (key, value) of a keys view, in chunks. */
static int keys_each(const struct pyobj *o, const struct keys_view *v, pyobj_item_fn fn, void *arg)
{
	uint64_t *buf = malloc(CHUNK * 24), *vals = v->values ? malloc(CHUNK * 8) : NULL;
	int rc = 0;

	if (!buf || (v->values && !vals)) {
		free(buf);
		free(vals);
		return -1;
	}
	for (int64_t at = 0; at < v->nentries && rc == 0; at += CHUNK) {
		int64_t n = v->nentries - at < CHUNK ? v->nentries - at : CHUNK;
		size_t words = v->entry_size / 8;

		if (remote_read(o->p->pid, v->entries + (uint64_t)at * v->entry_size, buf,
				(size_t)n * v->entry_size) < 0 ||
		    (vals && remote_read(o->p->pid, v->values + (uint64_t)at * 8, vals,
					 (size_t)n * 8) < 0)) {
			rc = -1;
			break;
		}
		for (int64_t i = 0; i < n && rc == 0; i++) {
			uint64_t *e = buf + (size_t)i * words;
			uint64_t key = e[words - 2];
			uint64_t value = vals ? vals[i] : e[words - 1];

			if (key && value)
				rc = fn(key, value, arg);
		}
	}
	free(buf);
	free(vals);
	return rc;
}

int pyobj_dict_each(const struct pyobj *o, uint64_t dict, pyobj_item_fn fn, void *arg)
{
	struct keys_view v;
	uint64_t keys, values;

	if (!pyobj_type_is_sub(o, pyobj_type(o, dict), o->t.dict) ||
	    pyobj_u64(o, dict + (uint64_t)o->L->dict_keys, &keys) < 0 ||
	    pyobj_u64(o, dict + (uint64_t)o->L->dict_values, &values) < 0 ||
	    keys_view(o, keys, values, &v) < 0)
		return -1;
	return keys_each(o, &v, fn, arg);
}

struct find_key {
	const struct pyobj *o;
	const char *name;
	uint64_t value;
};

static int match_key(uint64_t key, uint64_t value, void *arg)
{
	struct find_key *f = arg;

	if (!pyobj_str_eq(f->o, key, f->name))
		return 0;
	f->value = value;
	return 1;
}

int pyobj_dict_get(const struct pyobj *o, uint64_t dict, const char *key, uint64_t *value)
{
	struct find_key f = { o, key, 0 };
	int rc = pyobj_dict_each(o, dict, match_key, &f);

	*value = f.value;
	return rc < 0 ? -1 : rc == 1 ? 0 : 1;
}

int pyobj_set_each(const struct pyobj *o, uint64_t set, pyobj_item_fn fn, void *arg)
{
	uint64_t table, *buf;
	int64_t mask, used;
	int rc = 0;

	if (!pyobj_type_is_sub(o, pyobj_type(o, set), o->t.set) ||
	    pyobj_u64(o, set + (uint64_t)o->L->set_mask, (uint64_t *)&mask) < 0 ||
	    pyobj_u64(o, set + (uint64_t)o->L->set_used, (uint64_t *)&used) < 0 ||
	    pyobj_u64(o, set + (uint64_t)o->L->set_table, &table) < 0)
		return -1;
	/* mask + 1 is a power of two, at least 8, above the count */
	if (mask < 7 || mask >= 4 * PYOBJ_MAX_ITEMS || ((mask + 1) & mask) || used < 0 ||
	    used > mask || !table)
		return -1;
	buf = malloc(CHUNK * 16);
	if (!buf)
		return -1;
	for (int64_t at = 0; at <= mask && rc == 0; at += CHUNK) {
		int64_t n = mask + 1 - at < CHUNK ? mask + 1 - at : CHUNK;

		if (remote_read(o->p->pid, table + (uint64_t)at * 16, buf, (size_t)n * 16) < 0) {
			rc = -1;
			break;
		}
		for (int64_t i = 0; i < n && rc == 0; i++)
			if (buf[2 * i])
				rc = fn(buf[2 * i], 0, arg); /* dummies fail the caller's type checks */
	}
	free(buf);
	return rc;
}

uint64_t pyobj_weakref_target(const struct pyobj *o, uint64_t ref)
{
	uint64_t target = 0;

	if (!pyobj_type_is_sub(o, pyobj_type(o, ref), o->t.weakref) ||
	    pyobj_u64(o, ref + (uint64_t)o->L->weakref_object, &target) < 0 ||
	    target == o->t.none)
		return 0;
	return target;
}

/* The value of name in a values array keyed by a type's shared keys. */
static int shared_values_get(const struct pyobj *o, uint64_t type, uint64_t values,
			     const char *name, uint64_t *value)
{
	struct keys_view v;
	struct find_key f = { o, name, 0 };
	uint64_t keys;
	int rc;

	if (pyobj_u64(o, type + (uint64_t)o->L->heaptype_cached_keys, &keys) < 0 ||
	    keys_view(o, keys, values, &v) < 0)
		return -1;
	rc = keys_each(o, &v, match_key, &f);
	*value = f.value;
	return rc < 0 ? -1 : rc == 1 ? 0 : 1;
}

static int instance_attr(const struct pyobj *o, uint64_t obj, const char *name, uint64_t *value)
{
	const struct py_async_rules *r = &o->p->rules->async;
	uint64_t type = pyobj_type(o, obj), flags = 0, word = 0, values = 0;
	int64_t dictoffset = 0;

	*value = 0;
	if (!type || pyobj_u64(o, type + (uint64_t)o->L->type_flags, &flags) < 0)
		return -1;
	if (!(flags & r->tpflags_managed_dict)) {
		if (pyobj_u64(o, type + (uint64_t)o->L->type_dictoffset, (uint64_t *)&dictoffset) < 0 ||
		    dictoffset <= 0 || dictoffset > 1 << 16 ||
		    pyobj_u64(o, obj + (uint64_t)dictoffset, &word) < 0)
			return -1;
		return word ? pyobj_dict_get(o, word, name, value) : 1;
	}
	/* managed dict: the word before the GC header's two words */
	if (pyobj_u64(o, obj - 24, &word) < 0)
		return -1;
	switch (r->managed_dict) {
	case PY_MDICT_PREHEADER:
		if (!word && pyobj_u64(o, obj - 32, &values) < 0)
			return -1;
		break;
	case PY_MDICT_TAGGED:
		if (word & 1) {
			values = word + 1;
			word = 0;
		}
		break;
	case PY_MDICT_INLINE:
		if (!word && (flags & r->tpflags_inline_values)) {
			uint64_t basicsize;
			uint8_t valid = 0;

			if (pyobj_u64(o, type + (uint64_t)o->L->type_basicsize, &basicsize) < 0 ||
			    basicsize < 16 || basicsize > 1 << 16 ||
			    remote_read(o->p->pid, obj + basicsize + 3, &valid, 1) < 0)
				return -1;
			values = valid ? obj + basicsize : 0;
		}
		break;
	}
	if (word)
		return pyobj_dict_get(o, word, name, value);
	if (values)
		return shared_values_get(o, type, values, name, value);
	return 1;
}

/* A class attribute, from the dicts of the type's MRO. */
static int class_attr(const struct pyobj *o, uint64_t type, const char *name, uint64_t *value)
{
	uint64_t mro = 0, items[MRO_MAX], dict;
	int n;

	if (pyobj_u64(o, type + (uint64_t)o->L->type_mro, &mro) < 0 || !mro)
		return -1;
	n = pyobj_sequence(o, mro, items, MRO_MAX);
	for (int i = 0; i < n; i++) {
		int rc;

		if (pyobj_u64(o, items[i] + (uint64_t)o->L->type_dict, &dict) < 0 || !dict)
			continue;
		rc = pyobj_dict_get(o, dict, name, value);
		if (rc <= 0)
			return rc;
	}
	return n < 0 ? -1 : 1;
}

int pyobj_getattr(const struct pyobj *o, uint64_t obj, const char *name, uint64_t *value)
{
	int rc = instance_attr(o, obj, name, value);

	if (rc == 1 || (rc < 0 && *value == 0))
		rc = class_attr(o, pyobj_type(o, obj), name, value);
	return rc;
}

int pyobj_module_dict(const struct pyobj *o, uint64_t modules, const char *module,
		      uint64_t *dict)
{
	uint64_t mod;
	int rc = pyobj_dict_get(o, modules, module, &mod);

	*dict = 0;
	if (rc != 0)
		return rc;
	if (!pyobj_type_is_sub(o, pyobj_type(o, mod), o->t.module) ||
	    pyobj_u64(o, mod + (uint64_t)o->L->module_dict, dict) < 0)
		return -1;
	return 0;
}

int pyobj_module_global(const struct pyobj *o, uint64_t modules, const char *module,
			const char *name, uint64_t *value)
{
	uint64_t dict;
	int rc = pyobj_module_dict(o, modules, module, &dict);

	*value = 0;
	return rc != 0 ? rc : pyobj_dict_get(o, dict, name, value);
}
