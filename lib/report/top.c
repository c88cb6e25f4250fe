/* SPDX-License-Identifier: Apache-2.0 */
#include "report/top.h"

#include "sys/text_escape.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_LINES 5

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* What a function is called in the table, escaped (names come from the
 * targets); false for frames that are not functions of the process
 * (kernel, markers). */
static bool function_label(const struct report_frame *f, char *buf, size_t len)
{
	char raw[1024];

	if (f->kind == REPORT_FRAME_PYTHON && f->file) {
		if (f->first_line > 0)
			snprintf(raw, sizeof(raw), "%s (%s:%d)", report_frame_name(f),
				 base_name(f->file), f->first_line);
		else
			snprintf(raw, sizeof(raw), "%s (%s)", report_frame_name(f), base_name(f->file));
	} else if (f->kind == REPORT_FRAME_NATIVE && f->unnamed) {
		/* one row per stripped file: its functions by address would
		 * crowd the Python functions out of the screen */
		snprintf(raw, sizeof(raw), "%s [unnamed]", f->module ? base_name(f->module) : "[unknown]");
	} else if (f->kind == REPORT_FRAME_PYTHON || f->kind == REPORT_FRAME_NATIVE) {
		snprintf(raw, sizeof(raw), "%s", report_frame_name(f));
	} else {
		return false;
	}
	text_escape(buf, len, raw, NULL);
	return true;
}

void top_init(struct top *t, double seconds_per_unit)
{
	memset(t, 0, sizeof(*t));
	function_counts_init(&t->fn, function_label);
	t->seconds_per_unit = seconds_per_unit;
	t->since_start = true;
}

void top_free(struct top *t)
{
	function_counts_free(&t->fn);
	free(t->past);
	free(t->pids);
	free(t->tids);
	memset(t, 0, sizeof(*t));
}

static int add_id(pid_t **v, size_t *n, pid_t id)
{
	pid_t *grown;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == id)
			return 0;
	grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown)
		return -1;
	*v = grown;
	(*v)[(*n)++] = id;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The processes, and the threads of the process shown, in rep. */
static int note_ids(struct top *t, const struct report *rep)
{
	t->npids = t->ntids = 0;
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = &rep->rows[i];

		if (add_id(&t->pids, &t->npids, r->pid) < 0 ||
		    ((!t->only_pid || r->pid == t->only_pid) &&
		     add_id(&t->tids, &t->ntids, r->tid) < 0))
			return -1;
	}
	if (t->npids)
		qsort(t->pids, t->npids, sizeof(*t->pids), by_id);
	if (t->ntids)
		qsort(t->tids, t->ntids, sizeof(*t->tids), by_id);
	return 0;
}

/* Counts rep's rows (under the filters) into own and total; a function
 * new to the table has no past. */
static int count(struct top *t, const struct report *rep)
{
	size_t known = t->fn.n;

	if (function_counts_add(&t->fn, rep, t->only_pid, t->only_tid) < 0)
		return -1;
	if (t->fn.n > t->past_cap) {
		struct top_past *v = realloc(t->past, t->fn.cap * sizeof(*v));

		if (!v)
			return -1;
		t->past = v;
		t->past_cap = t->fn.cap;
	}
	if (t->fn.n > known)
		memset(&t->past[known], 0, (t->fn.n - known) * sizeof(*t->past));
	return 0;
}

/* The counts so far become the newest of the window's past refreshes. */
static void window_push(struct top *t)
{
	size_t at = t->next_at;

	for (size_t i = 0; i < t->fn.n; i++) {
		t->past[i].own_at[at] = t->fn.v[i].own;
		t->past[i].total_at[at] = t->fn.v[i].total;
	}
	t->all_at[at] = t->fn.all;
	t->ns_at[at] = t->now_ns;
	t->next_at = (at + 1) % TOP_WINDOW;
	if (t->nat < TOP_WINDOW)
		t->nat++;
}

int top_update(struct top *t, const struct report *rep, uint64_t now_ns)
{
	if (t->counted)
		window_push(t);
	function_counts_clear(&t->fn);
	t->now_ns = now_ns;
	if (count(t, rep) < 0 || note_ids(t, rep) < 0)
		return -1;
	t->counted = true;
	t->since_start = t->nat == 0;
	return 0;
}

/* The id after cur in ids (0, all, after the last). */
static pid_t next_id(const pid_t *ids, size_t n, pid_t cur)
{
	if (!cur)
		return n ? ids[0] : 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (ids[i] == cur)
			return ids[i + 1];
	return 0;
}

