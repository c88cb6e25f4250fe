/* SPDX-License-Identifier: Apache-2.0 */
#include "report/functions.h"

#include <stdlib.h>
#include <string.h>

void function_counts_init(struct function_counts *c, function_label_fn label)
{
	memset(c, 0, sizeof(*c));
	c->label = label;
}

void function_counts_free(struct function_counts *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].label);
	free(c->v);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}

void function_counts_clear(struct function_counts *c)
{
	for (size_t i = 0; i < c->n; i++)
		c->v[i].own = c->v[i].total = 0;
	c->all = 0;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

static void slot_place(struct function_counts *c, size_t i)
{
	size_t j = hash(c->v[i].label) & (c->nslots - 1);

	while (c->slots[j])
		j = (j + 1) & (c->nslots - 1);
	c->slots[j] = i + 1;
}

static int slots_grow(struct function_counts *c)
{
	size_t n = c->nslots ? c->nslots * 2 : 256;
	size_t *v = calloc(n, sizeof(*v));

	if (!v)
		return -1;
	free(c->slots);
	c->slots = v;
	c->nslots = n;
	for (size_t i = 0; i < c->n; i++)
		slot_place(c, i);
	return 0;
}

static long find_or_add(struct function_counts *c, const char *label)
{
	if ((c->n + 1) * 2 > c->nslots && slots_grow(c) < 0)
		return -1;
	for (size_t j = hash(label) & (c->nslots - 1); c->slots[j]; j = (j + 1) & (c->nslots - 1))
		if (strcmp(c->v[c->slots[j] - 1].label, label) == 0)
			return (long)c->slots[j] - 1;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct function_count *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
	c->v[c->n].label = strdup(label);
	if (!c->v[c->n].label)
		return -1;
	slot_place(c, c->n);
	return (long)c->n++;
}

int function_counts_add(struct function_counts *c, const struct report *rep, pid_t pid,
			pid_t tid)
{
	long *fn = malloc((rep->nframes ? rep->nframes : 1) * sizeof(*fn));
	size_t *stamp;
	char label[8192]; /* a name and a file as the tools read them (512 and 1024 bytes), escaped */

	if (!fn)
		return -1;
	/* each frame's function once, then rows are index look-ups */
	for (size_t i = 0; i < rep->nframes; i++) {
		fn[i] = -1;
		if (c->label(&rep->frames[i], label, sizeof(label)) &&
		    (fn[i] = find_or_add(c, label)) < 0) {
			free(fn);
			return -1;
		}
	}
	stamp = calloc(c->n ? c->n : 1, sizeof(*stamp)); /* row + 1 that counted it */
	if (!stamp) {
		free(fn);
		return -1;
	}
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = &rep->rows[i];
		bool own = true;

		if ((pid && r->pid != pid) || (tid && r->tid != tid))
			continue;
		c->all += r->value;
		for (int k = r->nframes - 1; k >= 0; k--) {
			long f = fn[r->frames[k]];

			if (f < 0)
				continue;
			if (own)
				c->v[f].own += r->value;
			own = false;
			if (stamp[f] != i + 1) { /* recursion counts once */
				stamp[f] = i + 1;
				c->v[f].total += r->value;
			}
		}
	}
	free(stamp);
	free(fn);
	return 0;
}
