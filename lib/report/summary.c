/* SPDX-License-Identifier: Apache-2.0 */
#include "report/summary.h"

#include "report/functions.h"
#include "report/units.h"
#include "sys/text_escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What own counts for stacks without a Python frame (a thread in C code
 * only): ranked with the functions, so that the shares add up. */
#define NO_PYTHON_FRAME "[no Python frames]"

/* A Python function as the stacks name its frames, at its def line (or
 * "?" where the code object's first line is not known). */
static bool python_function(const struct report_frame *f, char *buf, size_t len)
{
	struct report_frame def = *f;

	if (f->kind != REPORT_FRAME_PYTHON)
		return false;
	def.line = f->first_line > 0 ? f->first_line : REPORT_LINE_UNKNOWN;
	report_frame_label(&def, buf, len);
	return true;
}

static void format_value(uint64_t v, const char *unit, bool with_unit, char *buf, size_t len)
{
	if (strcmp(unit, "us") == 0)
		report_format_us(v, buf, len);
	else if (strcmp(unit, "bytes") == 0)
		report_format_bytes(v, buf, len);
	else if (with_unit)
		snprintf(buf, len, "%llu %s", (unsigned long long)v, v == 1 ? "sample" : "samples");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

struct ranked {
	const char *label;
	uint64_t value;
};

static int by_value_desc(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* One list: the top functions by own (or total) value, under a heading. */
static void print_list(const struct function_counts *c, bool own, size_t top, const char *unit,
		       FILE *out)
{
	struct ranked *v = malloc((c->n + 1) * sizeof(*v));
	uint64_t attributed = 0;
	size_t n = 0;
	char value[48];

	if (!v)
		return;
	for (size_t i = 0; i < c->n; i++) {
		uint64_t x = own ? c->v[i].own : c->v[i].total;

		attributed += c->v[i].own;
		if (x)
			v[n++] = (struct ranked){ c->v[i].label, x };
	}
	if (own && c->all > attributed)
		v[n++] = (struct ranked){ NO_PYTHON_FRAME, c->all - attributed };
	if (n)
		qsort(v, n, sizeof(*v), by_value_desc);
	if (own)
		fprintf(out, "%6s %11s  %s\n", "%Own", "Own",
			"Python function (own: it ran, or native or kernel code it called)");
	else
		fprintf(out, "%6s %11s  %s\n", "%Total", "Total",
			"Python function (total: anywhere on the stack)");
	for (size_t i = 0; i < n && i < top; i++) {
		format_value(v[i].value, unit, false, value, sizeof(value));
		fprintf(out, "%6.1f %11s  %s\n",
			c->all ? 100.0 * (double)v[i].value / (double)c->all : 0.0, value, v[i].label);
	}
	free(v);
}

struct proc_value {
	pid_t pid;
	uint64_t value;
};

static int proc_by_pid(const void *a, const void *b)
{
	const struct proc_value *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int proc_by_value_desc(const void *a, const void *b)
{
	const struct proc_value *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return proc_by_pid(a, b);
}

/* The processes of rep's rows with their values, the largest first. */
static struct proc_value *proc_values(const struct report *rep, size_t *n)
{
	struct proc_value *v = malloc((rep->n ? rep->n : 1) * sizeof(*v));
	size_t k = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < rep->n; i++)
		v[i] = (struct proc_value){ rep->rows[i].pid, rep->rows[i].value };
	if (rep->n)
		qsort(v, rep->n, sizeof(*v), proc_by_pid);
	for (size_t i = 0; i < rep->n; i++) {
		if (k && v[k - 1].pid == v[i].pid)
			v[k - 1].value += v[i].value;
		else
			v[k++] = v[i];
	}
	if (k)
		qsort(v, k, sizeof(*v), proc_by_value_desc);
	while (k && !v[k - 1].value) /* a process of nothing has nothing to summarise */
		k--;
	*n = k;
	return v;
}

static void print_proc(const struct report *rep, const struct proc_value *p, uint64_t all,
		       bool several, const char *unit, const char *what, FILE *out)
{
	const struct report_proc *proc = report_find_proc(rep, p->pid);
	size_t top = several ? SUMMARY_FUNCTIONS_EACH : SUMMARY_FUNCTIONS;
	struct function_counts c;
	char value[64];

	function_counts_init(&c, python_function);
	if (function_counts_add(&c, rep, p->pid, 0) < 0) {
		function_counts_free(&c);
		return;
	}
	format_value(p->value, unit, true, value, sizeof(value));
	fprintf(out, "Summary of %s%sPID %d (%s): %s", what ? what : "", what ? ", " : "",
		(int)p->pid, TEXT_ESC(proc && proc->comm[0] ? proc->comm : "?"), value);
	if (several)
		fprintf(out, " (%.1f%% of all)", all ? 100.0 * (double)p->value / (double)all : 0.0);
	fprintf(out, "\n");
	print_list(&c, true, top, unit, out);
	print_list(&c, false, top, unit, out);
	function_counts_free(&c);
}

/* Whether rep has a Python frame at all (not with -K, kernel stacks only). */
static bool has_python(const struct report *rep)
{
	for (size_t i = 0; i < rep->nframes; i++)
		if (rep->frames[i].kind == REPORT_FRAME_PYTHON)
			return true;
	return false;
}

void report_print_summary(const struct report *rep, const char *unit, const char *what,
			  size_t procs, FILE *out)
{
	size_t n;
	struct proc_value *v;
	uint64_t all = 0, rest = 0;
	char value[64];

	if (!has_python(rep) || !(v = proc_values(rep, &n)))
		return;
	for (size_t i = 0; i < n; i++)
		all += v[i].value;
	if (!procs || procs > n)
		procs = n;
	for (size_t i = 0; i < procs; i++) {
		if (i)
			fprintf(out, "\n");
		print_proc(rep, &v[i], all, n > 1, unit, what, out);
	}
	if (n > procs) {
		for (size_t i = procs; i < n; i++)
			rest += v[i].value;
		format_value(rest, unit, true, value, sizeof(value));
		fprintf(out, "\n(%zu more %s, %s in all (%.1f%%), not summarised)\n",
			n - procs, n - procs == 1 ? "process" : "processes", value,
			all ? 100.0 * (double)rest / (double)all : 0.0);
	}
	free(v);
}
