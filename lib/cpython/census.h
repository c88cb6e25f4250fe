/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A census of live objects by type, read from outside while the process
 * runs: every interpreter's collector lists (cpython/gc_layout.h) walked
 * from their heads, each object's type named as Python names it
 * (module.QualName) and its size counted as sys.getsizeof() counts an
 * object's own struct (cpython/objects.h). Only what the collector tracks
 * is on its lists: containers and instances; str, bytes, int, float and
 * the dicts and tuples it untracked are not.
 *
 * The walk races the program: memory is read in pages, every link is
 * checked to point back (a node freed under the walk is stepped around
 * from its predecessor, or the walk ends there), a loop that does not
 * return to the head is caught (Brent), objects, resyncs and time are
 * bounded, and the collector's `collecting` flag and generation counts
 * are read before and after each interpreter's walk: a walk that
 * overlapped a collection is tried again, and one that still did, or
 * that ended early, is marked and its counts are not vouched for.
 */
#ifndef PYBPF_CPYTHON_CENSUS_H
#define PYBPF_CPYTHON_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/objects.h"

#define PY_CENSUS_NAME 192
#define PY_CENSUS_MAX_TYPES 65536 /* objects of more types go to one row */

struct py_census_row {
	uint64_t type;
	char name[PY_CENSUS_NAME]; /* module.QualName, raw (escape to print) */
	uint64_t count, bytes;
};

struct py_census_limits {
	uint64_t max_objects;  /* per census, every list of every interpreter */
	uint64_t max_ns;       /* per census walk (retries included) */
	int tries;             /* walks of an interpreter that overlapped a collection */
};

struct py_census {
	struct py_census_row *rows; /* by type, in the order first met */
	struct py_type_info *infos; /* rows' types as read (is_type false: no type) */
	size_t nrows, cap;
	uint32_t *index; /* hash of type address -> row + 1 */
	uint64_t objects, bytes;
	uint64_t skipped;   /* nodes that were no object (type not a type, size unreadable) */
	uint64_t resyncs;   /* links that did not point back, stepped around */
	uint64_t other_types; /* objects beyond PY_CENSUS_MAX_TYPES types (in the last row) */
	int interpreters, walks;
	bool complete;      /* every list walked to its head, no collection overlapped */
	char why[200];      /* what made it incomplete */
	uint64_t start_realtime_ns, end_realtime_ns, walk_ns;
};

/* Defaults: 50 million objects, 30 s, 5 tries. */
void py_census_default_limits(struct py_census_limits *lim);

/*
 * Takes a census of o's process (every interpreter). Returns 0 (c filled;
 * c->complete says whether it can be vouched for), or -1 with the reason
 * in o->p->err (process gone, collector layout refused).
 */
int py_census_take(const struct py_objects *o, const struct py_census_limits *lim,
		   struct py_census *c);

void py_census_free(struct py_census *c);

#endif
