/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where an interpreter's cyclic garbage collector keeps its state: the
 * lists of tracked objects (three generations, or the incremental
 * collector's young and two old lists), the permanent generation of
 * gc.freeze(), and the `collecting` flag that is 1 while a collection
 * runs. The layout is the version's row of struct py_gc_rules
 * (cpython/rules.h), with _Py_DebugOffsets' word for 3.13+; every list
 * head is checked against the live process (a circular list whose
 * neighbours point back at it) before it is trusted, and a build whose
 * heads sit elsewhere (Debian's 3.13 aligns PyGC_Head differently) is
 * told by which candidate place passes that check, never guessed.
 */
#ifndef PYBPF_CPYTHON_GC_LAYOUT_H
#define PYBPF_CPYTHON_GC_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "cpython/process.h"

#define PY_GC_LISTS 3

enum py_gc_collector {
	PY_GC_GENERATIONAL, /* lists[] = generations 0, 1, 2 */
	PY_GC_INCREMENTAL,  /* 3.14.0-3.14.4: lists[] = young, old[0], old[1] */
};

struct py_gc_layout {
	uint64_t interp;     /* the interpreter state it was read for */
	uint64_t state;      /* address of the GC state (3.8: inside _PyRuntime,
				shared by every interpreter) */
	int32_t collecting;  /* offset of the int `collecting` from state */
	uint64_t lists[PY_GC_LISTS]; /* addresses of the list heads (PyGC_Head) */
	uint64_t permanent;  /* address of the permanent generation's head */
	enum py_gc_collector collector;
	int32_t heads_offset; /* where the heads were found, from state */
};

/*
 * The collector's layout for the interpreter state at interp (3.8: the
 * runtime's, whatever interp is). Returns 0, or -1 with the reason in
 * p->err and its class in p->fail: PY_FAIL_UNSUPPORTED (free-threaded,
 * no layout known, _Py_DebugOffsets that say another one),
 * PY_FAIL_VALIDATION (no candidate place holds valid list heads; also
 * while a collection rearranges them: try again), PY_FAIL_GONE.
 */
int py_gc_layout_read(struct py_process *p, uint64_t interp, struct py_gc_layout *g);

/* The `collecting` flag now: 0 or 1, or -1 if unreadable (p->err set). */
int py_gc_collecting(struct py_process *p, const struct py_gc_layout *g);

/* "generational" or "incremental". */
const char *py_gc_collector_name(enum py_gc_collector c);

#endif
