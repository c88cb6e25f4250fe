// SPDX-License-Identifier: Apache-2.0
/*
 * Collects pydump's view of a process: threads (main first, then by tid),
 * their threading names, what the kernel says each is doing, what a futex
 * wait means (the GIL, a lock), their Python frames with line numbers and,
 * when asked, variables and native frames.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/code.h"
#include "cpython/frames.h"
#include "cpython/open.h"
#include "cpython/thread_names.h"
#include "pydump_dump.h"
#include "sys/proc_maps.h"

/* a process that runs no Python code yet: how long to wait for a frame to
 * check the offsets against */
#define OPEN_WAIT_MS 1000

#define MAX_FRAMES 4096
#define MAX_NAMES 4096

static int compare_threads(const void *a, const void *b, void *arg)
{
	const struct dump_thread *x = a, *y = b;
	pid_t main_tid = *(const pid_t *)arg;

	if ((x->t.host_tid == main_tid) != (y->t.host_tid == main_tid))
		return x->t.host_tid == main_tid ? -1 : 1;
	return (x->t.host_tid > y->t.host_tid) - (x->t.host_tid < y->t.host_tid);
}

/*
 * Code objects read once per dump: threads share most of their code (the
 * threading module's frames, the same functions). An entry is used again
 * only when the object at that address still has the same identity (its
 * name, file and line table objects and first line).
 */
#define CODE_CACHE 1024

struct code_cache {
	bool used;
	uint64_t addr;
	struct py_code_info ci;
};

static bool same_identity(const struct py_code_identity *a, const struct py_code_identity *b)
{
	return a->type == b->type && a->name == b->name && a->filename == b->filename &&
	       a->linetable == b->linetable && a->firstlineno == b->firstlineno &&
	       a->ident == b->ident;
}

static const struct py_code_info *code_info(struct dump *d, uint64_t code)
{
	struct code_cache *c;
	struct py_code_identity id;

	if (!d->codes) {
		d->codes = calloc(CODE_CACHE, sizeof(struct code_cache));
		if (!d->codes)
			return NULL;
	}
	c = &((struct code_cache *)d->codes)[(code >> 4) % CODE_CACHE];
	if (c->used && c->addr == code && py_code_identity_read(&d->p, code, &id) == 0 &&
	    same_identity(&id, &c->ci.ident))
		return &c->ci;
	if (c->used)
		py_code_info_free(&c->ci);
	c->used = false;
	if (py_code_read(&d->p, code, &c->ci) < 0)
		return NULL;
	c->used = true;
	c->addr = code;
	return &c->ci;
}

static void free_code_cache(struct dump *d)
{
	struct code_cache *c = d->codes;

	for (size_t i = 0; c && i < CODE_CACHE; i++)
		if (c[i].used)
			py_code_info_free(&c[i].ci);
	free(c);
	d->codes = NULL;
}

/* Notes the module dict the frame runs with, for --globals (read once
 * every thread is read). */
static void note_globals(struct dump *d, const struct py_frame *pf)
{
	uint64_t dict;

	if (py_frame_globals(&d->objs, pf, &dict) < 0) {
		d->modules_unread++;
		return;
	}
	for (size_t i = 0; i < d->nmodules; i++)
		if (d->modules[i].dict == dict)
			return;
	if (d->nmodules == DUMP_MODULES_MAX) {
		d->modules_cut = true;
		return;
	}
	d->modules[d->nmodules++].dict = dict;
}

static void read_globals(struct dump *d)
{
	size_t kept = 0;

	for (size_t i = 0; i < d->nmodules; i++) {
		uint64_t dict = d->modules[i].dict;

		if (py_module_globals_read(&d->objs, dict, false, &d->modules[kept]) == 0)
			kept++;
		else
			d->modules_unread++;
	}
	d->nmodules = kept;
}

