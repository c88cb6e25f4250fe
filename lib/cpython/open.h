/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening a live CPython process: inspect it (cpython/process.h), then
 * take the first set of offsets that survives validation against its
 * memory (cpython/validate.h). Nothing of the target is stopped or run.
 */
#ifndef PYBPF_CPYTHON_OPEN_H
#define PYBPF_CPYTHON_OPEN_H

#include <sys/types.h>

#include "cpython/process.h"

/*
 * Attaches to a process. Returns 0, or -1 with a precise reason in p->err
 * ("no such process", "unsupported Python 3.7", ...).
 */
int py_process_open(struct py_process *p, pid_t pid);

#endif
