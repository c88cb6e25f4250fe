// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/asyncio.c, asyncio_print.c and pyobj.c: asyncio's tasks read
 * from a hostile process (see fuzz_mem.h): sys.modules, module and
 * instance dicts (combined, split, managed, inline values), sets, weak
 * references, task lists that loop, coroutine chains that await
 * themselves, task graphs with cycles; then the tree printed (to
 * /dev/null) as pydump --async prints it.
 *
 * header.root: the one thread state; header.arg64: its interpreter. The
 * offsets are the generated table's for the header's version (3.14+: with
 * the task fields 3.14 publishes), as asyncio_layout.c would load them;
 * the built-in types sit inside the input, so the fuzzer can shape them.
 */
#include "fuzz_mem.h"
#include "cpython/asyncio.h"
#include "cpython/pyobj.h"

#define FUZZ_TYPES (FUZZ_BASE + 0x400)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null_out;
	struct fuzz_mem_header h;
	struct py_process p;
	struct py_asyncio_ctx ctx = { .ready = true, .source = PY_ASYNC_SRC_TABLE };
	struct pyobj_types t;
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
	for (size_t i = 0; i < sizeof(t) / sizeof(uint64_t); i++)
		((uint64_t *)&t)[i] = FUZZ_TYPES + 0x40 * i;
	t.str = p.unicode_type; /* py_read_string's own check */
	memcpy(ctx.types, &t, sizeof(t));
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
