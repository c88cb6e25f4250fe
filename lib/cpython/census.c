/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/census.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpython/gc_layout.h"
#include "cpython/threads.h"
#include "sys/remote_mem.h"

#define PAGE 4096u
#define PAGES 64          /* pages kept: the objects of a list sit in few pools */
#define HASH_SIZE (2u * PY_CENSUS_MAX_TYPES)
#define PTR_BITS 3ULL
#define GC_HEAD 16
#define GEN_COUNT 20      /* int count of struct gc_generation, from its head */
#define MAX_RESYNCS 100000
#define HEADS_MAX (PY_MAX_INTERPRETERS * (PY_GC_LISTS + 1))
#define NODE_MAX 64       /* bytes read per object: GC header, PyObject, ob_size */

struct page {
	uint64_t addr; /* 0: empty */
	uint8_t data[PAGE];
};

struct walk {
	const struct py_objects *o;
	struct py_census *c;
	struct page *pages;
	uint64_t heads[HEADS_MAX];
	int nheads;
	uint64_t visited, max_objects, deadline_ns;
	size_t node_len;
	char why[160];
};

/* What tells one collection from none: 3.8-3.13 and the generational
 * 3.14.5+ and 3.15 add one to the next generation's count at every
 * collection and reset the younger ones' (so gen 1's and 2's counts move
 * unless a full collection follows another with nothing between). */
struct epoch {
	int32_t collecting, count1, count2;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void py_census_default_limits(struct py_census_limits *lim)
{
	lim->max_objects = 50000000;
	lim->max_ns = 30ULL * 1000000000ULL;
	lim->tries = 5;
}

void py_census_free(struct py_census *c)
{
	free(c->rows);
	free(c->infos);
	free(c->index);
	memset(c, 0, sizeof(*c));
}

static void cache_clear(struct walk *w)
{
	for (int i = 0; i < PAGES; i++)
		w->pages[i].addr = 0;
}

/* len bytes at addr, through the page cache when they sit in one page. */
static int cached_read(struct walk *w, uint64_t addr, void *buf, size_t len)
{
	uint64_t base = addr & ~(uint64_t)(PAGE - 1);
	struct page *pg = &w->pages[(base / PAGE) % PAGES];
	int rc;

	if (addr + len > base + PAGE)
		return remote_read(w->o->p->pid, addr, buf, len);
	if (pg->addr != base) {
		pg->addr = 0;
		if ((rc = remote_read(w->o->p->pid, base, pg->data, PAGE)) < 0)
			return remote_read(w->o->p->pid, addr, buf, len);
		pg->addr = base;
	}
	memcpy(buf, pg->data + (addr - base), len);
	return 0;
}

static bool known_head(const struct walk *w, uint64_t node)
{
	for (int i = 0; i < w->nheads; i++)
		if (w->heads[i] == node)
			return true;
	return false;
}

/* The row of type (added, its info read, on first sight); NULL if full. */
static struct py_census_row *row_of(struct walk *w, uint64_t type, struct py_type_info **ti)
{
	struct py_census *c = w->c;
	uint32_t h = (uint32_t)((type >> 4) * 0x9E3779B1u) % HASH_SIZE;

	for (uint32_t n = 0; n < HASH_SIZE; n++, h = (h + 1) % HASH_SIZE) {
		uint32_t r = c->index[h];

		if (r && c->rows[r - 1].type == type) {
			*ti = &c->infos[r - 1];
			return &c->rows[r - 1];
		}
		if (r)
			continue;
		if (c->nrows >= PY_CENSUS_MAX_TYPES)
			return NULL;
		if (c->nrows == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 256;
			struct py_census_row *rows = realloc(c->rows, cap * sizeof(*rows));
			struct py_type_info *infos;

			if (!rows)
				return NULL;
			c->rows = rows;
			if (!(infos = realloc(c->infos, cap * sizeof(*infos))))
				return NULL;
			c->infos = infos;
			c->cap = cap;
		}
		struct py_census_row *row = &c->rows[c->nrows];

		memset(row, 0, sizeof(*row));
		row->type = type;
		if (py_type_info_read(w->o, type, &c->infos[c->nrows]) == 0)
			py_type_qualname(w->o, type, row->name, sizeof(row->name));
		c->index[h] = (uint32_t)++c->nrows;
		*ti = &c->infos[c->nrows - 1];
		return row;
	}
	return NULL;
}

/* Counts the object whose GC header (and what follows) is node[]. */
static void count_object(struct walk *w, uint64_t head, const uint8_t *node)
{
	const struct py_objects *o = w->o;
	uint64_t obj = head + GC_HEAD, type, bytes;
	int64_t ob_size;
	struct py_type_info *ti;
	struct py_census_row *row;

	memcpy(&type, node + GC_HEAD + o->p->off.object_type, 8);
	memcpy(&ob_size, node + GC_HEAD + o->var_size, 8);
	row = type && !(type & 7) ? row_of(w, type, &ti) : NULL;
	if (!type || (type & 7)) {
		w->c->skipped++;
		return;
	}
	if (!row) { /* more types than rows: the last row takes them */
		w->c->other_types++;
		return;
	}
	if (!ti->is_type || py_obj_size_known(o, ti, obj, ob_size, &bytes) < 0) {
		w->c->skipped++;
		return;
	}
	row->count++;
	row->bytes += bytes;
	w->c->objects++;
	w->c->bytes += bytes;
}

enum walk_end { WALK_DONE, WALK_BROKEN, WALK_LIMIT };

static enum walk_end broken(struct walk *w, enum walk_end e, const char *why, uint64_t at)
{
	snprintf(w->why, sizeof(w->why), "%s (at 0x%llx)", why, (unsigned long long)at);
	return e;
}

/* One list, from its head back to it. */
static enum walk_end walk_list(struct walk *w, uint64_t head)
{
	uint64_t prev = head, node = 0, saved = head, power = 1, lam = 0;
	uint8_t buf[NODE_MAX];

