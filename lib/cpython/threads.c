/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/threads.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/proc_maps.h"
#include "cpython/gil.h"
#include "sys/remote_mem.h"

static int read_failed(struct py_process *p, int rc, const char *what)
{
	py_process_read_failed(p, rc, what);
	return rc;
}

static uint64_t gil_holder(struct py_process *p, uint64_t interp)
{
	uint64_t gil = py_gil_address(p, interp), holder = 0;
	int32_t locked = 0;

	if (!gil || p->off.gil_locked < 0 || p->off.gil_last_holder < 0)
		return 0;
	if (remote_read_i32(p->pid, gil + (uint64_t)p->off.gil_locked, &locked) < 0 || locked != 1)
		return 0;
	if (remote_read_u64(p->pid, gil + (uint64_t)p->off.gil_last_holder, &holder) < 0)
		return 0;
	return holder;
}

static pid_t ns_tid_of(struct py_process *p, uint64_t tstate, uint64_t pthread_id)
{
	if (p->off.tstate_native_thread_id >= 0) {
		uint64_t tid = 0;

		if (remote_read_u64(p->pid, tstate + (uint64_t)p->off.tstate_native_thread_id,
				    &tid) == 0 && tid > 0 && tid < (1u << 30))
			return (pid_t)tid;
		return 0;
	}
	/* 3.8-3.10: read the tid out of the thread's struct pthread. */
	if (pthread_id) {
		int32_t tid = 0;

		if (remote_read_i32(p->pid, pthread_id + (uint64_t)p->pthread_tid_offset, &tid) == 0 &&
		    tid > 0)
			return tid;
	}
	return 0;
}

/* One walk of the interpreters' thread lists; on failure a negative errno
 * (-EAGAIN: a link that does not point back) with p->err set. */
static int read_once(struct py_process *p, struct py_thread *out, size_t max)
{
	struct proc_thread_id *ids = calloc(PY_MAX_THREADS, sizeof(*ids));
	uint64_t interp = 0;
	int nids, rc;
	size_t n = 0;

	if (!ids)
		return read_failed(p, -ENOMEM, "thread list");
	nids = proc_list_threads(p->pid, ids, PY_MAX_THREADS);
	if (nids < 0) {
		free(ids);
		return read_failed(p, nids, "thread list");
	}
	rc = remote_read_u64(p->pid, p->runtime_addr + (uint64_t)p->off.runtime_interpreters_head,
			     &interp);
	for (int i = 0; rc == 0 && interp && i < PY_MAX_INTERPRETERS; i++) {
		uint64_t tstate = 0, holder = gil_holder(p, interp), next_interp = 0;

		rc = remote_read_u64(p->pid, interp + (uint64_t)p->off.interp_threads_head, &tstate);
		for (int t = 0; rc == 0 && tstate && t < PY_MAX_THREADS && n < max; t++) {
			struct py_thread *th = &out[n];
			uint64_t back = 0, next = 0;

			memset(th, 0, sizeof(*th));
			rc = remote_read_u64(p->pid, tstate + (uint64_t)p->off.tstate_interp, &back);
			if (rc == 0 && back != interp) {
				py_process_fail(p, PY_FAIL_VALIDATION,
						"thread state 0x%llx does not point back to its "
						"interpreter",
						(unsigned long long)tstate);
				free(ids);
				return -EAGAIN;
			}
			if (rc == 0)
				rc = remote_read_u64(p->pid,
						     tstate + (uint64_t)p->off.tstate_thread_id,
						     &th->pthread_id);
			if (rc == 0)
				rc = remote_read_u64(p->pid, tstate + (uint64_t)p->off.tstate_next,
						     &next);
			if (rc < 0)
				break;
			th->tstate = tstate;
			th->interp = interp;
			th->holds_gil = holder == tstate;
			th->ns_tid = ns_tid_of(p, tstate, th->pthread_id);
			for (int k = 0; k < nids && th->ns_tid; k++)
				if (ids[k].ns_tid == th->ns_tid)
					th->host_tid = ids[k].host_tid;
			n++;
			tstate = next;
		}
		if (rc == 0)
			rc = remote_read_u64(p->pid, interp + (uint64_t)p->off.interp_next, &next_interp);
		interp = next_interp;
	}
	free(ids);
	if (rc < 0)
		return read_failed(p, rc, "thread states");
	return (int)n;
}

/*
 * The process runs on while its lists are walked: a thread that ends
 * frees its state, which may break the walk (a link that no longer points
 * back, a read of freed memory). A walk that broke is tried again;
 * garbage that stays gets the same answer every time.
 */
int py_threads_read(struct py_process *p, struct py_thread *out, size_t max)
{
	enum { TRIES = 4 };
	int n = -EAGAIN;

	for (int try = 0; try < TRIES && (n == -EAGAIN || n == -EFAULT); try++)
		n = read_once(p, out, max);
	return n < 0 ? -1 : n;
}
