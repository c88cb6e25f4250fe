// SPDX-License-Identifier: Apache-2.0
/*
 * pymem --census: live objects by type, read from outside without
 * stopping the process (cpython/census.h walks the collector's lists),
 * once, or every -i seconds with what grew between censuses, the way
 * objgraph.show_growth() shows it from inside. No BPF: the targets are
 * read through process_vm_readv.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "pymem.h"
#include "bpf/session.h"
#include "cpython/census.h"
#include "cpython/open.h"
#include "report/census.h"
#include "sys/plural.h"
#include "sys/proc_tree.h"
#include "sys/text_escape.h"

#define CENSUS_TOP 20
#define OPEN_WAIT_MS 3000
#define START_WAIT_MS 5000 /* a command just started may not be Python yet */

struct census_target {
	struct py_process p;
	struct py_objects objs;
	struct py_census prev; /* the last census, for growth */
	bool have_prev, gone;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Sleeps until the monotonic time `until` (ms), Ctrl-C or SIGTERM. */
static void sleep_until(uint64_t until)
{
	while (!session_stop) {
		uint64_t now = mono_ms(), step;

		if (now >= until)
			return;
		step = until - now < 100 ? until - now : 100;
		nanosleep(&(struct timespec){ 0, (long)step * 1000000L }, NULL);
	}
}

static int open_target(struct census_target *t, pid_t pid, bool launched)
{
	uint64_t end = mono_ms() + (launched ? START_WAIT_MS : 0);

	for (;;) {
		if (py_process_open_wait(&t->p, pid, OPEN_WAIT_MS) == 0)
			break;
		if (!launched || t->p.fail != PY_FAIL_NOT_PYTHON || mono_ms() >= end ||
		    session_stop) {
			py_process_name_python_children(&t->p, true);
			fprintf(stderr, "pymem: PID %d: %s\n", (int)pid, TEXT_ESC(t->p.err));
			return -1;
		}
		sleep_until(mono_ms() + 50);
	}
	if (py_objects_init(&t->objs, &t->p) < 0) {
		fprintf(stderr, "pymem: PID %d: %s\n", (int)pid, TEXT_ESC(t->objs.why));
		return -1;
	}
	return 0;
}

static int by_type(const void *a, const void *b)
{
	const struct py_census_row *x = a, *y = b;

	return x->type < y->type ? -1 : x->type > y->type;
}

/* The report rows of c, with deltas against prev (NULL: none). */
static struct census_row *report_rows(const struct py_census *c, struct py_census *prev,
				      size_t *n)
{
	struct census_row *rows = calloc(c->nrows + 1, sizeof(*rows));

	*n = 0;
	if (!rows)
		return NULL;
	if (prev && prev->nrows)
		qsort(prev->rows, prev->nrows, sizeof(*prev->rows), by_type);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct py_census_row *w = &c->rows[i];
		const struct py_census_row *old = NULL;
		struct census_row *r;

		if (!w->count)
			continue; /* a type met only in a walk undone, or no type */
		r = &rows[(*n)++];
		r->name = w->name;
		r->count = w->count;
		r->bytes = w->bytes;
		if (prev && prev->nrows)
			old = bsearch(w, prev->rows, prev->nrows, sizeof(*prev->rows), by_type);
		if (old && strcmp(old->name, w->name) != 0)
			old = NULL; /* the address now holds another type */
		r->dcount = (int64_t)w->count - (old ? (int64_t)old->count : 0);
		r->dbytes = (int64_t)w->bytes - (old ? (int64_t)old->bytes : 0);
	}
	return rows;
}

static void write_census(struct pymem_options *o, struct census_target *t,
			 const struct py_census *c)
{
	struct census_report r = {
		.pid = (int)t->p.pid, .comm = t->p.comm, .objects = c->objects, .bytes = c->bytes,
		.skipped = c->skipped, .resyncs = c->resyncs, .interpreters = c->interpreters,
		.walks = c->walks, .complete = c->complete, .why = c->why,
		.time_ns = c->end_realtime_ns, .walk_ns = c->walk_ns,
		/* growth from a census that could be vouched for, else a table */
		.growth = t->have_prev && t->prev.complete,
	};
	size_t top = o->top < 0 ? CENSUS_TOP : (size_t)o->top;
	FILE *out = o->cli.out;

	if (r.growth)
		r.interval_s = (double)(c->end_realtime_ns - t->prev.end_realtime_ns) / 1e9;
	r.rows = report_rows(c, r.growth ? &t->prev : NULL, &r.n);
	if (!r.rows) {
		fprintf(stderr, "pymem: out of memory\n");
		return;
	}
	if (o->cli.json)
		census_write_json(out, &r, o->top < 0 ? 0 : top);
	else if (o->cli.format == REPORT_FOLDED)
		census_write_folded(out, &r);
	else {
		census_write_text(out, &r, top);
		fputc('\n', out);
	}
	fflush(out);
	free(r.rows);
}

