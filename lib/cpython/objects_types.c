/* SPDX-License-Identifier: Apache-2.0 */
/* Type objects: what an object is, its type's names, flags and sizes. */
#include "cpython/objects.h"

#include <stdio.h>
#include <string.h>

#include "cpython/str_object.h"
#include "sys/remote_mem.h"

#define MRO_MAX 64             /* classes of one MRO, or bases followed */
#define TPFLAGS_HEAPTYPE (1UL << 9) /* the same bit in every version */
#define SIZE_PLAUSIBLE (1LL << 40)
#define TPFLAGS_HAVE_GC (1UL << 14) /* the same bit in every version */
#define GC_HEAD 16                  /* PyGC_Head (GIL builds) */

int py_obj_read_u64(const struct py_objects *o, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return addr ? remote_read_u64(o->p->pid, addr, v) : -1;
}

/* A field of a type object at a derived offset; -1 when absent. */
static int type_field(const struct py_objects *o, uint64_t type, int32_t off, uint64_t *v)
{
	*v = 0;
	if (off < 0 || !type)
		return -1;
	return remote_read_u64(o->p->pid, type + (uint64_t)off, v);
}

uint64_t py_obj_type(const struct py_objects *o, uint64_t addr)
{
	uint64_t type = 0;

	if (!addr || (addr & 7) ||
	    remote_read_u64(o->p->pid, addr + (uint64_t)o->p->off.object_type, &type) < 0 ||
	    (type & 7))
		return 0;
	return type;
}

int py_type_name(const struct py_objects *o, uint64_t type, char *buf, size_t len)
{
	uint64_t name = 0;
	size_t n = 0;

	if (len < 2 || type_field(o, type, o->type_name, &name) < 0 || !name)
		return -1;
	/* a C string of unknown length: in small pieces, a page end may follow */
	while (n + 1 < len) {
		char chunk[16];
		size_t want = sizeof(chunk) < len - 1 - n ? sizeof(chunk) : len - 1 - n;

		if (remote_read(o->p->pid, name + n, chunk, want) < 0) {
			if (remote_read(o->p->pid, name + n, chunk, 1) < 0)
				return -1;
			want = 1;
		}
		for (size_t i = 0; i < want; i++) {
			unsigned char c = (unsigned char)chunk[i];

			if (!c) {
				buf[n] = '\0';
				return n ? 0 : -1;
			}
			if (c < 0x20 || c >= 0x7f)
				return -1; /* type names are plain ASCII identifiers */
			buf[n++] = (char)c;
		}
	}
	buf[n] = '\0';
	return 0;
}

bool py_type_is_sub(const struct py_objects *o, uint64_t type, uint64_t base)
{
	uint64_t mro = 0, items[MRO_MAX];
	int n;

	if (!type || !base)
		return false;
	if (type == base)
		return true;
	if (type_field(o, type, o->type_mro, &mro) == 0 && mro) {
		n = py_sequence(o, mro, items, MRO_MAX, NULL);
		for (int i = 0; i < n; i++)
			if (items[i] == base)
				return true;
		return false;
	}
	/* no MRO yet: the base chain */
	for (int depth = 0; depth < MRO_MAX && type; depth++) {
		if (type_field(o, type, o->type_base, &type) < 0)
			return false;
		if (type == base)
			return true;
	}
	return false;
}

bool py_obj_is_instance(const struct py_objects *o, uint64_t addr, uint64_t type)
{
	return type && py_type_is_sub(o, py_obj_type(o, addr), type);
}

bool py_type_is_heap(const struct py_objects *o, uint64_t type)
{
	uint64_t flags = 0;

	return type_field(o, type, o->type_flags, &flags) == 0 && (flags & TPFLAGS_HEAPTYPE);
}

/* A heap type: __module__ from its dict, __qualname__ from ht_qualname. */
static int heap_qualname(const struct py_objects *o, uint64_t type, char *buf, size_t len)
{
	char module[128], qualname[256];
	uint64_t dict = 0, mod = 0, qual = 0;

	if (type_field(o, type, o->type_dict, &dict) < 0 ||
	    py_dict_get(o, dict, "__module__", &mod) != 0 ||
	    py_obj_str(o, mod, module, sizeof(module)) < 0 ||
	    type_field(o, type, o->heap_qualname, &qual) < 0 ||
	    py_obj_str(o, qual, qualname, sizeof(qualname)) < 0)
		return -1;
	snprintf(buf, len, "%s.%s", module, qualname);
	return 0;
}

