/* SPDX-License-Identifier: Apache-2.0 */
/* Finding the GILs of a live interpreter and checking them against its threads. */
#ifndef PYBPF_CPYTHON_GIL_LOCATE_H
#define PYBPF_CPYTHON_GIL_LOCATE_H

#include <stdint.h>

#include "cpython/process.h"

#define PY_MAX_GILS 8

/* A GIL and the first interpreter (oldest first) that uses it. */
struct py_gil_ref {
	uint64_t interp, gil;
};

/*
 * Finds the main interpreter's GIL and checks it against the live process:
 * a sane switch interval, locked 0 or 1, a last holder that is one of the
 * interpreter's thread states (or none yet). Returns 0 and *addr, or -1
 * with the reason in p->err.
 */
int py_gil_locate(struct py_process *p, uint64_t *addr);

/*
 * Every distinct GIL of the process, main interpreter's first, then those
 * of newer interpreters in the order they were made (3.12+: a
 * sub-interpreter may have its own; before, one GIL serves all), each
 * checked as py_gil_locate checks one; at most max. Returns the count, or
 * -1 with the reason in p->err (the main interpreter's GIL failed; a
 * sub-interpreter's that fails is left out: it may be starting or ending).
 */
int py_gils_locate(struct py_process *p, struct py_gil_ref *out, int max);

#endif
