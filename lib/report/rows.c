/* SPDX-License-Identifier: Apache-2.0 */
#include "report/rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report_init(struct report *rep, bool delimiter)
{
	memset(rep, 0, sizeof(*rep));
	rep->delimiter = delimiter;
}

void report_free(struct report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		free(rep->rows[i].frames);
	free(rep->rows);
	memset(rep, 0, sizeof(*rep));
}

int report_add_row(struct report *rep, pid_t pid, const char *comm, char *frames, int nuser,
		   int nkernel, uint64_t value)
{
	struct report_row *row;

	if (rep->n == rep->cap) {
		size_t cap = rep->cap ? rep->cap * 2 : 1024;
		struct report_row *v = realloc(rep->rows, cap * sizeof(*v));

		if (!v) {
			free(frames);
			return -1;
		}
		rep->rows = v;
		rep->cap = cap;
	}
	row = &rep->rows[rep->n++];
	row->pid = pid;
	snprintf(row->comm, sizeof(row->comm), "%s", comm);
	row->frames = frames;
	row->nuser = nuser;
	row->nkernel = nkernel;
	row->value = value;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	c = strcmp(x->comm, y->comm);
	return c ? c : strcmp(x->frames, y->frames);
}

void report_merge_rows(struct report *rep)
{
	size_t out = 0;

	qsort(rep->rows, rep->n, sizeof(*rep->rows), row_cmp);
	for (size_t i = 0; i < rep->n; i++) {
		if (out && row_cmp(&rep->rows[out - 1], &rep->rows[i]) == 0 &&
		    rep->rows[out - 1].nkernel == rep->rows[i].nkernel) {
			rep->rows[out - 1].value += rep->rows[i].value;
			free(rep->rows[i].frames);
			continue;
		}
		rep->rows[out++] = rep->rows[i];
	}
	rep->n = out;
}

static int value_cmp(const void *a, const void *b)
{
	const struct report_row *x = *(const struct report_row *const *)a;
	const struct report_row *y = *(const struct report_row *const *)b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return row_cmp(x, y);
}

static const struct report_row **sorted_rows(const struct report *rep)
{
	const struct report_row **v = malloc((rep->n ? rep->n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < rep->n; i++)
		v[i] = &rep->rows[i];
	qsort(v, rep->n, sizeof(*v), value_cmp);
	return v;
}

void report_print_text(const struct report *rep, FILE *out)
{
	const struct report_row **v = sorted_rows(rep);

	if (!v)
		return;
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = v[i];
		char *copy = strdup(r->frames), *save = NULL;
		char **frames = calloc((size_t)(r->nuser + r->nkernel) + 2, sizeof(char *));
		int n = 0;

		if (!copy || !frames) {
			free(copy);
			free(frames);
			break;
		}
		for (char *tok = strtok_r(copy, ";", &save); tok && n < r->nuser + r->nkernel + 2;
		     tok = strtok_r(NULL, ";", &save))
			frames[n++] = tok;
		/* leaf first: kernel frames, then user frames */
		for (int k = n - 1; k >= 0; k--) {
			size_t len = strlen(frames[k]);

			if (k == r->nuser - 1 && r->nkernel && rep->delimiter)
				fprintf(out, "    --\n");
			if (k >= r->nuser && k < r->nuser + r->nkernel && len > 4)
				fprintf(out, "    %.*s\n", (int)(len - 4), frames[k]); /* no _[k] */
			else
				fprintf(out, "    %s\n", frames[k]);
		}
		fprintf(out, "    %-16s %s (%d)\n        %llu\n\n", "-", r->comm, (int)r->pid,
			(unsigned long long)r->value);
		free(frames);
		free(copy);
	}
	free(v);
}

void report_print_folded(const struct report *rep, FILE *out)
{
	const struct report_row **v = sorted_rows(rep);

	if (!v)
		return;
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = v[i];
		const char *kernel = r->frames;
		char comm[sizeof(r->comm)];

		/* comm is the root frame: the same rule as for names (frames_push) */
		for (size_t k = 0; k < sizeof(comm); k++)
			comm[k] = r->comm[k] == ';' || r->comm[k] == '\n' ? ':' : r->comm[k];
		/* with -d, a "-" frame between user and kernel frames */
		if (rep->delimiter && r->nkernel && r->nuser) {
			for (int k = 0; k < r->nuser; k++)
				kernel = strchr(kernel, ';') + 1;
			fprintf(out, "%s;%.*s;-;%s %llu\n", comm, (int)(kernel - r->frames - 1),
				r->frames, kernel, (unsigned long long)r->value);
		} else {
			fprintf(out, "%s;%s %llu\n", comm, r->frames, (unsigned long long)r->value);
		}
	}
	free(v);
}

