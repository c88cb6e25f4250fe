// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/census.c and gc_layout.c on a hostile process (see
 * fuzz_mem.h): collector lists that loop without returning to their
 * head, links that do not point back, nodes that lead into another
 * list, types that are no type, sizes that lie, a `collecting` flag that
 * never clears. The census must end within its bounds and count only
 * what it read: the rows add up to its total, never more objects than
 * its limit, every name a string. header.root: _PyRuntime. Seeds:
 * tests/fuzz/seed_census.py.
 */
#include <time.h>

#include "fuzz_mem.h"
#include "cpython/census.h"

#define TYPE_AT(k) (FUZZ_BASE + 0x100 * (uint64_t)(k))

/* The walk waits for a collection to end and looks again at heads that
 * did not validate: no time to lose in a fuzzer, the logic is the same. */
int nanosleep(const struct timespec *req, struct timespec *rem)
{
	(void)req;
	(void)rem;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem_header h;
	struct py_process p;
	struct py_objects o;
	struct py_census c;
	struct py_census_limits lim = { .max_objects = 5000, .max_ns = 2000000000ULL, .tries = 3 };
	uint64_t total = 0;

	if (fuzz_mem_process(data, size, &p, &h) < 0 || py_objects_init_layout(&o, &p) < 0)
		return 0;
	o.t_int = TYPE_AT(4), o.t_str = p.unicode_type = TYPE_AT(7);
	o.t_type = TYPE_AT(17), o.t_tuple = TYPE_AT(9);
	if (py_census_take(&o, &lim, &c) == 0) {
		FUZZ_CHECK(c.objects <= lim.max_objects);
		for (size_t i = 0; i < c.nrows; i++) {
			FUZZ_CHECK(memchr(c.rows[i].name, 0, sizeof(c.rows[i].name)) != NULL);
			total += c.rows[i].count;
		}
		FUZZ_CHECK(total == c.objects);
		FUZZ_CHECK(c.complete || c.why[0]);
	}
	py_census_free(&c);
	return 0;
}
