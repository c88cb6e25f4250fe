// SPDX-License-Identifier: Apache-2.0
/* pydump --json: the whole run as one JSON document (see pydump(8)). */
#include <inttypes.h>
#include <string.h>

#include "pydump_dump.h"
#include "report/json.h"

/* A JSON string (report/json.h: controls escaped, bad UTF-8 as U+FFFD); null for NULL. */
static void jstr(FILE *out, const char *s)
{
	json_write_string(out, s);
}

static void jaddr(FILE *out, uint64_t v)
{
	if (v)
		fprintf(out, "\"0x%" PRIx64 "\"", v);
	else
		fputs("null", out);
}

static void jsec(FILE *out, int64_t ns)
{
	if (ns == PROC_WAIT_UNKNOWN)
		fputs("null", out);
	else
		fprintf(out, "%.6f", (double)ns / 1e9);
}

static void jtid(FILE *out, pid_t tid)
{
	if (tid)
		fprintf(out, "%d", (int)tid);
	else
		fputs("null", out);
}

static void syscall_json(FILE *out, const struct proc_wait *k)
{
	if (!k->in_syscall) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"nr\": %" PRId64 ", \"name\": ", k->regs.syscall_nr);
	jstr(out, k->syscall);
	fputs(", \"args\": [", out);
	for (int i = 0; i < 6; i++)
		fprintf(out, "%s\"0x%" PRIx64 "\"", i ? ", " : "", k->regs.args[i]);
	fputs("], \"fd\": ", out);
	if (k->fd >= 0)
		fprintf(out, "%d", k->fd);
	else
		fputs("null", out);
	fputs(", \"fd_desc\": ", out);
	jstr(out, k->fd_desc[0] ? k->fd_desc : NULL);
	fputs(", \"nfds\": ", out);
	if (k->nfds >= 0)
		fprintf(out, "%d", k->nfds);
	else
		fputs("null", out);
	fputs(", \"futex\": ", out);
	jaddr(out, k->futex);
	fputs(", \"timeout_s\": ", out);
	if (k->timeout_ns == -1)
		fputs("\"none\"", out);
	else
		jsec(out, k->timeout_ns);
	fputs(", \"left_s\": ", out);
	jsec(out, k->left_ns);
	fprintf(out, ", \"left_estimated\": %s, \"path\": ", k->left_estimated ? "true" : "false");
	jstr(out, k->path[0] ? k->path : NULL);
	fputs(", \"child\": ", out);
	jtid(out, k->child);
	fputs("}", out);
}

static void waits_for_json(FILE *out, const struct dump *d, const struct dump_thread *t)
{
	const struct py_wait *w = &t->w;

	if (!t->have_state || !t->k.futex_wait) {
		fputs("null", out);
		return;
	}
	if (w->on == PY_WAIT_GIL) {
		fputs("{\"what\": \"gil\", \"holder_tid\": ", out);
		jtid(out, dump_gil_holder(d));
		fputs("}", out);
		return;
	}
	if (w->on != PY_WAIT_LOCK) {
		fputs("{\"what\": \"futex\", \"address\": ", out);
		jaddr(out, t->k.futex);
		fputs("}", out);
		return;
	}
	fputs("{\"what\": \"lock\", \"lock\": ", out);
	jaddr(out, w->lock);
	fputs(", \"lock_type\": ", out);
	jstr(out, w->lock_type);
	fputs(", \"where\": ", out);
	jstr(out, w->lock_where[0] ? w->lock_where : NULL);
	fputs(", \"owner_tid\": ", out);
	jtid(out, t->lock_owner_tid);
	fputs("}", out);
}

