/* SPDX-License-Identifier: Apache-2.0 */
/* asyncio tasks as a tree, like `python -m asyncio pstree` (cpython/asyncio.h). */
#include <stdlib.h>
#include <string.h>

#include "cpython/asyncio.h"
#include "cpython/code.h"
#include "sys/text_escape.h"

enum { UNSEEN, ON_PATH, PRINTED };

struct tree {
	FILE *f;
	struct py_process *p;
	const struct py_asyncio *a;
	int *mark;
	int *kids, *first_kid, *nkids; /* children of each task, by name */
};

static const struct py_asyncio *sort_tasks;
static int cmp_by_name(const void *x, const void *y)
{
	const struct py_task *a = &sort_tasks->tasks[*(const int *)x];
	const struct py_task *b = &sort_tasks->tasks[*(const int *)y];
	int c = strcmp(a->name, b->name);

	return c ? c : (a->addr > b->addr) - (a->addr < b->addr);
}

static void print_frame(struct tree *T, const char *prefix, const struct py_coro_frame *fr)
{
	struct py_code_info ci;
	int line;

	if (py_code_read(T->p, fr->code, &ci) < 0) {
		fprintf(T->f, "%s[unreadable frame]\n", prefix);
		return;
	}
	line = py_code_line(T->p, &ci, fr->instr_offset);
	if (line >= 0)
		fprintf(T->f, "%s%s (%s:%d)\n", prefix, TEXT_ESC(ci.name), TEXT_ESC(ci.filename), line);
	else
		fprintf(T->f, "%s%s (%s:?)\n", prefix, TEXT_ESC(ci.name), TEXT_ESC(ci.filename));
	py_code_info_free(&ci);
}

static void print_label(struct tree *T, const struct py_task *t)
{
	const struct py_asyncio *a = T->a;
	const char *what = NULL;

	fprintf(T->f, "(T) %s [", TEXT_ESC(t->name));
	if (t->running && t->thread)
		fprintf(T->f, "running in thread %d", (int)t->thread);
	else if (t->running)
		fprintf(T->f, "running");
	else
		fprintf(T->f, "%s", py_task_state_name(t->state));
	fprintf(T->f, "]");
	switch (t->awaits) {
	case PY_AWAITS_TASK:
		if (t->awaited_task >= 0)
			fprintf(T->f, " awaiting task %s", TEXT_ESC(a->tasks[t->awaited_task].name));
		break;
	case PY_AWAITS_GATHER:
		what = "gather";
		break;
	case PY_AWAITS_TASKGROUP:
		what = "TaskGroup";
		break;
	case PY_AWAITS_FUTURE:
		what = "future";
		break;
	case PY_AWAITS_NOTHING:
		break;
	}
	if (what)
		fprintf(T->f, " awaiting %s", what);
	if (t->python_task)
		fprintf(T->f, " (Python Task)");
}

static void print_task(struct tree *T, int i, const char *prefix, bool last, int depth)
{
	const struct py_task *t = &T->a->tasks[i];
	char child[4096], frames[4200];
	int n = T->nkids[i];

	fprintf(T->f, "%s%s", prefix, last ? "└── " : "├── ");
	print_label(T, t);
	if (T->mark[i] == ON_PATH) {
		fprintf(T->f, " [cycle]\n");
		return;
	}
	if (T->mark[i] == PRINTED) {
		fprintf(T->f, " [see above]\n");
		return;
	}
	fprintf(T->f, "\n");
	T->mark[i] = ON_PATH;
	snprintf(child, sizeof(child), "%s%s", prefix, last ? "    " : "│   ");
	if (strlen(child) > 3000 || depth > 200) { /* absurdly deep: cut, never overflow */
		fprintf(T->f, "%s[deeper tasks not shown]\n", child);
		T->mark[i] = PRINTED;
		return;
	}
	snprintf(frames, sizeof(frames), "%s%s    ", child, n ? "│" : " ");
	if (t->frames_cut)
		fprintf(T->f, "%s[inner coroutines cut]\n", frames);
	for (int k = 0; k < t->nframes; k++)
		print_frame(T, frames, &t->frames[k]);
	for (int k = 0; k < n; k++)
		print_task(T, T->kids[T->first_kid[i] + k], child, k == n - 1, depth + 1);
	T->mark[i] = PRINTED;
}

void py_asyncio_print(FILE *f, struct py_process *p, const struct py_asyncio *a)
{
	struct tree T = { f, p, a, NULL, NULL, NULL, NULL };
	int *roots = NULL, nroots = 0, fill;

	if (!a->asyncio_loaded || (a->ntasks == 0 && a->nloop_threads == 0)) {
		fprintf(f, "asyncio: no event loop\n");
		return;
	}
	fprintf(f, "asyncio: %d task%s, ", a->ntasks, a->ntasks == 1 ? "" : "s");
	if (!a->nloop_threads)
		fprintf(f, "no event loop running");
	for (int i = 0; i < a->nloop_threads; i++)
		fprintf(f, "%s%d", i ? ", " : "event loop running in thread ",
			(int)a->loop_threads[i]);
	fprintf(f, " [offsets: %s]\n", py_async_source_name(a->source));
	if (!a->ntasks)
		return;
	T.mark = calloc((size_t)a->ntasks, sizeof(int));
	T.first_kid = calloc((size_t)a->ntasks, sizeof(int));
	T.nkids = calloc((size_t)a->ntasks, sizeof(int));
	T.kids = calloc((size_t)a->nedges + 1, sizeof(int));
	roots = calloc((size_t)a->ntasks, sizeof(int));
	if (!T.mark || !T.first_kid || !T.nkids || !T.kids || !roots)
		goto out;
	for (int e = 0; e < a->nedges; e++)
		T.nkids[a->edges[e].parent]++;
	fill = 0;
	for (int i = 0; i < a->ntasks; i++) {
		T.first_kid[i] = fill;
		fill += T.nkids[i];
		T.nkids[i] = 0;
	}
	for (int e = 0; e < a->nedges; e++) {
		int par = a->edges[e].parent;

		T.kids[T.first_kid[par] + T.nkids[par]++] = a->edges[e].child;
	}
	sort_tasks = a;
	for (int i = 0; i < a->ntasks; i++)
		qsort(T.kids + T.first_kid[i], (size_t)T.nkids[i], sizeof(int), cmp_by_name);
	for (int i = 0; i < a->ntasks; i++)
		if (py_asyncio_awaiter(a, i) < 0)
			roots[nroots++] = i;
	qsort(roots, (size_t)nroots, sizeof(int), cmp_by_name);
	for (int r = 0; r < nroots; r++)
		print_task(&T, roots[r], "", true, 0);
	/* tasks that only await each other in a circle have no root */
	for (int i = 0; i < a->ntasks; i++)
		if (T.mark[i] == UNSEEN)
			print_task(&T, i, "", true, 0);
	if (a->edges_dropped)
		fprintf(f, "[about %llu more awaits not shown: at most %d are read]\n",
			(unsigned long long)a->edges_dropped, PY_AWAIT_EDGES_MAX);
out:
	free(T.mark);
	free(T.first_kid);
	free(T.nkids);
	free(T.kids);
	free(roots);
}