	if (remote_read_u64(w->o->p->pid, head, &node) < 0)
		return broken(w, WALK_BROKEN, "unreadable list head", head);
	node &= ~PTR_BITS;
	while (node != head) {
		uint64_t next, back;

		if (!node || known_head(w, node))
			return broken(w, WALK_BROKEN, "a link led out of the list", node);
		if (w->visited >= w->max_objects)
			return broken(w, WALK_LIMIT, "object limit reached", node);
		if ((w->visited & 1023) == 0 && mono_ns() > w->deadline_ns)
			return broken(w, WALK_LIMIT, "time limit reached", node);
		if (cached_read(w, node, buf, w->node_len) < 0)
			return broken(w, WALK_BROKEN, "unreadable object", node);
		memcpy(&next, buf, 8);
		memcpy(&back, buf + 8, 8);
		if ((back & ~PTR_BITS) != prev) {
			/* node left the list after prev was read: step around it
			 * from prev, read afresh */
			uint64_t again = 0;

			cache_clear(w);
			if (++w->c->resyncs > MAX_RESYNCS ||
			    remote_read_u64(w->o->p->pid, prev, &again) < 0 ||
			    (again & ~PTR_BITS) == node)
				return broken(w, WALK_BROKEN, "a link did not point back", node);
			node = again & ~PTR_BITS;
			continue;
		}
		w->visited++;
		count_object(w, node, buf);
		prev = node;
		node = next & ~PTR_BITS;
		if (node == saved) /* Brent: a loop that misses the head */
			return broken(w, WALK_BROKEN, "the list loops", node);
		if (++lam == power) {
			saved = node;
			power *= 2;
			lam = 0;
		}
	}
	return WALK_DONE;
}

static int read_epoch(const struct py_objects *o, const struct py_gc_layout *g, struct epoch *e)
{
	pid_t pid = o->p->pid;
	int rc;

	memset(e, 0, sizeof(*e));
	if ((rc = remote_read_i32(pid, g->state + (uint64_t)g->collecting, &e->collecting)) < 0)
		return rc;
	if (g->collector == PY_GC_INCREMENTAL)
		return 0; /* its counts say other things: the flag alone */
	if ((rc = remote_read_i32(pid, g->lists[1] + GEN_COUNT, &e->count1)) < 0)
		return rc;
	return remote_read_i32(pid, g->lists[2] + GEN_COUNT, &e->count2);
}

/* Waits (a little) for a running collection to end. */
static int quiet_epoch(const struct py_objects *o, const struct py_gc_layout *g, struct epoch *e)
{
	for (int i = 0; i < 200; i++) {
		int rc = read_epoch(o, g, e);

		if (rc < 0 || !e->collecting)
			return rc;
		nanosleep(&(struct timespec){ 0, 500 * 1000 }, NULL);
	}
	return 0;
}

/* Counts as they were before a walk, to undo one that failed. */
struct tally {
	size_t nrows;
	uint64_t *counts; /* count, bytes per row */
	uint64_t objects, bytes, skipped, other;
};

static int tally_save(const struct py_census *c, struct tally *t)
{
	free(t->counts);
	t->nrows = c->nrows;
	t->counts = malloc((c->nrows + 1) * 2 * sizeof(uint64_t));
	if (!t->counts)
		return -1;
	for (size_t i = 0; i < c->nrows; i++) {
		t->counts[2 * i] = c->rows[i].count;
		t->counts[2 * i + 1] = c->rows[i].bytes;
	}
	t->objects = c->objects;
	t->bytes = c->bytes;
	t->skipped = c->skipped;
	t->other = c->other_types;
	return 0;
}

/* Rows added since stay (their types are real), with nothing counted. */
static void tally_restore(struct py_census *c, const struct tally *t)
{
	for (size_t i = 0; i < c->nrows; i++) {
		c->rows[i].count = i < t->nrows ? t->counts[2 * i] : 0;
		c->rows[i].bytes = i < t->nrows ? t->counts[2 * i + 1] : 0;
	}
	c->objects = t->objects;
	c->bytes = t->bytes;
	c->skipped = t->skipped;
	c->other_types = t->other;
}

/* One interpreter's lists, tried again while walks overlap collections.
 * Returns 0 (vouched), 1 (counted but not vouched: w->why), or -errno. */
static int census_interp(struct walk *w, const struct py_gc_layout *g, int tries)
{
	struct tally t = { 0 };
	int result = 1, rc = 0;

	for (int attempt = 0; attempt < tries && result == 1; attempt++) {
		struct epoch before, after;
		enum walk_end end = WALK_DONE;

		if (attempt && (tally_restore(w->c, &t), mono_ns() > w->deadline_ns))
			break;
		if (attempt) /* let the collection that broke the walk end: 2, 4, 6 ms */
			nanosleep(&(struct timespec){ 0, 2000000L * attempt }, NULL);
		if ((rc = quiet_epoch(w->o, g, &before)) < 0 || (rc = tally_save(w->c, &t)) < 0)
			break;
		w->c->walks++;
		cache_clear(w);
		for (int i = 0; i < PY_GC_LISTS && end == WALK_DONE; i++)
			end = walk_list(w, g->lists[i]);
		if (end == WALK_DONE)
			end = walk_list(w, g->permanent);
		if ((rc = read_epoch(w->o, g, &after)) < 0)
			break;
		if (end == WALK_LIMIT) {
			result = 2;
			break;
		}
		if (end == WALK_DONE && !before.collecting && !after.collecting &&
		    before.count1 == after.count1 && before.count2 == after.count2)
			result = 0;
		else if (end == WALK_DONE)
			snprintf(w->why, sizeof(w->why), "a collection ran during the walk");
	}
	free(t.counts);
	if (rc < 0)
		return rc;
	return result ? 1 : 0;
}

static int fail_read(const struct py_objects *o, int rc, const char *what)
{
	return py_process_read_failed(o->p, rc, what);
}

int py_census_take(const struct py_objects *o, const struct py_census_limits *lim,
		   struct py_census *c)
{
	struct py_gc_layout g[PY_MAX_INTERPRETERS];
	struct walk w = { .o = o, .c = c };
	uint64_t interp = 0, t0 = mono_ns();
	int n = 0, rc = 0;