static void python_frame(struct dump *d, struct dump_thread *t, const struct py_frame *pf)
{
	const struct py_code_info *ci;
	struct dump_frame *f;

	if ((pf->flags & PY_FRAME_UNREADABLE) || !(ci = code_info(d, pf->code))) {
		dump_add_frame(t, DUMP_FRAME_UNREADABLE);
		return;
	}
	f = dump_add_frame(t, DUMP_FRAME_PYTHON);
	if (f) {
		f->name = strdup(ci->name);
		f->file = strdup(ci->filename);
		f->line = py_code_line(&d->p, ci, pf->instr_offset);
		if (d->opts.globals && d->objs_ok)
			note_globals(d, pf);
		if (d->opts.locals && d->objs_ok) {
			struct py_local tmp[PY_LOCALS_MAX];
			int n = py_frame_locals(&d->objs, pf, tmp, PY_LOCALS_MAX);

			f->nlocals = n;
			if (n > 0) {
				f->locals = malloc((size_t)n * sizeof(*f->locals));
				if (f->locals)
					memcpy(f->locals, tmp, (size_t)n * sizeof(*f->locals));
				else
					f->nlocals = -1;
			}
		}
	}
}

/* Python frames of one thread, and what its futex wait means. */
static void read_thread(struct dump *d, struct dump_thread *t, struct py_frame *pf)
{
	bool truncated;
	int n = py_frames_read_settled(&d->p, t->t.tstate, pf, MAX_FRAMES, &truncated);

	if (n < 0) {
		snprintf(t->error, sizeof(t->error), "%s", d->p.err);
		return;
	}
	t->truncated = truncated;
	if (t->have_state)
		py_wait_classify(&d->p, d->objs_ok ? &d->objs : NULL, t->t.interp, &t->k, pf,
				 (size_t)n, &t->w);
	for (int i = 0; i < n; i++)
		python_frame(d, t, &pf[i]);
	/* the raw frames mark where each eval-loop run begins */
	if (d->opts.native)
		dump_native_frames(d, t, pf, (size_t)n);
}

static void name_threads(struct dump *d)
{
	struct py_thread_name *names = calloc(MAX_NAMES, sizeof(*names));
	uint64_t interp = d->nthreads ? d->threads[0].t.interp : 0;
	int n;

	if (!names || !d->objs_ok) {
		snprintf(d->names_note, sizeof(d->names_note), "thread names: %s",
			 names ? d->objs.why : "out of memory");
		free(names);
		return;
	}
	/* the main interpreter's threading module names the threads */
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].t.host_tid == d->p.pid || d->threads[i].t.ns_tid == d->p.ns_pid)
			interp = d->threads[i].t.interp;
	n = py_thread_names(&d->objs, interp, names, MAX_NAMES);
	if (n < 0)
		snprintf(d->names_note, sizeof(d->names_note),
			 "thread names: threading._active is unreadable");
	for (int k = 0; k < n; k++)
		for (size_t i = 0; i < d->nthreads; i++)
			if (d->threads[i].t.pthread_id == names[k].ident)
				snprintf(d->threads[i].name, sizeof(d->threads[i].name), "%s",
					 names[k].name);
	free(names);
}

/* A core records each thread's fs_base, which glibc makes pthread_self():
 * it names the thread of a thread state whose tid did not match (gcore
 * of a process in another PID namespace records host tids). */
static void match_core_threads(struct dump *d)
{
	for (size_t i = 0; i < d->nthreads; i++) {
		struct dump_thread *t = &d->threads[i];

		for (size_t k = 0; k < d->core->nthreads && !t->t.host_tid; k++)
			if (d->core->threads[k].regs.fs_base == t->t.pthread_id && t->t.pthread_id)
				t->t.host_tid = d->core->threads[k].tid;
		t->crashed = dump_core_crashed(d->core) && t->t.host_tid == d->core->threads[0].tid;
	}
}

static void lock_owners(struct dump *d)
{
	for (size_t i = 0; i < d->nthreads; i++) {
		struct dump_thread *t = &d->threads[i];

		for (size_t k = 0; k < d->nthreads && t->w.owner_ident; k++)
			if (d->threads[k].t.pthread_id == t->w.owner_ident)
				t->lock_owner_tid = d->threads[k].t.host_tid;
	}
}

