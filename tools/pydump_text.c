// SPDX-License-Identifier: Apache-2.0
/* pydump's text output: a header per process, then each thread with its
 * state line and its frames, innermost first, like a traceback. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "pydump_dump.h"
#include "sys/text_escape.h"
#include "sys/plural.h"

#define NS_PER_SEC 1e9

struct line {
	char buf[1024];
	size_t used;
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->used >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->used, sizeof(l->buf) - l->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->used += (size_t)n < sizeof(l->buf) - l->used ? (size_t)n : sizeof(l->buf) - 1 - l->used;
}

/* 0.004s, 2.718s, 27.3s, 5m12s, 3h05m */
static void add_duration(struct line *l, int64_t ns)
{
	double s = (double)ns / NS_PER_SEC;

	if (s < 10)
		add(l, "%.3fs", s);
	else if (s < 60)
		add(l, "%.1fs", s);
	else if (s < 3600)
		add(l, "%dm%02ds", (int)(s / 60), (int)s % 60);
	else
		add(l, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

static void add_timeout(struct line *l, const struct proc_wait *k)
{
	if (k->timeout_ns == -1) {
		add(l, ", no timeout");
		return;
	}
	if (k->left_ns != PROC_WAIT_UNKNOWN) {
		/* from how long it has been off CPU, which may run short */
		add(l, ", %s", k->left_estimated ? "at most " : "");
		add_duration(l, k->left_ns);
		if (k->timeout_ns >= 0) {
			add(l, " of ");
			add_duration(l, k->timeout_ns);
		}
		add(l, " left");
	} else if (k->timeout_ns >= 0) {
		add(l, ", timeout ");
		add_duration(l, k->timeout_ns);
	}
}

static void add_futex(struct line *l, const struct dump *d, const struct dump_thread *t)
{
	const struct py_wait *w = &t->w;

	if (w->on == PY_WAIT_GIL) {
		pid_t holder = dump_gil_holder(d);

		add(l, "futex wait on the GIL");
		if (holder)
			add(l, " (held by thread %d)", (int)holder);
	} else if (w->on == PY_WAIT_LOCK) {
		add(l, "futex wait on <%s at 0x%" PRIx64 ">", w->lock_type, w->lock);
		if (w->lock_where[0] || t->lock_owner_tid) {
			add(l, " (");
			if (w->lock_where[0])
				add(l, "%s%s", w->lock_where, t->lock_owner_tid ? ", " : "");
			if (t->lock_owner_tid)
				add(l, "held by thread %d", (int)t->lock_owner_tid);
			add(l, ")");
		}
	} else {
		add(l, "futex wait 0x%" PRIx64, t->k.futex);
	}
}

/* The system call in words: "recvfrom on fd 5 (TCP a -> b)", ... */
static void add_call(struct line *l, const struct dump *d, const struct dump_thread *t)
{
	const struct proc_wait *k = &t->k;

	if (k->syscall && strcmp(k->syscall, "futex") == 0 && k->futex_wait)
		add_futex(l, d, t);
	else if (k->syscall)
		add(l, "%s", k->syscall);
	else
		add(l, "syscall %" PRId64, k->regs.syscall_nr);
	if (k->fd >= 0) {
		add(l, " on fd %d", k->fd);
		if (k->fd_desc[0] && k->nfds >= 0)
			add(l, " (%s, %d %s)", k->fd_desc, k->nfds, plural((unsigned)k->nfds, "fd", "fds"));
		else if (k->fd_desc[0])
			add(l, " (%s)", k->fd_desc);
	} else if (k->nfds > 0) {
		add(l, " on %d %s", k->nfds, plural((unsigned)k->nfds, "fd", "fds"));
	}
	if (k->path[0])
		add(l, " \"%s\"", k->path);
	if (k->child)
		add(l, " for child %d", (int)k->child);
	add_timeout(l, k);
}

static void add_cpu(struct line *l, const struct proc_wait *k)
{
	int64_t cpu = k->cpu_ns;

	if (cpu == PROC_WAIT_UNKNOWN && k->user_ns != PROC_WAIT_UNKNOWN)
		cpu = k->user_ns + k->system_ns;
	if (cpu == PROC_WAIT_UNKNOWN)
		return;
	add(l, "; cpu ");
	add_duration(l, cpu);
}

static void print_state(FILE *out, const struct dump *d, const struct dump_thread *t)
{
	const struct proc_wait *k = &t->k;
	struct line l = { .used = 0 };

	l.buf[0] = '\0';
	if (!t->have_state)
		return;
	if (t->crashed) {
		const char *sig = dump_signal_name(d->core->signo);

		add(&l, "crashed: %s", sig ? sig : "signal");
		if (d->core->si_code <= 0 && d->core->sender == d->pid)
			add(&l, " raised again by the process itself (faulthandler does so)");
		else if (d->core->si_code <= 0)
			add(&l, " sent by process %d", (int)d->core->sender);
		else if (d->core->signo == 11 || d->core->signo == 7)
			add(&l, " at address 0x%" PRIx64, d->core->fault_addr);
	} else if (k->from_image) {
		if (k->in_syscall) {
			add(&l, "in ");
			add_call(&l, d, t);
		} else {
			add(&l, "not in a system call");
		}
	} else if (k->running || k->state == 'R') {
		add(&l, "running");
	} else {
		add(&l, "%s", proc_wait_state_name(k->state));
		if (k->off_cpu_ns != PROC_WAIT_UNKNOWN) {
			add(&l, " for ");
			add_duration(&l, k->off_cpu_ns);
		}
		if (k->in_syscall) {
			add(&l, " in ");
			add_call(&l, d, t);
		} else if (k->state == 'D') {
			add(&l, " outside a system call (a page fault?)");
		}
		if (k->wchan[0] && k->state == 'D')
			add(&l, " [kernel: %s]", k->wchan);
	}
	add_cpu(&l, k);
	fprintf(out, "  ");
	text_escape_write(out, l.buf);
	fputc('\n', out);
}

static void print_locals(FILE *out, const struct dump_frame *f)
{
	if (f->nlocals < 0) {
		fprintf(out, "        [variables unreadable]\n");
		return;
	}
	for (int i = 0; i < f->nlocals; i++) {
		fprintf(out, "        %s %s = ", py_local_kind_name(f->locals[i].kind),
			TEXT_ESC(f->locals[i].name));
		text_escape_write(out, f->locals[i].repr); /* a repr: no change, but never cut */
		fputc('\n', out);
	}
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "?";
}

static void print_frames(FILE *out, const struct dump *d, const struct dump_thread *t)
{
	bool python = false;

	if (t->error[0]) {
		fprintf(out, "    [unreadable thread: %s]\n", TEXT_ESC(t->error));
		return;
	}
	for (size_t i = 0; i < t->nframes; i++) {
		const struct dump_frame *f = &t->frames[i];

		switch (f->kind) {
		case DUMP_FRAME_PYTHON:
			python = true;
			if (f->line >= 0)
				fprintf(out, "    %s (%s:%d)\n", TEXT_ESC(f->name), TEXT_ESC(f->file),
					f->line);
			else
				fprintf(out, "    %s (%s:?)\n", TEXT_ESC(f->name), TEXT_ESC(f->file));
			if (d->opts.locals)
				print_locals(out, f);
			break;
		case DUMP_FRAME_UNREADABLE:
			python = true;
			fprintf(out, "    [unreadable frame]\n");
			break;
		case DUMP_FRAME_GAP:
			fprintf(out, "    [native frames end: %s]\n", TEXT_ESC(f->name ? f->name : "?"));
			break;
		case DUMP_FRAME_NATIVE:
			if (f->name)
				fprintf(out, "    [native] %s+0x%" PRIx64 " (%s)\n", TEXT_ESC(f->name),
					f->offset, TEXT_ESC(base_name(f->file)));
			else
				fprintf(out, "    [native] %s+0x%" PRIx64 "\n",
					TEXT_ESC(base_name(f->file)), f->offset);
			break;
		}
	}
	if (!python && !t->truncated)
		fprintf(out, "    (no Python frames)\n");
	if (t->truncated)
		fprintf(out, "    [truncated]\n");
	if (t->native_note[0])
		fprintf(out, "    [native frames: %s]\n", TEXT_ESC(t->native_note));
}

static void print_header(FILE *out, const struct dump *d)
{
	const struct py_process *p = &d->p;

	if (d->core)
		fprintf(out, "Core %s of process %d \"%s\": ", TEXT_ESC(d->core_path), (int)d->pid,
			TEXT_ESC(d->core->fname));
	else
		fprintf(out, "Process %d \"%s\": ", (int)p->pid, TEXT_ESC(p->comm));
	fprintf(out, "CPython %s%s, %s [offsets: %s]\n", p->version_str,
		p->free_threaded ? " (free-threaded)" : "", TEXT_ESC(p->interp_path),
		py_offsets_source_name(p->source));
	if (d->core && dump_core_crashed(d->core)) {
		const char *sig = dump_signal_name(d->core->signo);

		fprintf(out, "Killed by %s (signal %d) in thread %d", sig ? sig : "a signal",
			d->core->signo, (int)d->core->threads[0].tid);
		if (d->process_cpu_ns > 0)
			fprintf(out, "; the process had used %.3fs of CPU",
				(double)d->process_cpu_ns / NS_PER_SEC);
		fprintf(out, "\n");
	} else if (d->core) {
		fprintf(out, "Not a crash: taken from the process while it ran (gcore)\n");
	}
	if (d->opts.verbose) {
		fprintf(out, "# _PyRuntime at 0x%llx, load bias 0x%llx, read through %s%s%s\n",
			(unsigned long long)p->runtime_addr, (unsigned long long)p->load_bias,
			TEXT_ESC(p->interp_open), p->notes[0] ? "; " : "", TEXT_ESC(p->notes));
		if (d->names_note[0])
			fprintf(out, "# %s\n", TEXT_ESC(d->names_note));
		if (!d->objs_ok)
			fprintf(out, "# objects: %s\n", TEXT_ESC(d->objs.why));
	}
}

/* --globals: each module on the stacks, its data variables. */
static void print_globals(FILE *out, const struct dump *d)
{
	fprintf(out, "\nModule globals\n");
	if (!d->objs_ok)
		fprintf(out, "  [unreadable: %s]\n", TEXT_ESC(d->objs.why));
	for (size_t i = 0; i < d->nmodules; i++) {
		const struct py_module_globals *g = &d->modules[i];

		fprintf(out, "  module %s", TEXT_ESC(g->module));
		if (g->file[0])
			fprintf(out, " (%s)", TEXT_ESC(g->file));
		if (g->hidden)
			fprintf(out, " [%zu modules, functions, classes and __dunder__ names not shown]",
				g->hidden);
		fputc('\n', out);
		for (size_t k = 0; k < g->nvars; k++) {
			fprintf(out, "    %s = ", TEXT_ESC(g->vars[k].name));
			text_escape_write(out, g->vars[k].repr);
			fputc('\n', out);
		}
		if (g->cut)
			fprintf(out, "    [more variables not shown]\n");
	}
	if (d->modules_cut)
		fprintf(out, "  [more than %d modules: the others not shown]\n", DUMP_MODULES_MAX);
	if (d->modules_unread)
		fprintf(out, "  [globals of %zu %s unreadable]\n", d->modules_unread,
			plural((unsigned)d->modules_unread, "frame", "frames"));
}

void dump_print_text(FILE *out, const struct dump *d)
{
	print_header(out, d);
	for (size_t i = 0; i < d->nthreads; i++) {
		const struct dump_thread *t = &d->threads[i];

		fprintf(out, "\n");
		if (t->t.host_tid)
			fprintf(out, "Thread %d \"%s\"", (int)t->t.host_tid, TEXT_ESC(t->comm));
		else
			fprintf(out, "Thread ? \"\" [no OS thread]");
		if (t->t.ns_tid && t->t.ns_tid != t->t.host_tid)
			fprintf(out, " (ns tid %d)", (int)t->t.ns_tid);
		if (t->name[0])
			fprintf(out, " name \"%s\"", TEXT_ESC(t->name));
		if (t->t.host_tid == d->p.pid || (d->core && t->t.host_tid == d->pid))
			fprintf(out, " [main]");
		if (t->t.holds_gil)
			fprintf(out, " [GIL]");
		if (t->crashed)
			fprintf(out, " [crashed]");
		fprintf(out, "\n");
		print_state(out, d, t);
		print_frames(out, d, t);
	}
	if (d->opts.globals)
		print_globals(out, d);
}
