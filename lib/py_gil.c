/* SPDX-License-Identifier: Apache-2.0 */
#include "py_gil.h"

#include <stdio.h>
#include <stdlib.h>

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

int py_gil_locate(struct py_process *p, uint64_t *addr)
{
	struct py_gil_state st;
	struct py_thread *threads;
	bool holder_known = false;
	int n;

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
	if (!st.last_holder)
		return 0;
	threads = calloc(PY_MAX_THREADS, sizeof(*threads));
	if (!threads)
		return -1;
	n = py_threads_read(p, threads, PY_MAX_THREADS);
	for (int i = 0; i < n; i++)
		holder_known |= threads[i].tstate == st.last_holder;
	free(threads);
	/* a holder that has exited since leaves a stale pointer: only a
	 * locked GIL must name a live thread */
	if (n > 0 && st.locked && !holder_known) {
		snprintf(p->err, sizeof(p->err),
			 "GIL state failed validation (holder 0x%llx is no thread state)",
			 (unsigned long long)st.last_holder);
		return -1;
	}
	return 0;
}
