/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Interned strings with dense indices, as profile formats want them
 * (speedscope's shared frames, pprof's string table, locations, functions).
 */
#ifndef PYBPF_STRING_TABLE_H
#define PYBPF_STRING_TABLE_H

#include <stddef.h>

struct string_table {
	char **v;       /* by index */
	size_t *lens;   /* byte lengths (strings may hold '\0', e.g. joined keys) */
	size_t n, cap;
	size_t *slots;  /* open addressing: index + 1, 0 empty */
	size_t nslots;
};

/* Index of the len bytes at s, adding them if new. Returns -1 when out of
 * memory. */
long string_table_intern(struct string_table *t, const char *s, size_t len);

void string_table_free(struct string_table *t);

#endif
