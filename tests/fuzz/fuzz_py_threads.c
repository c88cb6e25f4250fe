// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/threads.c and lib/cpython/gil.c: the interpreter and thread-state
 * lists and the GIL, read from a hostile process (see fuzz_mem.h): lists
 * that loop or point anywhere, thread states that do not point back.
 * header.root: _PyRuntime; count: room for thread states; FUZZ_GIL: also
 * locate and read the GIL as pygil does.
 */
#include "fuzz_mem.h"
#include "cpython/gil.h"
#include "cpython/gil_locate.h"
#include "cpython/threads.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem_header h;
	struct py_process p;
	struct py_thread *threads;
	size_t max;
	int n;

	if (fuzz_mem_process(data, size, &p, &h) < 0)
		return 0;
	max = h.count % 80;
	threads = malloc((max ? max : 1) * sizeof(*threads)); /* exactly max */
	if (!threads)
		abort();
	n = py_threads_read(&p, threads, max);
	FUZZ_CHECK(n <= (int)max);
	if (n < 0)
		FUZZ_CHECK(p.err[0]);
	free(threads);
	if (h.flags & FUZZ_GIL) {
		struct py_gil_state st;
		uint64_t gil = py_gil_address(&p, 0);

		if (gil)
			(void)py_gil_read(&p, gil, &st);
		(void)py_gil_locate(&p, &gil);
	}
	return 0;
}