static void state_json(FILE *out, const struct dump *d, const struct dump_thread *t)
{
	const struct proc_wait *k = &t->k;
	char code[2] = { k->state, '\0' };

	if (!t->have_state) {
		fputs("null", out);
		return;
	}
	fputs("{\"code\": ", out);
	jstr(out, k->from_image ? NULL : code);
	fputs(", \"name\": ", out);
	jstr(out, k->from_image ? NULL : proc_wait_state_name(k->state));
	fprintf(out, ", \"running\": %s, \"off_cpu_s\": ", k->running ? "true" : "false");
	jsec(out, k->off_cpu_ns);
	fputs(", \"cpu_s\": ", out);
	jsec(out, k->cpu_ns);
	fputs(", \"user_s\": ", out);
	jsec(out, k->user_ns);
	fputs(", \"system_s\": ", out);
	jsec(out, k->system_ns);
	fputs(", \"wchan\": ", out);
	jstr(out, k->wchan[0] ? k->wchan : NULL);
	fputs(", \"sp\": ", out);
	jaddr(out, proc_regs_has(&k->regs, XREG_RSP) ? k->regs.r[XREG_RSP] : 0);
	fputs(", \"pc\": ", out);
	jaddr(out, proc_regs_has(&k->regs, XREG_RIP) ? k->regs.r[XREG_RIP] : 0);
	fputs(", \"syscall\": ", out);
	syscall_json(out, k);
	fputs(", \"waits_for\": ", out);
	waits_for_json(out, d, t);
	fputs("}", out);
}

static void locals_json(FILE *out, const struct dump_frame *f)
{
	if (f->nlocals < 0) {
		fputs("null", out);
		return;
	}
	fputc('[', out);
	for (int i = 0; i < f->nlocals; i++) {
		const struct py_local *l = &f->locals[i];

		fputs(i ? ", {\"name\": " : "{\"name\": ", out);
		jstr(out, l->name);
		fputs(", \"kind\": ", out);
		jstr(out, py_local_kind_name(l->kind));
		fputs(", \"repr\": ", out);
		jstr(out, l->repr);
		fputs(", \"address\": ", out);
		jaddr(out, l->value);
		fputs("}", out);
	}
	fputc(']', out);
}

static void frame_json(FILE *out, const struct dump *d, const struct dump_frame *f)
{
	switch (f->kind) {
	case DUMP_FRAME_PYTHON:
		fputs("{\"kind\": \"python\", \"name\": ", out);
		jstr(out, f->name);
		fputs(", \"file\": ", out);
		jstr(out, f->file);
		fputs(", \"line\": ", out);
		if (f->line >= 0)
			fprintf(out, "%d", f->line);
		else
			fputs("null", out);
		if (d->opts.locals) {
			fputs(", \"locals\": ", out);
			locals_json(out, f);
		}
		fputs("}", out);
		break;
	case DUMP_FRAME_NATIVE:
		fputs("{\"kind\": \"native\", \"name\": ", out);
		jstr(out, f->name);
		fputs(", \"module\": ", out);
		jstr(out, f->file);
		fprintf(out, ", \"offset\": %" PRIu64 ", \"ip\": ", f->offset);
		jaddr(out, f->ip);
		fputs("}", out);
		break;
	case DUMP_FRAME_UNREADABLE:
		fputs("{\"kind\": \"unreadable\"}", out);
		break;
	case DUMP_FRAME_GAP:
		fputs("{\"kind\": \"gap\", \"reason\": ", out);
		jstr(out, f->name);
		fputs("}", out);
		break;
	}
}

static void thread_json(FILE *out, const struct dump *d, const struct dump_thread *t)
{
	fputs("{\"tid\": ", out);
	jtid(out, t->t.host_tid);
	fputs(", \"ns_tid\": ", out);
	jtid(out, t->t.ns_tid && t->t.ns_tid != t->t.host_tid ? t->t.ns_tid : 0);
	fputs(", \"comm\": ", out);
	jstr(out, t->t.host_tid ? t->comm : NULL);
	fputs(", \"name\": ", out);
	jstr(out, t->name[0] ? t->name : NULL);
	fprintf(out, ", \"main\": %s, \"gil\": %s, \"crashed\": %s, \"ident\": ",
		t->t.host_tid && (t->t.host_tid == d->p.pid || (d->core && t->t.host_tid == d->pid))
			? "true" : "false",
		t->t.holds_gil ? "true" : "false", t->crashed ? "true" : "false");
	jaddr(out, t->t.pthread_id);
	fputs(", \"state\": ", out);
	state_json(out, d, t);
	fputs(", \"frames\": [", out);
	for (size_t i = 0; i < t->nframes; i++) {
		if (i)
			fputs(", ", out);
		frame_json(out, d, &t->frames[i]);
	}
	fprintf(out, "], \"truncated\": %s, \"error\": ", t->truncated ? "true" : "false");
	jstr(out, t->error[0] ? t->error : NULL);
	fputs(", \"native_note\": ", out);
	jstr(out, t->native_note[0] ? t->native_note : NULL);
	fputs("}", out);
}