int py_type_qualname(const struct py_objects *o, uint64_t type, char *buf, size_t len)
{
	char name[256];

	if (len < 2)
		return -1;
	if (py_type_is_heap(o, type)) {
		if (heap_qualname(o, type, buf, len) == 0)
			return 0;
	} else if (py_type_name(o, type, name, sizeof(name)) == 0) {
		/* a static type: tp_name is "module.Name", or "Name" of builtins */
		snprintf(buf, len, "%s%s", strchr(name, '.') ? "" : "builtins.", name);
		return 0;
	}
	snprintf(buf, len, "?");
	return -1;
}

/* Items that count in an object's size: digits of an int, code points
 * (and the terminator) of a compact str, else |ob_size|. */
static int item_count(const struct py_objects *o, uint64_t addr, uint64_t type, int64_t *n)
{
	int sign;
	size_t digits;

	if (py_type_is_sub(o, type, o->t_int)) {
		if (py_long_shape(o, addr, &digits, &sign) < 0)
			return -1;
		*n = (int64_t)digits;
		return 0;
	}
	if (remote_read(o->p->pid, addr + (uint64_t)o->var_size, n, 8) < 0 || *n < -SIZE_PLAUSIBLE ||
	    *n > SIZE_PLAUSIBLE)
		return -1;
	*n = *n < 0 ? -*n : *n;
	return 0;
}

int py_obj_size(const struct py_objects *o, uint64_t addr, uint64_t *bytes)
{
	uint64_t type = py_obj_type(o, addr), basic = 0, item = 0;
	struct py_str_view v;
	int64_t n = 0;

	*bytes = 0;
	if (type_field(o, type, o->type_basicsize, &basic) < 0 ||
	    type_field(o, type, o->type_itemsize, &item) < 0 || basic < 8 ||
	    basic > SIZE_PLAUSIBLE || item > 1 << 16)
		return -1;
	if (type == o->t_str) { /* a compact str keeps its text after the header */
		if (py_str_view_read(o->p, addr, &v) < 0)
			return -1;
		if (v.data == addr + (uint64_t)o->p->off.unicode_ascii_size ||
		    v.data == addr + (uint64_t)o->p->off.unicode_compact_size)
			basic = v.data - addr + (uint64_t)(v.length + 1) * v.kind;
	} else if (item && item_count(o, addr, type, &n) < 0) {
		return -1;
	}
	*bytes = basic + item * (uint64_t)n;
	return 0;
}

int py_type_info_read(const struct py_objects *o, uint64_t type, struct py_type_info *ti)
{
	uint64_t meta = py_obj_type(o, type);

	memset(ti, 0, sizeof(*ti));
	ti->type = type;
	if (!meta || type_field(o, type, o->type_basicsize, &ti->basicsize) < 0 ||
	    type_field(o, type, o->type_itemsize, &ti->itemsize) < 0 ||
	    type_field(o, type, o->type_flags, &ti->flags) < 0 || ti->basicsize < 8 ||
	    (int64_t)ti->basicsize > SIZE_PLAUSIBLE || ti->itemsize > 1 << 16)
		return -1;
	ti->is_type = py_type_is_sub(o, meta, o->t_type);
	if (!ti->is_type)
		return -1;
	if (ti->flags & TPFLAGS_HAVE_GC)
		ti->preheader = GC_HEAD + ((ti->flags & o->rules->tpflags_preheader) ? 16 : 0);
	ti->int_like = o->t_int && py_type_is_sub(o, type, o->t_int);
	return 0;
}

int py_obj_size_known(const struct py_objects *o, const struct py_type_info *ti, uint64_t addr,
		      int64_t ob_size, uint64_t *bytes)
{
	uint64_t n = 0;

	*bytes = 0;
	if (ti->int_like || ti->type == o->t_str) {
		if (py_obj_size(o, addr, &n) < 0)
			return -1;
	} else {
		if (ti->itemsize && (ob_size < -SIZE_PLAUSIBLE || ob_size > SIZE_PLAUSIBLE))
			return -1;
		n = ti->basicsize +
		    (ti->itemsize ? ti->itemsize * (uint64_t)(ob_size < 0 ? -ob_size : ob_size) : 0);
	}
	*bytes = ((n + 7) & ~7ULL) + ti->preheader;
	return 0;
}