	memset(c, 0, sizeof(*c));
	c->complete = true;
	c->start_realtime_ns = real_ns();
	c->index = calloc(HASH_SIZE, sizeof(*c->index));
	w.pages = malloc(PAGES * sizeof(*w.pages));
	if (!c->index || !w.pages) {
		free(w.pages);
		return py_process_fail(o->p, PY_FAIL_TRANSIENT, "out of memory");
	}
	w.max_objects = lim->max_objects;
	w.deadline_ns = t0 + lim->max_ns;
	w.node_len = (size_t)GC_HEAD + (size_t)(o->var_size + 8);
	if (w.node_len > NODE_MAX || (size_t)o->p->off.object_type + 8 + GC_HEAD > NODE_MAX) {
		free(w.pages);
		return py_process_fail(o->p, PY_FAIL_UNSUPPORTED, "object header too large");
	}
	rc = remote_read_u64(o->p->pid, o->p->runtime_addr + (uint64_t)o->p->off.runtime_interpreters_head,
			     &interp);
	for (int i = 0; rc == 0 && interp && i < PY_MAX_INTERPRETERS; i++) {
		bool seen = false;

		if (py_gc_layout_read(o->p, interp, &g[n]) < 0) {
			free(w.pages);
			return -1;
		}
		for (int k = 0; k < n; k++)
			seen |= g[k].state == g[n].state; /* 3.8: one for all */
		if (!seen) {
			for (int l = 0; l < PY_GC_LISTS; l++)
				w.heads[w.nheads++] = g[n].lists[l];
			w.heads[w.nheads++] = g[n].permanent;
			n++;
		}
		rc = remote_read_u64(o->p->pid, interp + (uint64_t)o->p->off.interp_next, &interp);
	}
	if (rc < 0) {
		free(w.pages);
		return fail_read(o, rc, "the interpreters");
	}
	c->interpreters = n;
	for (int i = 0; i < n; i++) {
		rc = census_interp(&w, &g[i], lim->tries > 0 ? lim->tries : 1);
		if (rc < 0) {
			free(w.pages);
			return fail_read(o, rc, "the collector's lists");
		}
		if (rc) {
			c->complete = false;
			snprintf(c->why, sizeof(c->why), "%s", w.why);
		}
	}
	free(w.pages);
	c->walk_ns = mono_ns() - t0;
	c->end_realtime_ns = real_ns();
	return 0;
}
