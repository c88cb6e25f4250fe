/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/async_tasks.h"

#include <bcc/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/py_abi.h"
#include "cpython/code.h"
#include "cpython/threads.h"
#include "sys/clock.h"

#define CHECK_EVERY_NS 1000000000ull
#define MAX_ANCESTORS 16

struct pending {
	uint64_t frame, code, ident;
	char name[PY_TASK_NAME_MAX]; /* as BPF read it; "" none */
};

struct async_proc {
	pid_t pid;
	struct py_asyncio_ctx ctx;
	struct pending *pending;
	size_t npending, cap;
	bool live; /* has named tasks that have not ended */
	bool src_set; /* BPF's task_src entry written */
};

void async_tasks_init(struct async_tasks *t, int ids_fd, int src_fd)
{
	memset(t, 0, sizeof(*t));
	t->ids_fd = ids_fd;
	t->src_fd = src_fd;
	t->next_id = PYB_TASK_UNKNOWN + 1;
}

static void free_task(struct async_task *e)
{
	for (int i = 0; i < e->nroot; i++) {
		free(e->root[i].name);
		free(e->root[i].task_name);
		free(e->root[i].file);
	}
	free(e->root);
}

void async_tasks_free(struct async_tasks *t)
{
	for (size_t i = 0; i < t->n; i++)
		free_task(&t->v[i]);
	for (size_t i = 0; i < t->nprocs; i++)
		free(t->procs[i].pending);
	free(t->v);
	free(t->procs);
	memset(t, 0, sizeof(*t));
}

int async_group_parse(const char *arg, enum async_group *g)
{
	if (strcmp(arg, "name") == 0)
		*g = ASYNC_GROUP_NAME;
	else if (strcmp(arg, "coroutine") == 0)
		*g = ASYNC_GROUP_COROUTINE;
	else
		return -1;
	return 0;
}

static struct async_proc *proc_of(struct async_tasks *t, pid_t pid)
{
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	if (t->nprocs == t->procs_cap) {
		size_t cap = t->procs_cap ? 2 * t->procs_cap : 8;
		struct async_proc *v = realloc(t->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->procs = v;
		t->procs_cap = cap;
	}
	memset(&t->procs[t->nprocs], 0, sizeof(t->procs[0]));
	t->procs[t->nprocs].pid = pid;
	return &t->procs[t->nprocs++];
}

/* The name BPF copied from the task object (see pyb_task_event), made
 * printable; "" when it copied none. */
static void event_name(struct py_registry *reg, const struct pyb_task_event *ev, char *buf,
		       size_t len)
{
	struct py_target *target = registry_find(reg, (pid_t)ev->ev.pid);
	size_t n = ev->name_len < PYB_TASK_NAME_COPY - 1 ? ev->name_len : PYB_TASK_NAME_COPY - 1;

	buf[0] = 0;
	if (ev->name_kind == PYB_TASK_NAME_INT && target)
		py_asyncio_int_name(&target->proc, ev->name_words, buf, len);
	if (ev->name_kind != PYB_TASK_NAME_ASCII || n + 4 > len)
		return;
	for (size_t i = 0; i < n; i++)
		buf[i] = ev->name[i] >= 0x20 && ev->name[i] < 0x7f ? ev->name[i] : '?';
	strcpy(buf + n, ev->name_len > n ? "..." : "");
}

void async_tasks_on_event(struct async_tasks *t, struct py_registry *reg,
			  const struct pyb_task_event *ev)
{
	struct async_proc *pr = proc_of(t, (pid_t)ev->ev.pid);

	if (!pr)
		return;
	if (pr->npending == pr->cap) {
		size_t cap = pr->cap ? 2 * pr->cap : 16;
		struct pending *v = realloc(pr->pending, cap * sizeof(*v));

		if (!v)
			return;
		pr->pending = v;
		pr->cap = cap;
	}
	pr->pending[pr->npending].frame = ev->ev.key;
	pr->pending[pr->npending].code = ev->ev.arg;
	pr->pending[pr->npending].ident = ev->ident;
	event_name(reg, ev, pr->pending[pr->npending].name, sizeof(pr->pending[0].name));
	pr->npending++;
}

static void set_id(struct async_tasks *t, pid_t pid, const struct pending *q, uint64_t id)
{
	struct pyb_task_key k = {
		.pid = (uint32_t)pid, .frame = q->frame, .code = q->code, .ident = q->ident
	};

	if (t->ids_fd >= 0)
		bpf_update_elem(t->ids_fd, &k, &id, BPF_ANY);
}

static struct async_root_frame *push_root(struct async_task *e)
{
	struct async_root_frame *v = realloc(e->root, (size_t)(e->nroot + 1) * sizeof(*v));

