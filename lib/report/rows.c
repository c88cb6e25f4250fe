/* SPDX-License-Identifier: Apache-2.0 */
#include "report/rows.h"

#include "sys/text_escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report_init(struct report *rep, bool delimiter)
{
	memset(rep, 0, sizeof(*rep));
	rep->delimiter = delimiter;
}

static void frame_free(struct report_frame *f)
{
	free((char *)f->name);
	free((char *)f->file);
	free((char *)f->module);
	free((char *)f->build_id);
}

void report_free(struct report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->rows[i].frames);
		free(rep->rows[i].task);
		free(rep->rows[i].thread_name);
	}
	for (size_t i = 0; i < rep->nframes; i++)
		frame_free(&rep->frames[i]);
	free(rep->rows);
	free(rep->frames);
	free(rep->frame_slots);
	for (size_t i = 0; i < rep->nprocs; i++)
		free(rep->procs[i].interp_path);
	free(rep->procs);
	memset(rep, 0, sizeof(*rep));
}

void report_drop_zero_rows(struct report *rep)
{
	size_t kept = 0;

	for (size_t i = 0; i < rep->n; i++) {
		if (rep->rows[i].value) {
			rep->rows[kept++] = rep->rows[i];
			continue;
		}
		free(rep->rows[i].frames);
		free(rep->rows[i].task);
		free(rep->rows[i].thread_name);
	}
	rep->n = kept;
}

/* ---- interned frames ------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211ULL;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	if (!s)
		return mix(h, 0x9e37);
	for (; *s; s++)
		h = mix(h, (uint8_t)*s);
	return mix(h, 0xff);
}

static uint64_t frame_hash(const struct report_frame *f)
{
	uint64_t h = 1469598103934665603ULL;

	h = mix(h, (uint64_t)f->kind);
	h = mix_str(h, f->name);
	h = mix_str(h, f->file);
	h = mix(h, (uint64_t)(uint32_t)f->line);
	h = mix(h, (uint64_t)(uint32_t)f->first_line);
	h = mix_str(h, f->module);
	h = mix_str(h, f->build_id);
	h = mix(h, f->addr);
	h = mix(h, f->offset);
	h = mix(h, f->map_start);
	h = mix(h, f->map_end);
	return mix(h, f->map_offset);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool frame_eq(const struct report_frame *a, const struct report_frame *b)
{
	return a->kind == b->kind && a->unnamed == b->unnamed && a->line == b->line && a->first_line == b->first_line &&
	       a->addr == b->addr && a->offset == b->offset && a->map_start == b->map_start &&
	       a->map_end == b->map_end && a->map_offset == b->map_offset &&
	       str_eq(a->name, b->name) && str_eq(a->file, b->file) &&
	       str_eq(a->module, b->module) && str_eq(a->build_id, b->build_id);
}

static void slot_place(struct report *rep, size_t index)
{
	size_t j = frame_hash(&rep->frames[index]) & (rep->nslots - 1);

	while (rep->frame_slots[j])
		j = (j + 1) & (rep->nslots - 1);
	rep->frame_slots[j] = index + 1;
}

static int slots_grow(struct report *rep)
{
	size_t n = rep->nslots ? rep->nslots * 2 : 1024;
	size_t *v = calloc(n, sizeof(*v));

	if (!v)
		return -1;
	free(rep->frame_slots);
	rep->frame_slots = v;
	rep->nslots = n;
	for (size_t i = 0; i < rep->nframes; i++)
		slot_place(rep, i);
	return 0;
}

static int dup_or_null(const char *s, const char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -1;
}

long report_intern_frame(struct report *rep, const struct report_frame *f)
{
	struct report_frame *copy;
	size_t j;

	if ((rep->nframes + 1) * 2 > rep->nslots && slots_grow(rep) < 0)
		return -1;
	for (j = frame_hash(f) & (rep->nslots - 1); rep->frame_slots[j];
	     j = (j + 1) & (rep->nslots - 1))
		if (frame_eq(&rep->frames[rep->frame_slots[j] - 1], f))
			return (long)rep->frame_slots[j] - 1;
	if (rep->nframes == rep->frames_cap) {
		size_t cap = rep->frames_cap ? rep->frames_cap * 2 : 256;
		struct report_frame *v = realloc(rep->frames, cap * sizeof(*v));

		if (!v)
			return -1;
		rep->frames = v;
		rep->frames_cap = cap;
	}
	copy = &rep->frames[rep->nframes];
	*copy = *f;
	if (dup_or_null(f->name, &copy->name) < 0 || dup_or_null(f->file, &copy->file) < 0 ||
	    dup_or_null(f->module, &copy->module) < 0 ||
	    dup_or_null(f->build_id, &copy->build_id) < 0) {
		frame_free(copy);
		return -1;
	}
	rep->frame_slots[j] = ++rep->nframes;
	return (long)rep->nframes - 1;
}

long report_intern_marker(struct report *rep, const char *text)
{
	struct report_frame f = { .kind = REPORT_FRAME_MARKER, .name = text };

	return report_intern_frame(rep, &f);
}

/* ---- rows and processes ---------------------------------------------- */

