/* SPDX-License-Identifier: Apache-2.0 */
#include "report/row_limit.h"

#include <stdlib.h>
#include <string.h>

static int by_value_desc(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->nframes != y->nframes)
		return x->nframes < y->nframes ? -1 : 1;
	return memcmp(x->frames, y->frames, (size_t)x->nframes * sizeof(*x->frames));
}

int report_top_rows(const struct report *rep, size_t top, struct report_top *out)
{
	struct report_row *rows;

	memset(out, 0, sizeof(*out));
	out->view = *rep;
	if (!top || rep->n <= top)
		return 0;
	rows = malloc(rep->n * sizeof(*rows));
	if (!rows)
		return -1;
	memcpy(rows, rep->rows, rep->n * sizeof(*rows));
	qsort(rows, rep->n, sizeof(*rows), by_value_desc);
	for (size_t i = top; i < rep->n; i++)
		out->omitted_value += rows[i].value;
	out->omitted = rep->n - top;
	out->view.rows = rows;
	out->view.n = out->view.cap = top;
	return 0;
}

void report_top_free(struct report_top *t)
{
	if (t->omitted)
		free(t->view.rows);
	memset(t, 0, sizeof(*t));
}

void report_print_top(const struct report *rep, size_t top, const char *less,
		      void (*format)(uint64_t v, char *buf, size_t len), FILE *out)
{
	struct report_top t;
	char v[48];

	report_top_rows(rep, top, &t);
	if (t.omitted) {
		format(t.omitted_value, v, sizeof(v));
		fprintf(out,
			"(%zu more stack%s with %s, %s in all (%.1f%%), not shown: --all "
			"shows every stack; -f and the other formats have them all)\n\n",
			t.omitted, t.omitted == 1 ? "" : "s", less, v,
			rep->total ? 100.0 * (double)t.omitted_value / (double)rep->total : 0.0);
	}
	report_print_text(&t.view, out);
	report_top_free(&t);
}