int dump_collect(struct dump *d, pid_t pid, const struct dump_options *opts,
		 const struct core_file *core, const char *core_path, char *err, size_t errlen)
{
	struct py_thread *threads = NULL;
	struct py_frame *pf = NULL;
	int n, rc = -1;

	memset(d, 0, sizeof(*d));
	d->opts = *opts;
	d->core = core;
	d->core_path = core_path;
	if (py_process_open_wait(&d->p, pid, core ? 0 : OPEN_WAIT_MS) < 0) {
		py_process_name_python_children(&d->p, false);
		snprintf(err, errlen, "%s", d->p.err);
		return -1;
	}
	d->pid = core ? core->pid : d->p.pid;
	threads = calloc(PY_MAX_THREADS, sizeof(*threads));
	pf = calloc(MAX_FRAMES, sizeof(*pf));
	if (!threads || !pf) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	n = py_threads_read(&d->p, threads, PY_MAX_THREADS);
	if (n < 0) {
		snprintf(err, errlen, "%s", d->p.err);
		goto out;
	}
	d->threads = calloc((size_t)n + 1, sizeof(*d->threads));
	if (!d->threads) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	d->nthreads = (size_t)n;
	for (int i = 0; i < n; i++)
		d->threads[i].t = threads[i];
	if (core)
		match_core_threads(d);
	qsort_r(d->threads, d->nthreads, sizeof(*d->threads), compare_threads, &d->p.pid);
	d->objs_ok = py_objects_init(&d->objs, &d->p) == 0;
	name_threads(d);
	for (size_t i = 0; i < d->nthreads; i++) {
		struct dump_thread *t = &d->threads[i];

		if (t->t.host_tid) {
			proc_comm(d->p.pid, t->t.host_tid, t->comm, sizeof(t->comm));
			t->have_state = proc_wait_read(d->p.pid, t->t.host_tid, &t->k) == 0;
			/* gcore records no CPU times: zeros there mean unknown; the
			 * kernel gives the main thread the whole process's */
			if (core && ((t->k.user_ns == 0 && t->k.system_ns == 0) ||
				     t->t.host_tid == core->pid)) {
				if (t->t.host_tid == core->pid && t->k.user_ns > 0)
					d->process_cpu_ns = t->k.user_ns + t->k.system_ns;
				t->k.user_ns = t->k.system_ns = PROC_WAIT_UNKNOWN;
			}
		}
		read_thread(d, t, pf);
	}
	lock_owners(d);
	if (d->opts.globals && d->objs_ok)
		read_globals(d);
	rc = 0;
out:
	free(threads);
	free(pf);
	if (rc < 0)
		dump_free(d);
	return rc;
}

void dump_free(struct dump *d)
{
	for (size_t i = 0; i < d->nthreads; i++) {
		struct dump_thread *t = &d->threads[i];

		for (size_t k = 0; k < t->nframes; k++) {
			free(t->frames[k].name);
			free(t->frames[k].file);
			free(t->frames[k].locals);
		}
		free(t->frames);
	}
	free(d->threads);
	d->threads = NULL;
	for (size_t i = 0; i < d->nmodules; i++)
		py_module_globals_free(&d->modules[i]);
	d->nmodules = 0;
	d->nthreads = 0;
	free_code_cache(d);
	if (d->native) {
		native_proc_close(d->native);
		free(d->native);
		d->native = NULL;
	}
}

bool dump_core_crashed(const struct core_file *core)
{
	/* the signals whose default action dumps core; gcore records the
	 * signal that stopped the process (SIGSTOP) or none */
	switch (core->signo) {
	case 3: case 4: case 5: case 6: case 7: case 8: case 11: case 24: case 25: case 31:
		return core->nthreads > 0;
	default:
		return false;
	}
}

pid_t dump_gil_holder(const struct dump *d)
{
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].t.holds_gil)
			return d->threads[i].t.host_tid;
	return 0;
}

const char *dump_signal_name(int signo)
{
	static const struct {
		int signo;
		const char *name;
	} names[] = {
		{ 1, "SIGHUP" }, { 2, "SIGINT" }, { 3, "SIGQUIT" }, { 4, "SIGILL" }, { 5, "SIGTRAP" },
		{ 6, "SIGABRT" }, { 7, "SIGBUS" }, { 8, "SIGFPE" }, { 9, "SIGKILL" }, { 10, "SIGUSR1" },
		{ 11, "SIGSEGV" }, { 12, "SIGUSR2" }, { 13, "SIGPIPE" }, { 14, "SIGALRM" },
		{ 15, "SIGTERM" }, { 19, "SIGSTOP" }, { 24, "SIGXCPU" }, { 25, "SIGXFSZ" },
		{ 31, "SIGSYS" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].signo == signo)
			return names[i].name;
	return NULL;
}