/* --globals: [{"module", "file", "variables": [{"name", "repr"}], "hidden", "truncated"}] */
static void globals_json(FILE *out, const struct dump *d)
{
	fputc('[', out);
	for (size_t i = 0; i < d->nmodules; i++) {
		const struct py_module_globals *g = &d->modules[i];

		fputs(i ? ", {\"module\": " : "{\"module\": ", out);
		jstr(out, g->module);
		fputs(", \"file\": ", out);
		jstr(out, g->file[0] ? g->file : NULL);
		fputs(", \"variables\": [", out);
		for (size_t k = 0; k < g->nvars; k++) {
			fputs(k ? ", {\"name\": " : "{\"name\": ", out);
			jstr(out, g->vars[k].name);
			fputs(", \"repr\": ", out);
			jstr(out, g->vars[k].repr);
			fputs("}", out);
		}
		fprintf(out, "], \"hidden\": %zu, \"truncated\": %s}", g->hidden,
			g->cut ? "true" : "false");
	}
	fprintf(out, "], \"globals_truncated\": %s, \"globals_unreadable_frames\": %zu",
		d->modules_cut ? "true" : "false", d->modules_unread);
}

static void process_json(FILE *out, const struct dump *d)
{
	const struct py_process *p = &d->p;

	fprintf(out, "{\"pid\": %d, \"ns_pid\": %d, \"comm\": ", (int)d->pid,
		(int)(d->core ? d->pid : p->ns_pid));
	jstr(out, d->core ? d->core->fname : p->comm);
	fputs(", \"python\": ", out);
	jstr(out, p->version_str);
	fprintf(out, ", \"free_threaded\": %s, \"interpreter\": ", p->free_threaded ? "true" : "false");
	jstr(out, p->interp_path);
	fputs(", \"offsets\": ", out);
	jstr(out, py_offsets_source_name(p->source));
	fputs(", \"gil_holder_tid\": ", out);
	jtid(out, dump_gil_holder(d));
	fputs(", \"core\": ", out);
	if (d->core) {
		fputs("{\"file\": ", out);
		{
		jstr(out, d->core_path);
		bool crash = dump_core_crashed(d->core);

		fprintf(out, ", \"crash\": %s, \"signal\": %d, \"signal_name\": ",
			crash ? "true" : "false", d->core->signo);
		jstr(out, dump_signal_name(d->core->signo));
		fputs(", \"fault_address\": ", out);
		jaddr(out, crash ? d->core->fault_addr : 0);
		fputs(", \"thread\": ", out);
		jtid(out, crash ? d->core->threads[0].tid : 0);
		fputs(", \"process_cpu_s\": ", out);
		jsec(out, d->process_cpu_ns > 0 ? d->process_cpu_ns : PROC_WAIT_UNKNOWN);
		fputs("}", out);
		}
	} else {
		fputs("null", out);
	}
	fputs(", \"notes\": [", out);
	if (d->names_note[0])
		jstr(out, d->names_note);
	if (!d->objs_ok) {
		char note[200];

		snprintf(note, sizeof(note), "objects: %s", d->objs.why);
		fputs(d->names_note[0] ? ", " : "", out);
		jstr(out, note);
	}
	fputs("], \"threads\": [", out);
	for (size_t i = 0; i < d->nthreads; i++) {
		if (i)
			fputs(", ", out);
		thread_json(out, d, &d->threads[i]);
	}
	fputs("]", out);
	if (d->opts.globals) {
		fputs(", \"globals\": ", out);
		globals_json(out, d);
	}
	fputs("}", out);
}

void dump_print_json(FILE *out, struct dump *const *dumps, size_t n,
		     const struct dump_error *errors, size_t nerrors)
{
	fputs("{\"processes\": [", out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		process_json(out, dumps[i]);
	}
	fputs("], \"errors\": [", out);
	for (size_t i = 0; i < nerrors; i++) {
		fprintf(out, "%s{\"pid\": %d, \"error\": ", i ? ", " : "", (int)errors[i].pid);
		jstr(out, errors[i].error);
		fputs("}", out);
	}
	fputs("]}\n", out);
}
