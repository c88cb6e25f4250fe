/* SPDX-License-Identifier: Apache-2.0 */
/* Finding the GIL of a live interpreter and checking it against its threads. */
#ifndef PYBPF_CPYTHON_GIL_LOCATE_H
#define PYBPF_CPYTHON_GIL_LOCATE_H

#include <stdint.h>

#include "cpython/process.h"

/*
 * Finds the main interpreter's GIL and checks it against the live process:
 * a sane switch interval, locked 0 or 1, a last holder that is one of the
 * interpreter's thread states (or none yet). Returns 0 and *addr, or -1
 * with the reason in p->err.
 */
int py_gil_locate(struct py_process *p, uint64_t *addr);

#endif
