/* SPDX-License-Identifier: Apache-2.0 */
#include "report/views.h"

#include <stdlib.h>
#include <string.h>

int report_view_functions(struct report *rep)
{
	size_t n = rep->nframes;
	long *to = malloc((n ? n : 1) * sizeof(*to));

	if (!to)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct report_frame f = rep->frames[i]; /* interning may move them */

		to[i] = (long)i;
		if (f.kind != REPORT_FRAME_PYTHON || !f.file || f.line == f.first_line)
			continue;
		f.line = f.first_line > 0 ? f.first_line : REPORT_LINE_UNKNOWN;
		to[i] = report_intern_frame(rep, &f);
		if (to[i] < 0) {
			free(to);
			return -1;
		}
	}
	for (size_t r = 0; r < rep->n; r++)
		for (int k = 0; k < rep->rows[r].nframes; k++)
			rep->rows[r].frames[k] = (uint32_t)to[rep->rows[r].frames[k]];
	free(to);
	report_merge_rows(rep);
	return 0;
}

int report_view_threads(struct report *rep)
{
	for (size_t r = 0; r < rep->n; r++) {
		struct report_row *row = &rep->rows[r];
		const struct report_proc *p = report_find_proc(rep, row->pid);
		uint32_t *v = malloc((size_t)(row->nframes + 2) * sizeof(*v));
		char label[192];
		long proc, thread;

		if (!v)
			return -1;
		snprintf(label, sizeof(label), "[PID %d %s]", (int)row->pid,
			 p && p->comm[0] ? p->comm : "?");
		proc = report_intern_marker(rep, label);
		snprintf(label, sizeof(label), "[TID %d %s]", (int)row->tid,
			 report_row_thread_name(row)[0] ? report_row_thread_name(row) : "?");
		thread = report_intern_marker(rep, label);
		if (proc < 0 || thread < 0) {
			free(v);
			return -1;
		}
		v[0] = (uint32_t)proc;
		v[1] = (uint32_t)thread;
		if (row->nframes > 0)
			memcpy(v + 2, row->frames, (size_t)row->nframes * sizeof(*v));
		free(row->frames);
		row->frames = v;
		row->nframes += 2;
		row->nuser += 2;
	}
	return 0;
}
