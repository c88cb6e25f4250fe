/* SPDX-License-Identifier: Apache-2.0 */
#include "report/string_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
	return h;
}

static void place(struct string_table *t, size_t index)
{
	size_t j = hash_bytes(t->v[index], t->lens[index]) & (t->nslots - 1);

	while (t->slots[j])
		j = (j + 1) & (t->nslots - 1);
	t->slots[j] = index + 1;
}

/* Keeps the table at most half full. */
static int grow(struct string_table *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 1024;
	size_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	for (size_t i = 0; i < t->n; i++)
		place(t, i);
	return 0;
}

long string_table_intern(struct string_table *t, const char *s, size_t len)
{
	size_t j;

	if ((t->n + 1) * 2 > t->nslots && grow(t) < 0)
		return -1;
	for (j = hash_bytes(s, len) & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		size_t i = t->slots[j] - 1;

		if (t->lens[i] == len && memcmp(t->v[i], s, len) == 0)
			return (long)i;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **v = realloc(t->v, cap * sizeof(*v));
		size_t *lens;

		if (!v)
			return -1;
		t->v = v;
		lens = realloc(t->lens, cap * sizeof(*lens));
		if (!lens)
			return -1;
		t->lens = lens;
		t->cap = cap;
	}
	t->v[t->n] = malloc(len + 1);
	if (!t->v[t->n])
		return -1;
	memcpy(t->v[t->n], s, len);
	t->v[t->n][len] = '\0';
	t->lens[t->n] = len;
	t->slots[j] = ++t->n;
	return (long)t->n - 1;
}

void string_table_free(struct string_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->lens);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