int report_add_row(struct report *rep, pid_t pid, pid_t tid, const char *comm,
		   const uint32_t *frames, int nframes, int nuser, int nkernel, uint64_t value)
{
	struct report_row *row;
	uint32_t *copy = malloc((size_t)(nframes > 0 ? nframes : 1) * sizeof(*copy));

	if (!copy)
		return -1;
	if (rep->n == rep->cap) {
		size_t cap = rep->cap ? rep->cap * 2 : 1024;
		struct report_row *v = realloc(rep->rows, cap * sizeof(*v));

		if (!v) {
			free(copy);
			return -1;
		}
		rep->rows = v;
		rep->cap = cap;
	}
	if (nframes > 0)
		memcpy(copy, frames, (size_t)nframes * sizeof(*copy));
	row = &rep->rows[rep->n++];
	row->pid = pid;
	row->tid = tid;
	snprintf(row->comm, sizeof(row->comm), "%s", comm);
	row->frames = copy;
	row->nframes = nframes;
	row->nuser = nuser;
	row->nkernel = nkernel;
	row->value = value;
	row->task = NULL;
	row->thread_name = NULL;
	return 0;
}

int report_row_set_task(struct report_row *row, const char *task)
{
	free(row->task);
	row->task = task ? strdup(task) : NULL;
	return task && !row->task ? -1 : 0;
}

int report_row_set_thread_name(struct report_row *row, const char *name)
{
	free(row->thread_name);
	row->thread_name = name ? strdup(name) : NULL;
	return name && !row->thread_name ? -1 : 0;
}

const char *report_row_thread_name(const struct report_row *row)
{
	return row->thread_name ? row->thread_name : row->comm;
}

const struct report_proc *report_find_proc(const struct report *rep, pid_t pid)
{
	for (size_t i = 0; i < rep->nprocs; i++)
		if (rep->procs[i].pid == pid)
			return &rep->procs[i];
	return NULL;
}

int report_set_proc(struct report *rep, pid_t pid, const char *comm, const char *python_version)
{
	struct report_proc *p = (struct report_proc *)report_find_proc(rep, pid);

	if (!p) {
		struct report_proc *v = realloc(rep->procs, (rep->nprocs + 1) * sizeof(*v));

		if (!v)
			return -1;
		rep->procs = v;
		p = &rep->procs[rep->nprocs++];
		memset(p, 0, sizeof(*p));
		p->pid = pid;
	}
	snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
	snprintf(p->python_version, sizeof(p->python_version), "%s",
		 python_version ? python_version : "");
	return 0;
}

int report_set_proc_interp(struct report *rep, pid_t pid, const char *path)
{
	struct report_proc *p = (struct report_proc *)report_find_proc(rep, pid);
	char *copy = path ? strdup(path) : NULL;

	if (!p || (path && !copy)) {
		free(copy);
		return -1;
	}
	free(p->interp_path);
	p->interp_path = copy;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	c = strcmp(x->comm, y->comm);
	if (c)
		return c;
	c = strcmp(report_row_thread_name(x), report_row_thread_name(y));
	if (c)
		return c;
	if (x->nframes != y->nframes)
		return x->nframes < y->nframes ? -1 : 1;
	if (x->nkernel != y->nkernel)
		return x->nkernel < y->nkernel ? -1 : 1;
	if (!x->task != !y->task)
		return x->task ? 1 : -1;
	c = x->task ? strcmp(x->task, y->task) : 0;
	if (c)
		return c;
	return x->nframes ? memcmp(x->frames, y->frames, (size_t)x->nframes * sizeof(*x->frames))
			  : 0;
}

void report_merge_rows(struct report *rep)
{
	size_t out = 0;

	if (rep->n)
		qsort(rep->rows, rep->n, sizeof(*rep->rows), row_cmp);
	for (size_t i = 0; i < rep->n; i++) {
		if (out && row_cmp(&rep->rows[out - 1], &rep->rows[i]) == 0) {
			rep->rows[out - 1].value += rep->rows[i].value;
			free(rep->rows[i].frames);
			free(rep->rows[i].task);
			free(rep->rows[i].thread_name);
			continue;
		}
		rep->rows[out++] = rep->rows[i];
	}
	rep->n = out;
}

/* ---- frame text ------------------------------------------------------ */

const char *report_frame_name(const struct report_frame *f)
{
	return f->name ? f->name : "[unknown]";
}

/* Appends s to the label at buf + used (snprintf's convention: used may
 * pass len, then only the length counts). Target text is escaped, ';'
 * included: it separates frames in folded output and in row_text. */
