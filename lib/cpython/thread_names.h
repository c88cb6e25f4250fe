/* SPDX-License-Identifier: Apache-2.0 */
/*
 * threading.Thread names, which CPython 3.8-3.13 never hand to the OS:
 * read from the target's threading._active dict (ident -> Thread), through
 * the interpreter's modules dict, so every version shows them.
 */
#ifndef PYBPF_CPYTHON_THREAD_NAMES_H
#define PYBPF_CPYTHON_THREAD_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/objects.h"

struct py_thread_name {
	uint64_t ident; /* threading.get_ident(): pthread_self() of the thread */
	uint64_t thread; /* the Thread object */
	char name[128];
};

/*
 * The names of the threads threading knows in the interpreter at interp,
 * at most max. Returns the count (0 when threading was never imported),
 * or -1 when the modules dict or threading._active cannot be read.
 */
int py_thread_names(const struct py_objects *o, uint64_t interp, struct py_thread_name *out,
		    size_t max);

#endif
