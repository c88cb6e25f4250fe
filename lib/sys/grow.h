/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Room for one more element in a growing array, doubling its capacity:
 *
 *	struct row *v = grow_room(t->rows, t->n, &t->cap, 16, sizeof(*v));
 *
 *	if (!v)
 *		return -1;	(t->rows is still valid, t->cap unchanged)
 *	t->rows = v;
 *	t->rows[t->n++] = row;
 *
 * Returns v itself while n < *cap; otherwise v reallocated to twice *cap
 * (first when *cap is 0), or NULL if that size overflows or memory is
 * short. Bounds on how many elements an array may hold stay with its
 * caller: this only grows.
 */
#ifndef PYBPF_SYS_GROW_H
#define PYBPF_SYS_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline void *grow_room(void *v, size_t n, size_t *cap, size_t first, size_t elem)
{
	size_t want;
	void *nv;

	if (n < *cap)
		return v;
	want = *cap ? *cap : (first ? first : 1);
	if (*cap && want > SIZE_MAX / 2)
		return NULL;
	if (*cap)
		want *= 2;
	if (!elem || want > SIZE_MAX / elem)
		return NULL;
	nv = realloc(v, want * elem);
	if (nv)
		*cap = want;
	return nv;
}

#endif