/* One census of t, written; false once the process is gone or refused. */
static bool take(struct pymem_options *o, struct census_target *t,
		 const struct py_census_limits *lim)
{
	struct py_census c;

	if (t->gone)
		return false;
	if (py_census_take(&t->objs, lim, &c) < 0) {
		fprintf(stderr, "pymem: PID %d: %s\n", (int)t->p.pid, TEXT_ESC(t->p.err));
		py_census_free(&c);
		t->gone = true;
		return false;
	}
	if (o->cli.verbose)
		fprintf(stderr,
			"pymem: PID %d: %llu %s in %.3f s, %d %s, %llu skipped, %llu %s\n",
			(int)t->p.pid, (unsigned long long)c.objects,
			plural(c.objects, "object", "objects"), (double)c.walk_ns / 1e9, c.walks,
			plural((unsigned)c.walks, "walk", "walks"), (unsigned long long)c.skipped,
			(unsigned long long)c.resyncs, plural(c.resyncs, "resync", "resyncs"));
	write_census(o, t, &c);
	/* growth is measured from the last census that could be vouched for:
	 * a partial one (printed, marked) does not become the baseline */
	if (t->have_prev && !c.complete && t->prev.complete) {
		py_census_free(&c);
		return true;
	}
	if (t->have_prev)
		py_census_free(&t->prev);
	t->prev = c;
	t->have_prev = true;
	return true;
}

/* The -p processes, their descendants with --children (at the start). */
static int target_pids(const struct tool_session *s, pid_t *pids, size_t max)
{
	size_t n = 0, nk = 0;
	pid_t *kids = NULL;

	for (size_t i = 0; i < s->npids && n < max; i++)
		pids[n++] = s->pids[i];
	if (s->follow_children && !s->launched &&
	    proc_descendants(s->pids, s->npids, &kids, &nk) == 0)
		for (size_t i = 0; i < nk && n < max; i++)
			pids[n++] = kids[i];
	free(kids);
	return (int)n;
}

static int check_options(const struct pymem_options *o, const struct tool_session *s)
{
	if (!o->cli.json && o->cli.format != REPORT_TEXT && o->cli.format != REPORT_FOLDED) {
		fprintf(stderr, "pymem: --census writes text, folded or json\n");
		return -1;
	}
	if (!s->npids) {
		fprintf(stderr, "pymem: --census needs -p PID or -- CMD (it reads one "
				"process's objects, not every process's)\n");
		return -1;
	}
	return 0;
}

static int run(struct pymem_options *o, struct tool_session *s, struct census_target *t,
	       int n)
{
	struct py_census_limits lim;
	int every = o->interval ? o->interval : o->cli.duration;
	uint64_t start = mono_ms(), next = start;
	bool alive = true;
	char after[64] = "";

	py_census_default_limits(&lim);
	if (every)
		snprintf(after, sizeof(after), ", what grew every %d s", every);
	/* one census says what it is in its own title */
	if (every && !o->cli.json && o->cli.format == REPORT_TEXT)
		cli_print_header(o->cli.out, &o->cli, s, "Census of live objects of ", after);
	while (alive && !session_stop) {
		alive = false;
		for (int i = 0; i < n; i++)
			alive |= take(o, &t[i], &lim);
		if (!every)
			break;
		next += (uint64_t)every * 1000;
		if (o->cli.duration && next > start + (uint64_t)o->cli.duration * 1000)
			break;
		sleep_until(next);
	}
	if (!o->cli.json && o->cli.format == REPORT_TEXT)
		fputs(census_left_out, o->cli.out);
	return 0;
}

int pymem_census(struct pymem_options *o, struct tool_session *s)
{
	pid_t pids[SESSION_MAX_PIDS];
	struct census_target *t;
	int n, opened = 0, rc = 1;

	if (cli_prepare_targets(&o->cli, s) < 0 || check_options(o, s) < 0)
		return cli_exit_status(&o->cli, s, 2);
	session_install_signals();
	if (session_start_command(s) < 0)
		return session_end_command(s);
	n = target_pids(s, pids, SESSION_MAX_PIDS);
	t = calloc((size_t)n + 1, sizeof(*t));
	if (!t) {
		fprintf(stderr, "pymem: out of memory\n");
		return cli_exit_status(&o->cli, s, 1);
	}
	for (int i = 0; i < n; i++)
		if (open_target(&t[opened], pids[i], s->launched) == 0)
			opened++;
	if (opened && cli_open_output(&o->cli) == 0) {
		rc = run(o, s, t, opened);
		if (cli_close_output(&o->cli) < 0)
			rc = 1;
	}
	for (int i = 0; i < opened; i++)
		if (t[i].have_prev)
			py_census_free(&t[i].prev);
	free(t);
	return cli_exit_status(&o->cli, s, rc);
}
