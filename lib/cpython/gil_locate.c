/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/gil_locate.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpython/gil.h"
#include "cpython/threads.h"
#include "sys/proc_maps.h"
#include "sys/remote_mem.h"

/* One check of the holder: 1 when the GIL is free or names a thread of the
 * list, 0 when it names none, -1 when the threads cannot be read. */
static int holder_is_listed(struct py_process *p, const struct py_gil_state *st,
			    struct py_thread *threads)
{
	int n;

	if (!st->last_holder || !st->locked)
		return 1;
	n = py_threads_read(p, threads, PY_MAX_THREADS);
	if (n <= 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (threads[i].tstate == st->last_holder)
			return 1;
	return 0;
}

/* Checks the GIL at addr; 0, or -1 with the failure in p. */
static int check_gil(struct py_process *p, uint64_t addr)
{
	/* An ending thread unlinks its thread state before it drops the GIL,
	 * and threads come and go between the two reads: a holder missing
	 * from the list is only a failure when it stays missing while the
	 * GIL changes hands (or stays put) over a few tries. */
	enum { TRIES = 20, PAUSE_US = 5000 };
	struct py_gil_state st;
	struct py_thread *threads;
	int listed = 0;

	if (!addr || py_gil_read(p, addr, &st) < 0)
		return py_process_fail(p, proc_alive(p->pid) ? PY_FAIL_TRANSIENT : PY_FAIL_GONE,
				       "cannot read the GIL state");
	/* switch interval: 5000 us unless the program changed it */
	if (st.interval_us == 0 || st.interval_us > 100000000ull || (st.locked != 0 && st.locked != 1)) {
		return py_process_fail(p, PY_FAIL_VALIDATION,
				       "GIL state failed validation (interval %llu, locked %d)",
				       (unsigned long long)st.interval_us, (int)st.locked);
	}
	threads = calloc(PY_MAX_THREADS, sizeof(*threads));
	if (!threads)
		return py_process_fail(p, PY_FAIL_TRANSIENT, "out of memory");
	for (int try = 0; try < TRIES; try++) {
		if (try > 0) {
			usleep(PAUSE_US);
			if (py_gil_read(p, addr, &st) < 0)
				break;
		}
		listed = holder_is_listed(p, &st, threads);
		if (listed != 0)
			break;
	}
	free(threads);
	if (listed == 0)
		return py_process_fail(p, PY_FAIL_VALIDATION,
				       "GIL state failed validation (holder 0x%llx is no thread state)",
				       (unsigned long long)st.last_holder);
	return 0;
}

int py_gils_locate(struct py_process *p, struct py_gil_ref *out, int max)
{
	uint64_t interps[PY_MAX_INTERPRETERS], interp = 0;
	int ninterps = 0, n = 0;

	if (p->free_threaded)
		return py_process_fail(p, PY_FAIL_UNSUPPORTED, "free-threaded Python %d.%dt has no GIL",
				       p->version.major, p->version.minor);
	if (max <= 0)
		return 0;
	/* the list runs newest first: the main interpreter is its last */
	if (remote_read_u64(p->pid, p->runtime_addr + (uint64_t)p->off.runtime_interpreters_head,
			    &interp) < 0)
		interp = 0;
	while (interp && ninterps < PY_MAX_INTERPRETERS) {
		interps[ninterps++] = interp;
		if (remote_read_u64(p->pid, interp + (uint64_t)p->off.interp_next, &interp) < 0)
			interp = 0;
	}
	if (!ninterps)
		return py_process_fail(p, proc_alive(p->pid) ? PY_FAIL_TRANSIENT : PY_FAIL_GONE,
				       "cannot read the GIL state");
	for (int i = ninterps - 1; i >= 0 && n < max; i--) {
		uint64_t gil = py_gil_address(p, interps[i]);
		bool known = false;

		for (int k = 0; k < n; k++)
			known |= out[k].gil == gil;
		if (known || (!gil && n))
			continue;
		if (check_gil(p, gil) < 0) {
			if (!n)
				return -1; /* the main interpreter's */
			continue; /* a sub-interpreter's, starting or ending */
		}
		out[n].interp = interps[i];
		out[n].gil = gil;
		n++;
	}
	return n;
}

int py_gil_locate(struct py_process *p, uint64_t *addr)
{
	struct py_gil_ref main_gil;

	*addr = 0;
	if (py_gils_locate(p, &main_gil, 1) < 0)
		return -1;
	*addr = main_gil.gil;
	return 0;
}