	if (!v)
		return NULL;
	e->root = v;
	memset(&v[e->nroot], 0, sizeof(v[0]));
	return &v[e->nroot++];
}

/* A task frame: "<task LABEL>", NAME or QUALNAME as t groups them. */
static bool push_task(struct async_task *e, const char *label)
{
	struct async_root_frame *f = push_root(e);
	char buf[PY_NAME_MAX + 16];

	if (!f)
		return false;
	snprintf(buf, sizeof(buf), "<task %s>", label);
	f->task = true;
	f->name = strdup(buf);
	f->task_name = strdup(label);
	return f->name && f->task_name;
}

/* The qualified name of the coroutine of task pt, read live (its outermost
 * coroutine frame's code) into buf; false when it cannot be read. */
static bool coroutine_name(struct py_process *p, const struct py_task *pt, char *buf, size_t len)
{
	struct py_code_info ci;

	if (pt->nframes <= 0 || py_code_read(p, pt->frames[pt->nframes - 1].code, &ci) < 0)
		return false;
	snprintf(buf, len, "%s", ci.name);
	py_code_info_free(&ci);
	return buf[0] != 0;
}

/* The task frame of task pt, read live; *known false when grouped by
 * coroutine and its coroutine could not be read. */
static bool push_live_task(const struct async_tasks *t, struct async_task *e, struct py_process *p,
			   const struct py_task *pt, bool *known)
{
	char qualname[PY_NAME_MAX];

	*known = true;
	if (t->group == ASYNC_GROUP_NAME)
		return push_task(e, pt->name);
	*known = coroutine_name(p, pt, qualname, sizeof(qualname));
	return push_task(e, *known ? qualname : ASYNC_UNKNOWN_COROUTINE);
}

static bool push_coroutine(struct async_task *e, struct py_process *p, const struct py_coro_frame *c)
{
	struct async_root_frame *f = push_root(e);
	struct py_code_info ci;

	if (!f)
		return false;
	f->line = -1;
	if (py_code_read(p, c->code, &ci) < 0) {
		f->name = strdup("[unreadable frame]");
		return f->name != NULL;
	}
	f->name = strdup(ci.name);
	f->file = strdup(ci.filename);
	f->line = py_code_line(p, &ci, c->instr_offset);
	f->first_line = ci.firstlineno;
	py_code_info_free(&ci);
	return f->name && f->file;
}

/* The frames a sample of task i is rooted in (see async_tasks.h). */
static void build_root(struct async_tasks *tasks, struct py_process *p, const struct py_asyncio *a,
		       int i, struct async_task *e)
{
	int anc[MAX_ANCESTORS + 1], n = 0;
	bool known = true;

	anc[n++] = i;
	while (n <= MAX_ANCESTORS) {
		int up = py_asyncio_awaiter(a, anc[n - 1]);
		bool seen = false;

		for (int k = 0; k < n; k++)
			seen |= anc[k] == up;
		if (up < 0 || seen)
			break;
		anc[n++] = up;
	}
	for (int k = n - 1; k >= 0; k--) {
		const struct py_task *t = &a->tasks[anc[k]];

		if (!push_live_task(tasks, e, p, t, &known))
			return;
		if (k == 0)
			break; /* the task's own frames come from the sample */
		for (int f = t->nframes - 1; f >= 0; f--)
			if (!push_coroutine(e, p, &t->frames[f]))
				return;
	}
	tasks->coro_unknown += !known;
}

/* The task BPF saw as q: its coroutine frame and code, and the same task
 * object by address and name (not a later one at the same addresses). */
static int find_root(struct py_process *p, const struct async_proc *pr,
		     const struct py_asyncio *a, const struct pending *q)
{
	for (int i = 0; i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];

		if (t->root_frame == q->frame && t->nframes > 0 &&
		    t->frames[t->nframes - 1].code == q->code &&
		    py_asyncio_task_ident(p, &pr->ctx, t) == q->ident)
			return i;
	}
	return -1;
}

/* Tells BPF where this process's running tasks are, once. */
static void set_src(struct async_tasks *t, struct async_proc *pr)
{
	struct pyb_task_src src;
	uint32_t pid = (uint32_t)pr->pid;

	if (pr->src_set || t->src_fd < 0 || py_asyncio_task_src(&pr->ctx, &src) < 0)
		return;
	pr->src_set = bpf_update_elem(t->src_fd, &pid, &src, BPF_ANY) == 0;
}

/* The tasks of process pr (target) now; false when they cannot be read. */
static bool read_target(struct async_tasks *t, struct async_proc *pr, struct py_target *target,
			struct py_asyncio *a)
{
	struct py_thread *threads;
	int n;

	threads = calloc(PY_MAX_THREADS, sizeof(*threads));
	if (!threads)
		return false;
	n = py_threads_read(&target->proc, threads, PY_MAX_THREADS);
	if (n < 0 || py_asyncio_read(&target->proc, &pr->ctx, threads, n, a) < 0) {
		t->read_errors++;
		snprintf(t->last_error, sizeof(t->last_error), "PID %d: %s", (int)pr->pid,
			 target->proc.err);
		free(threads);
		return false;
	}
	free(threads);
	set_src(t, pr);
	return true;
}

