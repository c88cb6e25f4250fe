// SPDX-License-Identifier: Apache-2.0
#include "bpf/thread_names.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/registry.h"
#include "cpython/objects.h"
#include "cpython/thread_names.h"
#include "cpython/threads.h"
#include "sys/clock.h"
#include "sys/grow.h"

/* threads of one process looked at, and names read, per reading */
#define READ_THREADS 4096

struct names_proc {
	pid_t pid;
	unsigned activations; /* the target's, when objs was made: another is an exec */
	bool objs_ok, objs_tried;
	struct py_objects objs;
	uint64_t read_ns; /* 0: never read */
};

void thread_names_free(struct thread_names *tn)
{
	free(tn->v);
	free(tn->procs);
	memset(tn, 0, sizeof(*tn));
}

static struct thread_name_entry *find(struct thread_names *tn, pid_t pid, pid_t tid)
{
	for (size_t i = 0; i < tn->n; i++)
		if (tn->v[i].tid == tid && tn->v[i].pid == pid)
			return &tn->v[i];
	return NULL;
}

static void put(struct thread_names *tn, pid_t pid, pid_t tid, const char *name)
{
	struct thread_name_entry *e = find(tn, pid, tid);

	if (!e) {
		if (tn->n == THREAD_NAMES_MAX)
			return;
		e = grow_room(tn->v, tn->n, &tn->cap, 64, sizeof(*e));
		if (!e)
			return;
		tn->v = e;
		e = &tn->v[tn->n++];
		e->pid = pid;
		e->tid = tid;
	}
	snprintf(e->name, sizeof(e->name), "%s", name);
}

static struct names_proc *proc_of(struct thread_names *tn, pid_t pid)
{
	struct names_proc *v = tn->procs;

	for (size_t i = 0; i < tn->nprocs; i++)
		if (v[i].pid == pid)
			return &v[i];
	if (tn->nprocs == THREAD_NAMES_PROCS)
		return NULL;
	v = grow_room(tn->procs, tn->nprocs, &tn->cap_procs, 16, sizeof(*v));
	if (!v)
		return NULL;
	tn->procs = v;
	v = &v[tn->nprocs++];
	memset(v, 0, sizeof(*v));
	v->pid = pid;
	return v;
}

/* Joins the thread states' pthread ids (host tids known) to threading's
 * idents, and keeps the names read. */
static void read_names(struct thread_names *tn, struct names_proc *np, struct py_target *t)
{
	struct py_thread *threads = calloc(READ_THREADS, sizeof(*threads));
	struct py_thread_name *names = calloc(READ_THREADS, sizeof(*names));
	uint64_t interp = 0;
	int nt, nn = -1;

	if (!threads || !names)
		goto out;
	nt = py_threads_read(&t->proc, threads, READ_THREADS);
	/* the main interpreter's threading module names the threads (as pydump's) */
	for (int i = 0; i < nt; i++)
		if (threads[i].host_tid == t->pid || !interp)
			interp = threads[i].interp;
	if (nt > 0)
		nn = py_thread_names(&np->objs, interp, names, READ_THREADS);
	for (int k = 0; k < nn; k++)
		for (int i = 0; i < nt; i++)
			if (threads[i].host_tid && threads[i].pthread_id == names[k].ident)
				put(tn, t->pid, threads[i].host_tid, names[k].name);
out:
	free(threads);
	free(names);
}

static void refresh(struct thread_names *tn, struct py_registry *reg, pid_t pid)
{
	struct py_target *t = registry_find(reg, pid);
	struct names_proc *np;
	uint64_t now = monotonic_ns();

	if (tn->unused || !t || t->state != TARGET_ACTIVE || !(np = proc_of(tn, pid)))
		return;
	if (np->read_ns && now - np->read_ns < THREAD_NAMES_REREAD_MS * 1000000ull)
		return;
	if (!np->objs_tried || np->activations != t->activations) {
		np->objs_tried = true;
		np->activations = t->activations;
		np->objs_ok = py_objects_init(&np->objs, &t->proc) == 0;
	}
	np->objs.p = &t->proc; /* the registry's array may have moved */
	if (np->objs_ok)
		read_names(tn, np, t);
	np->read_ns = now;
}

const char *thread_names_get(struct thread_names *tn, struct py_registry *reg, pid_t pid,
			     pid_t tid)
{
	struct thread_name_entry *e = find(tn, pid, tid);

	if (e)
		return e->name;
	refresh(tn, reg, pid);
	e = find(tn, pid, tid);
	return e ? e->name : NULL;
}

void thread_names_refresh(struct thread_names *tn, struct py_registry *reg, pid_t pid)
{
	refresh(tn, reg, pid);
}
