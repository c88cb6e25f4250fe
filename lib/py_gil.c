/* SPDX-License-Identifier: Apache-2.0 */
#include "py_gil.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "py_threads.h"
#include "remote_mem.h"

uint64_t py_gil_address(struct py_process *p, uint64_t interp)
{
	uint64_t gil = 0;

	if (p->free_threaded)
		return 0;
	if (p->version.minor <= 11)
		return p->off.runtime_gil >= 0 ? p->runtime_addr + (uint64_t)p->off.runtime_gil : 0;
	if (!interp && remote_read_u64(p->pid, p->runtime_addr +
						       (uint64_t)p->off.runtime_interpreters_head,
				       &interp) < 0)
		return 0;
	if (p->off.interp_ceval_gil < 0 ||
	    remote_read_u64(p->pid, interp + (uint64_t)p->off.interp_ceval_gil, &gil) < 0)
		return 0;
	return gil;
}

int py_gil_read(struct py_process *p, uint64_t addr, struct py_gil_state *st)
{
	if (p->off.gil_locked < 0 || p->off.gil_last_holder < 0 || p->off.gil_switch_number < 0)
		return -1;
	if (remote_read_u64(p->pid, addr, &st->interval_us) < 0 ||
	    remote_read_u64(p->pid, addr + (uint64_t)p->off.gil_last_holder, &st->last_holder) < 0 ||
	    remote_read_i32(p->pid, addr + (uint64_t)p->off.gil_locked, &st->locked) < 0 ||
	    remote_read_u64(p->pid, addr + (uint64_t)p->off.gil_switch_number,
			    &st->switch_number) < 0)
		return -1;
	return 0;
}

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

int py_gil_locate(struct py_process *p, uint64_t *addr)
{
	/* An ending thread unlinks its thread state before it drops the GIL,
	 * and threads come and go between the two reads: a holder missing
	 * from the list is only a failure when it stays missing while the
	 * GIL changes hands (or stays put) over a few tries. */
	enum { TRIES = 20, PAUSE_US = 5000 };
	struct py_gil_state st;
	struct py_thread *threads;
	int listed = 0;

	if (p->free_threaded) {
		snprintf(p->err, sizeof(p->err),
			 "free-threaded Python %d.%dt has no GIL", p->version.major, p->version.minor);
		return -1;
	}
	*addr = py_gil_address(p, 0);
	if (!*addr || py_gil_read(p, *addr, &st) < 0) {
		snprintf(p->err, sizeof(p->err), "cannot read the GIL state");
		return -1;
	}
	/* switch interval: 5000 us unless the program changed it */
	if (st.interval_us == 0 || st.interval_us > 100000000ull || (st.locked != 0 && st.locked != 1)) {
		snprintf(p->err, sizeof(p->err),
			 "GIL state failed validation (interval %llu, locked %d)",
			 (unsigned long long)st.interval_us, (int)st.locked);
		return -1;
	}
	threads = calloc(PY_MAX_THREADS, sizeof(*threads));
	if (!threads)
		return -1;
	for (int try = 0; try < TRIES; try++) {
		if (try > 0) {
			usleep(PAUSE_US);
			if (py_gil_read(p, *addr, &st) < 0)
				break;
		}
		listed = holder_is_listed(p, &st, threads);
		if (listed != 0)
			break;
	}
	free(threads);
	if (listed == 0) {
		snprintf(p->err, sizeof(p->err),
			 "GIL state failed validation (holder 0x%llx is no thread state)",
			 (unsigned long long)st.last_holder);
		return -1;
	}
	return 0;
}