/* The tasks of process pr now; false (and every pending frame unknown)
 * when they cannot be read. */
static bool read_tasks(struct async_tasks *t, struct py_registry *reg, struct async_proc *pr,
		       struct py_asyncio *a, struct py_target **target)
{
	*target = registry_find(reg, pr->pid);
	if (!*target || (*target)->state != TARGET_ACTIVE)
		return false;
	return read_target(t, pr, *target, a);
}

void async_tasks_on_active(struct async_tasks *t, struct py_target *target)
{
	struct async_proc *pr = proc_of(t, target->proc.pid);
	struct py_asyncio a;

	if (pr && !pr->src_set && read_target(t, pr, target, &a))
		py_asyncio_free(&a);
}

static void name_pending(struct async_tasks *t, struct py_registry *reg, struct async_proc *pr)
{
	struct py_asyncio a;
	struct py_target *target;
	bool ok = read_tasks(t, reg, pr, &a, &target);

	for (size_t k = 0; k < pr->npending; k++) {
		const struct pending *q = &pr->pending[k];
		int i = ok && q->ident ? find_root(&target->proc, pr, &a, q) : -1;
		struct async_task *e;

		/* seen before BPF knew where to find its task, or no task's
		 * coroutine; or ended before we looked, and then known by the
		 * name BPF read from it, if any */
		if (i < 0 && (!q->ident || !q->name[0])) {
			t->unmatched++;
			set_id(t, pr->pid, q, PYB_TASK_UNKNOWN);
			continue;
		}
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 64;
			struct async_task *v = realloc(t->v, cap * sizeof(*v));

			if (!v)
				break;
			t->v = v;
			t->cap = cap;
		}
		e = &t->v[t->n++];
		memset(e, 0, sizeof(*e));
		e->pid = pr->pid;
		e->frame = q->frame;
		e->code = q->code;
		e->ident = q->ident;
		e->id = t->next_id++;
		set_id(t, pr->pid, q, e->id);
		t->named++;
		if (i < 0) { /* its awaiting tasks are not known */
			push_task(e, t->group == ASYNC_GROUP_NAME ? q->name : ASYNC_UNKNOWN_COROUTINE);
			e->coro_from_sample = t->group != ASYNC_GROUP_NAME;
			e->ended = true;
			t->named_ended++;
			continue;
		}
		build_root(t, &target->proc, &a, i, e);
		pr->live = true;
	}
	pr->npending = 0;
	if (ok)
		py_asyncio_free(&a);
}

/* Tasks of pr that ended: their frame may now be another task's. */
static void drop_ended(struct async_tasks *t, struct py_registry *reg, struct async_proc *pr)
{
	struct py_asyncio a;
	struct py_target *target;
	bool ok = read_tasks(t, reg, pr, &a, &target);

	pr->live = false;
	for (size_t k = 0; k < t->n; k++) {
		struct async_task *e = &t->v[k];
		struct pending q = { .frame = e->frame, .code = e->code, .ident = e->ident };
		struct pyb_task_key key = {
			.pid = (uint32_t)e->pid, .frame = e->frame, .code = e->code, .ident = e->ident
		};

		if (e->pid != pr->pid || e->ended)
			continue;
		if (ok && find_root(&target->proc, pr, &a, &q) >= 0) {
			pr->live = true;
			continue;
		}
		e->ended = true;
		if (ok && t->ids_fd >= 0) /* a process gone takes its entries with it */
			bpf_delete_elem(t->ids_fd, &key);
	}
	if (ok)
		py_asyncio_free(&a);
}

void async_tasks_tick(struct async_tasks *t, struct py_registry *reg)
{
	uint64_t now = monotonic_ns();
	bool check = now - t->last_check_ns >= CHECK_EVERY_NS;

	for (size_t i = 0; i < t->nprocs; i++) {
		struct async_proc *pr = &t->procs[i];

		if (pr->npending)
			name_pending(t, reg, pr);
		else if (check && pr->live)
			drop_ended(t, reg, pr);
	}
	if (check)
		t->last_check_ns = now;
}

const struct async_task *async_tasks_get(const struct async_tasks *t, pid_t pid, uint64_t task)
{
	const struct async_task *found = NULL;

	if (!t)
		return NULL;
	if (task & PYB_TASK_FRAME_BIT) {
		/* named after this sample: only if no other task had that identity */
		for (size_t k = 0; k < t->n; k++) {
			if (t->v[k].pid != pid || t->v[k].ident != (task & ~PYB_TASK_FRAME_BIT))
				continue;
			if (found)
				return NULL;
			found = &t->v[k];
		}
		return found;
	}
	/* ids are handed out in order: entry k has id first + k */
	if (task <= PYB_TASK_UNKNOWN || task - (PYB_TASK_UNKNOWN + 1) >= t->n ||
	    t->v[task - (PYB_TASK_UNKNOWN + 1)].pid != pid)
		return NULL;
	return &t->v[task - (PYB_TASK_UNKNOWN + 1)];
}
