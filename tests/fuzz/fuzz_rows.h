/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Report rows made of hostile names, for the output-writer targets.
 *
 * Rows are what stack_collector_collect() hands the writers: a comm of up to
 * 15 bytes as BPF copied it (any bytes but NUL), then frame names joined
 * root first with ';', kernel frames suffixed "_[k]", and maybe the
 * runnable marker. Frame names are anything but NUL, ';' and '\n'
 * (frames_push() replaces the last two): Python names, native symbol
 * names of a hostile binary, kernel symbols.
 *
 * Input, one record per row:
 *   u8 flags     bits 0-3: comm length; bit 4: runnable marker
 *   comm bytes
 *   u8 pid       (few pids: rows of one process group together)
 *   u8 nkernel   how many of the last frames are kernel frames
 *   u16 value    weight (scaled by flags bits 5-7: up to 2^63)
 *   frames       up to '\n' or the end, split at ';'
 */
#ifndef PYBPF_FUZZ_ROWS_H
#define PYBPF_FUZZ_ROWS_H

#include "fuzz_common.h"
#include "report/rows.h"

#define FUZZ_MAX_ROWS 256

static int fuzz_row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	c = strcmp(x->comm, y->comm);
	return c ? c : strcmp(x->frames, y->frames);
}

/* Builds rep->rows from the input (sorted as merge_rows() leaves them). */
static inline void fuzz_rows_build(struct report *rep, const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	report_init(rep, false);
	rep->rows = calloc(FUZZ_MAX_ROWS, sizeof(*rep->rows));
	if (!rep->rows)
		abort();
	rep->cap = FUZZ_MAX_ROWS;
	while (in.n && rep->n < FUZZ_MAX_ROWS) {
		struct report_row *r = &rep->rows[rep->n];
		uint8_t flags = fuzz_u8(&in);
		size_t clen = flags & 15, nframes = 0, nk, len = 1;
		uint16_t value;
		const uint8_t *nl;
		size_t flen;
		char *s;

		fuzz_take(&in, r->comm, clen);
		r->comm[clen] = '\0'; /* an inner NUL just shortens it, as in C */
		r->pid = 1000 + fuzz_u8(&in) % 4;
		nk = fuzz_u8(&in);
		fuzz_take(&in, &value, sizeof(value));
		r->value = (uint64_t)value << (9 * (flags >> 5));
		nl = memchr(in.p, '\n', in.n);
		flen = nl ? (size_t)(nl - in.p) : in.n;
		/* frames: drop NULs, count names */
		s = malloc(flen + 1);
		if (!s)
			abort();
		for (size_t i = 0, k = 0; i <= flen; i++) {
			if (i == flen || in.p[i] == ';') {
				nframes++;
				if (i == flen)
					s[k] = '\0';
				else
					s[k++] = ';';
			} else if (in.p[i]) {
				s[k++] = (char)in.p[i];
			}
		}
		in.p += flen + (nl != NULL);
		in.n -= flen + (nl != NULL);
		if (nk > nframes)
			nk = nframes;
		/* kernel frames get "_[k]", as add_row() writes them */
		len = strlen(s) + 5 * nk + sizeof(RUNNABLE_MARKER) + 2;
		r->frames = malloc(len);
		if (!r->frames)
			abort();
		r->frames[0] = '\0';
		for (size_t idx = 0, at = 0;; idx++) {
			const char *tok = s + at, *semi = strchr(tok, ';');
			size_t tl = semi ? (size_t)(semi - tok) : strlen(tok);

			sprintf(r->frames + strlen(r->frames), "%s%.*s%s", idx ? ";" : "", (int)tl,
				tok, idx >= nframes - nk ? "_[k]" : "");
			if (!semi)
				break;
			at += tl + 1;
		}
		if (flags & 16)
			strcat(r->frames, ";" RUNNABLE_MARKER);
		free(s);
		r->nuser = (int)(nframes - nk);
		r->nkernel = (int)nk;
		rep->total += r->value;
		rep->n++;
	}
	qsort(rep->rows, rep->n, sizeof(*rep->rows), fuzz_row_cmp);
	rep->period_ns = 10101010;
	rep->duration_ns = 5000000000ULL;
}

/* Everything written to a memory stream, for checks on the output. */
struct fuzz_out {
	FILE *f;
	char *buf;
	size_t len;
};

static inline void fuzz_out_open(struct fuzz_out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	if (!o->f)
		abort();
}

static inline void fuzz_out_close(struct fuzz_out *o)
{
	fclose(o->f);
	o->f = NULL;
}

static inline void fuzz_out_free(struct fuzz_out *o)
{
	free(o->buf);
	o->buf = NULL;
}

#endif
