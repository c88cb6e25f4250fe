// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/objects*.c, str_object.c, locals.c and thread_names.c on a
 * hostile process (see fuzz_mem.h): the repr of any object graph
 * (containers that contain themselves, lengths that lie, strings of every
 * kind, ints of any size, dicts of both keys layouts, instance and class
 * attributes by every model, MROs that loop), a type's module.QualName and
 * an object's size (the census), a frame's variables and module globals
 * (pydump -g) and threading._active. header.root: an object (also
 * read as a frame and as an interpreter state); arg64: a code object.
 * The built-in types sit at fixed addresses inside the input's range, so
 * the input can give them names.
 */
#include "fuzz_mem.h"
#include "cpython/globals.h"
#include "cpython/locals.h"
#include "cpython/objects.h"
#include "cpython/thread_names.h"

#define TYPE_AT(k) (FUZZ_BASE + 0x100 * (uint64_t)(k))

static int count_item(uint64_t key, uint64_t value, void *arg)
{
	(void)key;
	(void)value;
	return ++*(int *)arg > 1000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem_header h;
	struct py_process p;
	struct py_objects o;
	char buf[PY_REPR_MAX];
	static struct py_local locals[PY_LOCALS_MAX];
	static struct py_thread_name names[64];
	struct py_frame f;
	uint64_t v, seq[8];
	int n = 0;

	if (fuzz_mem_process(data, size, &p, &h) < 0 || py_objects_init_layout(&o, &p) < 0)
		return 0;
	o.none = TYPE_AT(1), o.true_obj = TYPE_AT(2), o.false_obj = TYPE_AT(3);
	o.t_int = TYPE_AT(4), o.t_bool = TYPE_AT(5), o.t_float = TYPE_AT(6);
	o.t_str = p.unicode_type = TYPE_AT(7), o.t_bytes = p.bytes_type = TYPE_AT(8);
	o.t_tuple = TYPE_AT(9), o.t_list = TYPE_AT(10), o.t_dict = TYPE_AT(11);
	o.t_set = TYPE_AT(12), o.t_frozenset = TYPE_AT(13), o.t_cell = TYPE_AT(14);
	o.t_module = TYPE_AT(15), o.t_type = TYPE_AT(17), o.t_weakref = TYPE_AT(18);
	o.t_coro = TYPE_AT(19), o.t_gen = TYPE_AT(20);
	p.code_type = TYPE_AT(16);

	FUZZ_CHECK(py_obj_repr(&o, h.root, buf, sizeof(buf)) <= 0);
	FUZZ_CHECK(strlen(buf) < sizeof(buf) && buf[0]);
	(void)py_obj_u64(&o, h.root, &v);
	(void)py_obj_str(&o, h.root, buf, sizeof(buf));
	(void)py_dict_each(&o, h.root, 64, count_item, &n);
	(void)py_dict_get(&o, h.root, "_name", &v);
	(void)py_obj_attr(&o, h.root, "_name", &v);
	(void)py_obj_attrs_each(&o, h.root, 64, count_item, &n);
	(void)py_module_dict(&o, h.root, &v);
	(void)py_module_dict_by_name(&o, h.root, "threading", &v);
	(void)py_obj_getattr(&o, h.root, "_name", &v);
	(void)py_obj_str_eq(&o, h.root, "_name");
	(void)py_obj_i64(&o, h.root, (int64_t *)&v);
	(void)py_obj_size(&o, h.root, &v);
	(void)py_weakref_target(&o, h.root);
	(void)py_set_each(&o, h.root, 64, count_item, &n);
	(void)py_sequence(&o, h.root, seq, sizeof(seq) / sizeof(seq[0]), NULL);
	FUZZ_CHECK(py_type_qualname(&o, py_obj_type(&o, h.root), buf, sizeof(buf)) <= 0);
	FUZZ_CHECK(strlen(buf) < sizeof(buf) && buf[0]);

	memset(&f, 0, sizeof(f));
	f.addr = h.root;
	f.code = h.arg64;
	n = py_frame_locals(&o, &f, locals, PY_LOCALS_MAX);
	FUZZ_CHECK(n <= PY_LOCALS_MAX);
	for (int i = 0; i < n; i++)
		FUZZ_CHECK(strlen(locals[i].repr) < sizeof(locals[i].repr));
	if (py_frame_globals(&o, &f, &v) == 0)
		FUZZ_CHECK(v != 0);
	for (int all = 0; all < 2; all++) {
		struct py_module_globals g;

		if (py_module_globals_read(&o, h.root, all, &g) < 0)
			continue;
		FUZZ_CHECK(g.nvars <= PY_GLOBALS_MAX && strlen(g.module) < sizeof(g.module));
		for (size_t i = 0; i < g.nvars; i++)
			FUZZ_CHECK(strlen(g.vars[i].repr) < sizeof(g.vars[i].repr));
		py_module_globals_free(&g);
	}
	n = py_thread_names(&o, h.root, names, 64);
	FUZZ_CHECK(n <= 64);
	return 0;
}
