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
 * ("no such process", "unsupported Python 3.7", ...) and its class in
 * p->fail. PY_FAIL_NO_FRAMES: no thread runs Python code, so the offsets
 * could not be checked; py_process_choose with the same candidates tries
 * again without looking at the binary again.
 */
int py_process_open(struct py_process *p, pid_t pid);

/* py_process_open that hands back the offset sets it found, for
 * py_process_choose. */
int py_process_open_keep(struct py_process *p, pid_t pid, struct py_offsets_candidates *c);

/* Validates the candidates of an inspected process again; takes the first
 * that passes. Returns 0, or -1 as py_process_open. */
int py_process_choose(struct py_process *p, const struct py_offsets_candidates *c);

/*
 * py_process_open that waits up to wait_ms for a thread to run Python code
 * when none does (PY_FAIL_NO_FRAMES), for one-shot readers such as pydump.
 */
int py_process_open_wait(struct py_process *p, pid_t pid, int wait_ms);

#endif
