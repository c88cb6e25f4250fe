/* SPDX-License-Identifier: Apache-2.0 */
/* The interpreter's thread states, matched to the process's OS threads. */
#ifndef PYBPF_PY_THREADS_H
#define PYBPF_PY_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/process.h"

#define PY_MAX_INTERPRETERS 64
#define PY_MAX_THREADS 16384

struct py_thread {
	uint64_t tstate, interp;
	uint64_t pthread_id; /* pthread_self() of the thread */
	pid_t ns_tid;        /* tid inside the process's PID namespace; 0 if unknown */
	pid_t host_tid;      /* tid as the host sees it; 0 if no such OS thread */
	bool holds_gil;
};

/*
 * Reads every thread state of every interpreter, up to max. Returns the
 * count, or -1 with the reason in p->err (process gone, chain corrupt).
 */
int py_threads_read(struct py_process *p, struct py_thread *out, size_t max);

#endif