bool top_key(struct top *t, int key, const struct report *rep)
{
	switch (key) {
	case '1':
	case '2':
	case '3':
	case '4':
		t->sort = (enum top_sort)(key - '1');
		return true;
	case 'p':
		t->only_pid = next_id(t->pids, t->npids, t->only_pid);
		t->only_tid = 0;
		break;
	case 't':
		t->only_tid = next_id(t->tids, t->ntids, t->only_tid);
		break;
	case 'a':
		t->only_pid = t->only_tid = 0;
		break;
	default:
		return false;
	}
	/* counted again under the new filter, from the start */
	function_counts_clear(&t->fn);
	t->nat = 0;
	t->since_start = true;
	t->counted = rep && count(t, rep) == 0 && note_ids(t, rep) == 0;
	return true;
}

/* The oldest of the window's past refreshes in the ring. */
static size_t oldest(const struct top *t)
{
	return (t->next_at + TOP_WINDOW - t->nat) % TOP_WINDOW;
}

/* now - the value at the window's start (0 when it starts at the run's
 * start); a count that went back (a process forgotten) counts nothing. */
static uint64_t in_window(const struct top *t, uint64_t now, const uint64_t *at)
{
	uint64_t then = t->nat ? at[oldest(t)] : 0;

	return now > then ? now - then : 0;
}

/* The value function i is sorted by. */
static uint64_t sort_value(const struct top *t, size_t i)
{
	const struct function_count *f = &t->fn.v[i];

	switch (t->sort) {
	case TOP_OWN_SHARE:
		return in_window(t, f->own, t->past[i].own_at);
	case TOP_TOTAL_SHARE:
		return in_window(t, f->total, t->past[i].total_at);
	case TOP_OWN_TIME:
		return f->own;
	case TOP_TOTAL_TIME:
		return f->total;
	}
	return 0;
}

static int by_sort(const void *a, const void *b, void *ctx)
{
	const struct top *t = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct function_count *x = &t->fn.v[i], *y = &t->fn.v[j];
	uint64_t vx = sort_value(t, i), vy = sort_value(t, j);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	/* ties: the other measure, then the name */
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->label, y->label);
}

static void line(FILE *out, int width, const char *eol, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void line(FILE *out, int width, const char *eol, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* width in characters (UTF-8: a byte that starts one), cut between two */
	for (int i = 0, chars = 0; width > 0 && buf[i]; i++) {
		if (((unsigned char)buf[i] & 0xc0) != 0x80 && ++chars > width) {
			buf[i] = '\0';
			break;
		}
	}
	fprintf(out, "%s%s\n", buf, eol);
}

static const char *sort_name(enum top_sort s)
{
	static const char *const names[] = { "%Own", "%Total", "OwnTime", "TotalTime" };

	return names[s];
}

static void id_name(char *buf, size_t len, pid_t id)
{
	if (id)
		snprintf(buf, len, "%d", (int)id);
	else
		snprintf(buf, len, "all");
}

void top_render(const struct top *t, FILE *out, int width, int height, const char *title,
		const char *eol)
{
	size_t *order = malloc((t->fn.n ? t->fn.n : 1) * sizeof(*order)), shown = 0;
	uint64_t all = in_window(t, t->fn.all, t->all_at);
	char pid[16], tid[16], window[48];

	id_name(pid, sizeof(pid), t->only_pid);
	id_name(tid, sizeof(tid), t->only_tid);
	line(out, width, eol, "%s", title);
	line(out, width, eol, "Process %s, thread %s; sorted by %s.%s", pid, tid, sort_name(t->sort),
	     t->keys ? " Keys: 1-4 sort, p/t/a filter, q quit" : "");
	if (t->since_start || !t->nat)
		snprintf(window, sizeof(window), "since the start");
	else
		snprintf(window, sizeof(window), "in the last %.1f s",
			 (double)(t->now_ns - t->ns_at[oldest(t)]) / 1e9);
	line(out, width, eol, "%.2f s sampled %s, %.2f s in all", (double)all * t->seconds_per_unit,
	     window, (double)t->fn.all * t->seconds_per_unit);
	line(out, width, eol, "%s", "");
	line(out, width, eol, " %%Own %%Total  OwnTime TotalTime  Function");
	if (!order)
		return;
	for (size_t i = 0; i < t->fn.n; i++)
		if (t->fn.v[i].total)
			order[shown++] = i;
	if (shown)
		qsort_r(order, shown, sizeof(*order), by_sort, (void *)t);
	for (size_t i = 0; i < shown && (height <= 0 || (int)i < height - HEADER_LINES); i++) {
		const struct function_count *f = &t->fn.v[order[i]];
		const struct top_past *past = &t->past[order[i]];

		line(out, width, eol, "%5.1f %6.1f %7.2fs %8.2fs  %s",
		     all ? 100.0 * (double)in_window(t, f->own, past->own_at) / (double)all : 0.0,
		     all ? 100.0 * (double)in_window(t, f->total, past->total_at) / (double)all : 0.0,
		     (double)f->own * t->seconds_per_unit, (double)f->total * t->seconds_per_unit,
		     f->label);
	}
	free(order);
}
