// SPDX-License-Identifier: Apache-2.0
/*
 * The object reader (lib/cpython/objects*.c, str_object.c) on objects laid
 * out by hand in this process's own memory, as CPython 3.12 lays them out
 * (the built-in offset table's values): what pymem's census asks of it,
 * a type's module.QualName and an object's size, and a str whose header
 * puts its "ascii" bit where a free-threaded 3.14 puts it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "unit_check.h"

#include "cpython/objects.h"
#include "cpython/offsets.h"
#include "cpython/rules.h"
#include "cpython/str_object.h"

#define TPFLAGS_HEAPTYPE (1UL << 9)

static uint64_t heap[4096] __attribute__((aligned(64)));
static size_t heap_used;

/* words of zeroed, aligned memory */
static uint64_t *alloc(size_t words)
{
	uint64_t *p = heap + heap_used;

	heap_used += (words + 7) & ~(size_t)7;
	CHECK(heap_used <= sizeof(heap) / sizeof(heap[0]));
	return p;
}

static uint64_t at(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* A compact ASCII str (3.12: length at 16, state at 32, text at 40). */
static uint64_t make_str(const struct py_objects *o, const char *s, unsigned interned_bits)
{
	uint64_t *obj = alloc(5 + (strlen(s) + 8) / 8);
	uint32_t state = 1u << interned_bits | 1u << (interned_bits + 3) | 1u << (interned_bits + 4);

	obj[1] = o->t_str;
	obj[2] = strlen(s);
	memcpy((char *)obj + 32, &state, 4);
	memcpy((char *)obj + 40, s, strlen(s));
	return at(obj);
}

/* A combined dict of str keys (3.12: ma_used 16, ma_keys 32; the keys
 * object: log2 size 3 at 8, index bytes, kind 1 (str keys), nentries at
 * 24, 8 one-byte indices at 32, then (key, value) entries). */
static uint64_t make_dict(const struct py_objects *o, uint64_t key, uint64_t value)
{
	uint64_t *dict = alloc(6), *keys = alloc(7);
	uint8_t *k = (uint8_t *)keys;

	k[8] = 3;
	k[9] = 3;
	k[10] = 1;
	keys[3] = 1;
	keys[5] = key;
	keys[6] = value;
	dict[1] = o->t_dict;
	dict[2] = 1;
	dict[4] = at(keys);
	return at(dict);
}

/* A type object: tp_name at 24, tp_basicsize 32, tp_itemsize 40, tp_flags
 * 168, tp_dict 264; a heap type's ht_qualname 872 (before ht_cached_keys). */
static uint64_t *make_type(const struct py_objects *o, const char *name, uint64_t basicsize,
			   uint64_t itemsize, uint64_t flags)
{
	uint64_t *t = alloc(120);

	t[1] = o->t_type;
	t[3] = at(name);
	t[4] = basicsize;
	t[5] = itemsize;
	t[21] = flags;
	return t;
}

static void setup(struct py_process *p, struct py_objects *o, int minor, bool ft)
{
	memset(p, 0, sizeof(*p));
	p->pid = getpid();
	p->version.major = 3;
	p->version.minor = minor;
	p->free_threaded = ft;
	p->rules = py_rules_for(minor, ft);
	CHECK(py_offsets_builtin_table(12, &p->off) == 0);
	CHECK(py_objects_init_layout(o, p) == 0);
	o->t_type = at(alloc(1));
	o->t_str = p->unicode_type = at(make_type(o, "str", 40, 0, 0));
	o->t_dict = at(make_type(o, "dict", 48, 0, 0));
	o->t_int = at(make_type(o, "int", 24, 4, 0));
}

static void test_census(void)
{
	struct py_process p;
	struct py_objects o;
	char buf[64];
	uint64_t *lock, *cls, *obj, *num, *tuple_type, *tuple, bytes;

	setup(&p, &o, 12, false);
	lock = make_type(&o, "_thread.lock", 24, 0, 0);
	CHECK(py_type_qualname(&o, at(lock), buf, sizeof(buf)) == 0 &&
	      strcmp(buf, "_thread.lock") == 0);
	CHECK(py_type_qualname(&o, o.t_int, buf, sizeof(buf)) == 0 &&
	      strcmp(buf, "builtins.int") == 0);

	/* class Inner in class Outer of module "app.models" */
	cls = make_type(&o, "Inner", 56, 0, TPFLAGS_HEAPTYPE);
	cls[33] = make_dict(&o, make_str(&o, "__module__", 2), make_str(&o, "app.models", 2));
	cls[109] = make_str(&o, "Outer.Inner", 2);
	CHECK(py_type_qualname(&o, at(cls), buf, sizeof(buf)) == 0 &&
	      strcmp(buf, "app.models.Outer.Inner") == 0);
	CHECK(py_type_is_heap(&o, at(cls)) && !py_type_is_heap(&o, at(lock)));
	cls[109] = 0; /* its qualname unreadable: marked, not guessed */
	CHECK(py_type_qualname(&o, at(cls), buf, sizeof(buf)) < 0 && strcmp(buf, "?") == 0);

	obj = alloc(7);
	obj[1] = at(cls);
	CHECK(py_obj_size(&o, at(obj), &bytes) == 0 && bytes == 56);
	/* a variable-size object: 3 items of 8 bytes */
	tuple_type = make_type(&o, "tuple", 24, 8, 0);
	tuple = alloc(6);
	tuple[1] = at(tuple_type);
	tuple[2] = 3;
	CHECK(py_obj_size(&o, at(tuple), &bytes) == 0 && bytes == 24 + 3 * 8);
	/* an int of two 30-bit digits: 3.12's lv_tag = 2 << 3 */
	num = alloc(4);
	num[1] = o.t_int;
	num[2] = 2 << 3;
	CHECK(py_obj_size(&o, at(num), &bytes) == 0 && bytes == 24 + 2 * 4);
	num[2] = 2 << 3 | 3; /* no such sign */
	CHECK(py_obj_size(&o, at(num), &bytes) < 0);
	CHECK(py_obj_size(&o, at(obj) + 4, &bytes) < 0); /* not an object's address */
	/* a compact str: its text after the ASCII header, with the NUL */
	CHECK(py_obj_size(&o, make_str(&o, "hello", 2), &bytes) == 0 && bytes == 40 + 6);
}

/* Free-threaded 3.14 keeps a whole byte of interned state: the kind,
 * compact and ascii bits sit 6 bits higher than with a GIL. */
static void test_str_state_bits(void)
{
	struct py_process p;
	struct py_objects o;
	char buf[32];
	uint64_t s;

	setup(&p, &o, 14, true);
	CHECK(py_rules_str_ascii_bit(p.rules) == 12);
	s = make_str(&o, "worker-1", 8);
	CHECK(py_obj_str(&o, s, buf, sizeof(buf)) == 0 && strcmp(buf, "worker-1") == 0);
	CHECK(py_obj_str_eq(&o, s, "worker-1") && !py_obj_str_eq(&o, s, "worker-2"));
	s = make_str(&o, "worker-1", 2); /* a GIL build's bits: not a str here */
	CHECK(py_obj_str(&o, s, buf, sizeof(buf)) < 0);
}

int main(void)
{
	test_census();
	test_str_state_bits();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
