/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A frame's module globals, read from outside: the dict the frame runs
 * with (f_globals), checked to be a module's (a dict with a str
 * __name__), and its variables with short reprs, through the one object
 * model (cpython/objects.h). For pydump --globals.
 */
#ifndef PYBPF_CPYTHON_GLOBALS_H
#define PYBPF_CPYTHON_GLOBALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/frames.h"
#include "cpython/objects.h"

#define PY_GLOBALS_MAX 256        /* variables shown per module */
#define PY_GLOBALS_SCANNED 4096   /* entries of a module's dict looked at */

struct py_global {
	char name[64];
	char repr[PY_REPR_MAX];
};

/* What a module's globals hold, read once per module dict. */
struct py_module_globals {
	uint64_t dict;
	char module[128]; /* __name__ */
	char file[256];   /* __file__, "" if none or not a str */
	struct py_global *vars; /* malloc'ed, nvars of them */
	size_t nvars;
	size_t hidden; /* left out: dunder names, modules, functions, classes */
	bool cut;      /* more variables than PY_GLOBALS_MAX or PY_GLOBALS_SCANNED */
};

/* The globals dict of a frame, checked to be a module's: 0 and *dict, or
 * -1 when it cannot be read or is not a module's dict. */
int py_frame_globals(const struct py_objects *o, const struct py_frame *f, uint64_t *dict);

/*
 * Reads a module dict's variables into g (g->vars malloc'ed; free with
 * py_module_globals_free), at most PY_GLOBALS_MAX, in the dict's order.
 * Without all, dunder names and values that are modules, functions
 * (Python or built-in) or classes are left out and counted in g->hidden:
 * what is left is the module's data. Returns 0, or -1 if unreadable.
 */
int py_module_globals_read(const struct py_objects *o, uint64_t dict, bool all,
			   struct py_module_globals *g);

void py_module_globals_free(struct py_module_globals *g);

#endif
