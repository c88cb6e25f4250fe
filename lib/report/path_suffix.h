/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Short names for the files of one report: each path by the shortest
 * suffix of whole components that tells it apart from the other paths of
 * the set. /srv/app.py and /usr/lib/python3/dist-packages/flask/app.py
 * are "srv/app.py" and "flask/app.py"; a file whose base name is alone
 * in the set is its base name. A path that is all of another's suffix
 * is named whole ("app.py" beside "flask/app.py"), as is a path that
 * ends with '/'.
 *
 * Paths sorted by their components from the last one: the path sharing
 * the most trailing components with one is next to it, so a set of N
 * paths costs a sort, never N * N comparisons (a target names its files).
 */
#ifndef PYBPF_REPORT_PATH_SUFFIX_H
#define PYBPF_REPORT_PATH_SUFFIX_H

#include <stddef.h>

struct path_suffix {
	const char *path;   /* borrowed: lives as long as the set's user needs it */
	const char *suffix; /* its short name, a pointer into path */
};

struct path_suffixes {
	struct path_suffix *v; /* distinct paths, in their components' order */
	size_t n;
};

/* The short names of paths[0..n) (duplicates and NULLs allowed). The
 * strings are borrowed, not copied. Returns 0 or -1 (out of memory: the
 * set is then empty, and every path is named by its base name). */
int path_suffixes_init(struct path_suffixes *s, const char *const *paths, size_t n);
void path_suffixes_free(struct path_suffixes *s);

/* The short name of path (its base name when it is not in the set). */
const char *path_suffix(const struct path_suffixes *s, const char *path);

#endif
