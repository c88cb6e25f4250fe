/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether a thread is running a collection, as BPF can tell it on each
 * sample: the main interpreter's `collecting` flag is set and the thread
 * holds the GIL (a collection runs with the GIL held, in the thread that
 * triggered it; the threads waiting meanwhile are not collecting). Both
 * places are checked against the live process (cpython/gc_layout.h,
 * cpython/gil_locate.h) before BPF is given them.
 */
#ifndef PYBPF_CPYTHON_GC_FLAG_H
#define PYBPF_CPYTHON_GC_FLAG_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/process.h"

/*
 * The addresses of the main interpreter's `collecting` int and its GIL.
 * Returns 0, or -1 with the reason in why (p->err and p->fail are left as
 * they were: the process stays readable for everything else).
 */
int py_gc_flag_locate(struct py_process *p, uint64_t *collecting, uint64_t *gil, char *why,
		      size_t len);

#endif