static size_t label_put(char *buf, size_t len, size_t used, const char *s, bool target)
{
	char *at = used < len ? buf + used : NULL;
	size_t room = used < len ? len - used : 0;
	int n;

	if (target)
		return used + text_escape(at, room, s, ";");
	n = snprintf(at, room, "%s", s);
	return used + (n < 0 ? 0 : (size_t)n);
}

size_t report_frame_label(const struct report_frame *f, char *buf, size_t len)
{
	char line[24];
	size_t used = label_put(buf, len, 0, report_frame_name(f), true);

	if (f->kind == REPORT_FRAME_PYTHON && f->file) {
		if (f->line >= 0)
			snprintf(line, sizeof(line), ":%d)", f->line);
		else
			snprintf(line, sizeof(line), ":?)");
		used = label_put(buf, len, used, " (", false);
		used = label_put(buf, len, used, f->file, true);
		used = label_put(buf, len, used, line, false);
	}
	return used;
}

/* ---- text and folded ------------------------------------------------- */

/*
 * Both print what a row reads as: frames joined by ';' (kernel frames with
 * "_[k]"), per process and thread name. Rows of different threads (or
 * with frames that read the same) are one line, as bcc's tools print.
 */
struct text_row {
	pid_t pid;
	const char *comm;
	char *frames; /* labels joined root first */
	int nuser, nkernel;
	uint64_t value;
};

static char *row_text(const struct report *rep, const struct report_row *r)
{
	size_t cap = 256, used = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; i < r->nframes; i++) {
		const struct report_frame *f = &rep->frames[r->frames[i]];
		bool kernel = f->kind == REPORT_FRAME_KERNEL;
		size_t need = report_frame_label(f, NULL, 0) + 6;

		if (used + need >= cap) {
			char *v;

			while (used + need >= cap)
				cap *= 2;
			v = realloc(s, cap);
			if (!v) {
				free(s);
				return NULL;
			}
			s = v;
		}
		if (i)
			s[used++] = ';';
		used += report_frame_label(f, s + used, cap - used);
		if (kernel) {
			memcpy(s + used, "_[k]", 5);
			used += 4;
		}
		s[used] = '\0';
	}
	return s;
}

static int text_key_cmp(const void *a, const void *b)
{
	const struct text_row *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	c = strcmp(x->comm, y->comm);
	if (c)
		return c;
	c = strcmp(x->frames, y->frames);
	if (c)
		return c;
	return x->nkernel < y->nkernel ? -1 : x->nkernel > y->nkernel;
}

static int text_value_cmp(const void *a, const void *b)
{
	const struct text_row *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return text_key_cmp(a, b);
}

static void text_rows_free(struct text_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].frames);
	free(v);
}

/* Rows as text, merged, ascending by value; *n their number. */
static struct text_row *text_rows(const struct report *rep, size_t *n)
{
	struct text_row *v = calloc(rep->n ? rep->n : 1, sizeof(*v));
	size_t out = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = &rep->rows[i];

		v[i] = (struct text_row){ .pid = r->pid, .comm = r->comm, .frames = row_text(rep, r),
					  .nuser = r->nuser, .nkernel = r->nkernel, .value = r->value };
		if (!v[i].frames) {
			text_rows_free(v, i);
			return NULL;
		}
	}
	if (rep->n)
		qsort(v, rep->n, sizeof(*v), text_key_cmp);
	for (size_t i = 0; i < rep->n; i++) {
		if (out && text_key_cmp(&v[out - 1], &v[i]) == 0) {
			v[out - 1].value += v[i].value;
			free(v[i].frames);
			continue;
		}
		v[out++] = v[i];
	}
	if (out)
		qsort(v, out, sizeof(*v), text_value_cmp);
	*n = out;
	return v;
}

void report_print_text(const struct report *rep, FILE *out)
{
	size_t nrows;
	struct text_row *v = text_rows(rep, &nrows);

	if (!v)
		return;
	for (size_t i = 0; i < nrows; i++) {
		const struct text_row *r = &v[i];
		char *save = NULL;
		char **frames = calloc((size_t)(r->nuser + r->nkernel) + 2, sizeof(char *));
		int n = 0;

		if (!frames)
			break;
		for (char *tok = strtok_r(r->frames, ";", &save); tok && n < r->nuser + r->nkernel + 2;
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
		fprintf(out, "    %-16s %s (%d)\n        %llu\n\n", "-", TEXT_ESC(r->comm),
			(int)r->pid, (unsigned long long)r->value);
		free(frames);
	}
	text_rows_free(v, nrows);
}

void report_print_folded(const struct report *rep, FILE *out)
{
	size_t nrows;
	struct text_row *v = text_rows(rep, &nrows);

	if (!v)
		return;
	for (size_t i = 0; i < nrows; i++) {
		const struct text_row *r = &v[i];
		const char *kernel = r->frames;
		char comm[4 * sizeof(rep->rows[0].comm)];

		/* comm is the root frame: escaped as names are */
		text_escape(comm, sizeof(comm), r->comm, ";");
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
	text_rows_free(v, nrows);
}
