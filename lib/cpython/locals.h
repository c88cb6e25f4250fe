/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A frame's arguments and local variables, read from outside: the names
 * from the code object (co_varnames, co_cellvars and co_freevars up to
 * 3.10; co_localsplusnames and co_localspluskinds from 3.11) and the
 * values from the frame's localsplus array, cells dereferenced.
 */
#ifndef PYBPF_CPYTHON_LOCALS_H
#define PYBPF_CPYTHON_LOCALS_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/frames.h"
#include "cpython/objects.h"

#define PY_LOCALS_MAX 256 /* variables shown per frame */

enum py_local_kind {
	PY_LOCAL_ARG,  /* an argument (positional, keyword-only, *args, **kwargs) */
	PY_LOCAL_VAR,  /* a plain local */
	PY_LOCAL_CELL, /* a local that inner functions capture */
	PY_LOCAL_FREE, /* captured from an enclosing function */
};

struct py_local {
	char name[64];           /* "" when read without names */
	uint64_t name_obj;       /* the str object of the name */
	enum py_local_kind kind;
	uint64_t value;          /* the object (a cell's content); 0 if unreadable */
	char repr[PY_REPR_MAX];  /* py_obj_repr() of it */
};

/*
 * The bound variables of a frame, in the code object's order (arguments
 * first), at most max. Unbound ones (not yet assigned, deleted) are left
 * out, as locals() would. Returns the count, or -1 when the frame's code
 * object or its name tables cannot be read.
 */
int py_frame_locals(const struct py_objects *o, const struct py_frame *f, struct py_local *out,
		    size_t max);

/* The same, values only: no names read (name_obj still set), no reprs.
 * For searches that look at every variable and name one of them. */
int py_frame_values(const struct py_objects *o, const struct py_frame *f, struct py_local *out,
		    size_t max);

const char *py_local_kind_name(enum py_local_kind kind);

#endif
