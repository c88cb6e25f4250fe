/* SPDX-License-Identifier: Apache-2.0 */
/* Checking a set of offsets against the live process before any use. */
#ifndef PYBPF_CPYTHON_VALIDATE_H
#define PYBPF_CPYTHON_VALIDATE_H

#include "cpython/process.h"

/*
 * Checks p->off against the live process (round trips through interpreter,
 * thread states, frames, code objects and strings). Returns 0, or -1 with
 * the failed check in p->err.
 */
int py_process_validate(struct py_process *p);

#endif
