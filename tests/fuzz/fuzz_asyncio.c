// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/asyncio.c, asyncio_print.c and objects*.c: asyncio's tasks read
 * from a hostile process (see fuzz_mem.h): sys.modules, module and
 * instance dicts (combined, split, managed, inline values), sets, weak
 * references, task lists that loop, coroutine chains that await
 * themselves, task graphs with cycles; then the tree printed (to
 * /dev/null) as pydump --async prints it.
 *
 * header.root: the one thread state; header.arg64: its interpreter. The
 * offsets are the generated table's for the header's version (3.14+: with
 * the task fields 3.14 publishes), as asyncio_layout.c would load them;
 * the objects' offsets are the header's, those it leaves out the usual
 * ones; the built-in types sit inside the input, so the fuzzer can shape
 * them.
 */
#include "fuzz_mem.h"
#include "cpython/asyncio.h"
#include "cpython/objects.h"

#define FUZZ_TYPES (FUZZ_BASE + 0x400)

/* The object offsets the header leaves out: those of 3.11+ builds with a
 * GIL (PyTypeObject, dicts, sets, lists, tuples, ints, floats). */
static void complete_offsets(struct py_process *p)
{
	static const struct {
		const char *name;
		int32_t value;
	} usual[] = {
		{ "type_name", 24 },    { "type_basicsize", 32 }, { "type_flags", 168 },
		{ "type_dictoffset", 288 }, { "heaptype_cached_keys", 880 },
		{ "varobject_size", 16 }, { "tuple_items", 24 },   { "list_items", 24 },
		{ "float_value", 16 },  { "long_tag", 16 },       { "long_digits", 24 },
		{ "dict_keys", 32 },    { "dict_values", 40 },    { "set_used", 24 },
		{ "set_mask", 32 },     { "set_table", 40 },
	};

	for (size_t i = 0; i < sizeof(usual) / sizeof(usual[0]); i++) {
		int32_t *f = py_offsets_field(&p->off, usual[i].name);

		if (f && *f == PY_OFFSET_ABSENT)
			*f = usual[i].value;
	}
}

/* The built-in types at fixed places of the input. */
static void place_types(struct py_objects *o, const struct py_process *p)
{
	uint64_t *t[] = { &o->t_type, &o->t_str, &o->t_int, &o->t_dict, &o->t_set, &o->t_list,
			  &o->t_tuple, &o->t_weakref, &o->t_module, &o->t_coro, &o->t_gen, &o->none,
			  &o->t_bool, &o->t_float, &o->t_bytes, &o->t_frozenset, &o->t_cell,
			  &o->true_obj, &o->false_obj };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		*t[i] = FUZZ_TYPES + 0x40 * i;
	o->t_str = p->unicode_type; /* py_read_string's own check */
	o->t_bytes = p->bytes_type;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null_out;
	struct fuzz_mem_header h;
	struct py_process p;
	struct py_asyncio_ctx ctx = { .ready = true, .source = PY_ASYNC_SRC_TABLE };
	struct py_thread thread = { 0 };
	struct py_asyncio a;

	if (fuzz_mem_process(data, size, &p, &h) < 0 || !p.rules || p.free_threaded ||
	    p.rules->async.task_lists == PY_TASKS_UNSUPPORTED ||
	    py_async_layout_table(p.version.minor, &ctx.L) < 0)
		return 0;
	if (p.rules->async.task_lists == PY_TASKS_LINKED_LISTS) {
		/* what 3.14's AsyncioDebug section publishes (and its derivations) */
		ctx.L.task_size = 0xa8;
		ctx.L.task_name = 0x88;
		ctx.L.task_awaited_by = 0x60;
		ctx.L.task_is_task = 0x6c;
		ctx.L.task_awaited_by_is_set = 0x6d;
		ctx.L.task_coro = 0x80;
		ctx.L.task_node = 0x98;
		ctx.L.fut_loop = 16;
		ctx.L.fut_state = 0x68;
		ctx.L.task_fut_waiter = 0x78;
		ctx.L.futureiter_future = 16;
	}
	complete_offsets(&p);
	if (py_objects_init_layout(&ctx.objects, &p) < 0)
		return 0;
	place_types(&ctx.objects, &p);
	thread.tstate = h.root;
	thread.interp = h.arg64;
	thread.host_tid = getpid();
	if (!null_out)
		null_out = fopen("/dev/null", "we");
	if (py_asyncio_read(&p, &ctx, &thread, h.count % 2, &a) < 0) {
		FUZZ_CHECK(p.err[0]);
		return 0;
	}
	FUZZ_CHECK(a.ntasks >= 0 && a.ntasks <= PY_TASKS_MAX);
	for (int e = 0; e < a.nedges; e++)
		FUZZ_CHECK(a.edges[e].parent >= 0 && a.edges[e].parent < a.ntasks &&
			   a.edges[e].child >= 0 && a.edges[e].child < a.ntasks);
	for (int i = 0; i < a.ntasks; i++)
		FUZZ_CHECK(a.tasks[i].nframes >= 0 && a.tasks[i].nframes <= PY_TASK_FRAMES_MAX);
	if (null_out)
		py_asyncio_print(null_out, &p, &a);
	py_asyncio_free(&a);
	return 0;
}
