/* SPDX-License-Identifier: Apache-2.0 */
#include "report/path_suffix.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Where the component of p that ends at end (exclusive) starts. */
static size_t component_start(const char *p, size_t end)
{
	while (end && p[end - 1] != '/')
		end--;
	return end;
}

/*
 * Orders paths by their components from the last one (a path that runs
 * out of components first is first); *common: how many components, from
 * the last, the two share. "/a" has two components, "a" and "" before it.
 */
static int components_cmp(const char *a, const char *b, size_t *common)
{
	size_t ea = strlen(a), eb = strlen(b), n = 0;
	int c;

	for (;;) {
		size_t sa = component_start(a, ea), sb = component_start(b, eb);
		size_t la = ea - sa, lb = eb - sb;

		c = memcmp(a + sa, b + sb, la < lb ? la : lb);
		if (!c)
			c = (la > lb) - (la < lb);
		if (c)
			break;
		n++;
		if (!sa || !sb) { /* one has no component left */
			c = (sa > 0) - (sb > 0);
			break;
		}
		ea = sa - 1;
		eb = sb - 1;
	}
	if (common)
		*common = n;
	return c;
}

static int entry_cmp(const void *x, const void *y)
{
	return components_cmp(((const struct path_suffix *)x)->path,
			      ((const struct path_suffix *)y)->path, NULL);
}

/* The last k components of p, or p whole when it has no more, or when its
 * last component is empty (a path ending with '/'). */
static const char *last_components(const char *p, size_t k)
{
	size_t end = strlen(p);

	if (!end || p[end - 1] == '/')
		return p;
	for (size_t i = 0;; i++) {
		size_t s = component_start(p, end);

		if (i + 1 == k || !s)
			return p + s;
		end = s - 1;
	}
}

static const char *base_name(const char *path)
{
	return last_components(path, 1);
}

int path_suffixes_init(struct path_suffixes *s, const char *const *paths, size_t n)
{
	size_t k = 0;

	s->n = 0;
	s->v = malloc((n ? n : 1) * sizeof(*s->v));
	if (!s->v)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (paths[i])
			s->v[k++] = (struct path_suffix){ paths[i], NULL };
	if (k)
		qsort(s->v, k, sizeof(*s->v), entry_cmp);
	for (size_t i = 0; i < k; i++) /* one entry per distinct path */
		if (!s->n || strcmp(s->v[s->n - 1].path, s->v[i].path) != 0)
			s->v[s->n++] = s->v[i];
	for (size_t i = 0; i < s->n; i++) {
		size_t before = 0, after = 0;

		if (i)
			components_cmp(s->v[i - 1].path, s->v[i].path, &before);
		if (i + 1 < s->n)
			components_cmp(s->v[i].path, s->v[i + 1].path, &after);
		s->v[i].suffix = last_components(s->v[i].path, (before > after ? before : after) + 1);
	}
	return 0;
}

void path_suffixes_free(struct path_suffixes *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

const char *path_suffix(const struct path_suffixes *s, const char *path)
{
	struct path_suffix key = { path, NULL };
	const struct path_suffix *e =
		s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), entry_cmp) : NULL;

	return e ? e->suffix : base_name(path);
}
