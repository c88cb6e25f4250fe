/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reports made of hostile names, for the output-writer targets.
 *
 * A report is what stack_collector_collect() hands the writers (see
 * lib/report/rows.h): interned frames with fields, and rows of frame
 * indices root first (user frames, kernel frames, maybe the runnable
 * marker), each with a comm of up to 15 bytes as BPF copied it (any bytes
 * but NUL). Names are anything but NUL: Python names and file names of a
 * hostile process, native symbols and paths of a hostile binary, kernel
 * symbols; ';' and '\n' in them too (the writers must keep them apart
 * from their separators).
 *
 * Input, one record per row:
 *   u8 flags     bits 0-3: comm length; bit 4: runnable marker
 *   comm bytes
 *   u8 pid       (few pids: rows of one process group together)
 *   u8 nkernel   how many of the last frames are kernel frames
 *   u16 value    weight (scaled by flags bits 5-7: up to 2^63)
 *   frames       up to '\n' or the end, split at ';'; in a frame after
 *                its first byte, NULs are dropped, and byte 0x01 stands
 *                for ';' and 0x02 for '\n'
 * Each user frame's first byte picks its kind (python, native, marker)
 * and its numbers; a Python frame's name and file are split at '@' (no
 * '@': a code object that could not be named, no file); a native frame
 * without a name is unnamed, and bit 2 of its first byte gives it a file.
 */
#ifndef PYBPF_FUZZ_ROWS_H
#define PYBPF_FUZZ_ROWS_H

#include "fuzz_common.h"
#include "report/rows.h"

#define FUZZ_MAX_ROWS 256
#define FUZZ_MAX_FRAMES 512

/* The frame of one token of len bytes (escapes already undone in buf). */
static inline long fuzz_frame(struct report *rep, char *buf, size_t len, bool kernel)
{
	struct report_frame f = { .kind = REPORT_FRAME_MARKER, .line = REPORT_LINE_UNKNOWN };
	uint8_t b0 = len ? (uint8_t)buf[0] : 0;
	char *name = len ? buf + 1 : buf, *at;

	if (!len)
		buf[0] = '\0';
	if (kernel) {
		f.kind = REPORT_FRAME_KERNEL;
		f.name = *name ? name : NULL;
		f.addr = 0xffffffff81000000ull + b0 * 16u + len;
		return report_intern_frame(rep, &f);
	}
	switch (b0 % 3) {
	case 0:
		f.kind = REPORT_FRAME_PYTHON;
		f.name = name;
		at = strchr(name, '@');
		if (at) {
			*at = '\0';
			f.file = at + 1;
			f.line = (int)(b0 >> 2) - 1; /* -1: not known */
			f.first_line = b0 >> 4;
		}
		break;
	case 1:
		f.kind = REPORT_FRAME_NATIVE;
		f.name = *name ? name : NULL;
		f.addr = 0x7f0000001000ull + b0 * 8u + len;
		if (b0 & 4) {
			f.module = b0 & 8 ? "/usr/lib/libhostile.so" : name;
			f.build_id = b0 & 16 ? "0123456789abcdef" : NULL;
			f.map_start = 0x7f0000000000ull;
			f.map_end = 0x7f0000100000ull;
			f.map_offset = 0x1000;
			f.offset = f.addr - f.map_start + f.map_offset;
		}
		break;
	default:
		f.name = name;
	}
	return report_intern_frame(rep, &f);
}

/* Builds rep from the input (rows merged and sorted as collect() leaves
 * them). */
static inline void fuzz_rows_build(struct report *rep, const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint32_t frames[FUZZ_MAX_FRAMES + 1];

	report_init(rep, false);
	while (in.n && rep->n < FUZZ_MAX_ROWS) {
		uint8_t flags = fuzz_u8(&in);
		size_t clen = flags & 15, ntok = 0, nk, flen;
		char comm[16], *buf;
		uint16_t value;
		const uint8_t *nl;
		pid_t pid;
		int n = 0, nuser = 0, nkernel = 0;

		fuzz_take(&in, comm, clen);
		comm[clen] = '\0'; /* an inner NUL just shortens it, as in C */
		pid = 1000 + fuzz_u8(&in) % 4;
		nk = fuzz_u8(&in);
		fuzz_take(&in, &value, sizeof(value));
		nl = memchr(in.p, '\n', in.n);
		flen = nl ? (size_t)(nl - in.p) : in.n;
		for (size_t i = 0; i <= flen; i++)
			ntok += i == flen || in.p[i] == ';';
		if (nk > ntok)
			nk = ntok;
		/* tokens: NULs dropped, escapes undone */
		buf = malloc(flen + 2);
		if (!buf)
			abort();
		for (size_t i = 0, k = 0, t = 0; i <= flen; i++) {
			if (k == 0 && i < flen && in.p[i] != ';') {
				buf[k++] = (char)in.p[i]; /* the kind byte, as it is */
				buf[k] = '\0';
			} else if (i == flen || in.p[i] == ';') {
				bool kernel = t >= ntok - nk;
				long idx = fuzz_frame(rep, buf, k, kernel);

				if (idx >= 0 && n < FUZZ_MAX_FRAMES) {
					frames[n++] = (uint32_t)idx;
					if (kernel)
						nkernel++;
					else
						nuser++;
				}
				k = 0;
				t++;
			} else if (in.p[i]) {
				buf[k++] = in.p[i] == 1 ? ';' : in.p[i] == 2 ? '\n' : (char)in.p[i];
				buf[k] = '\0';
			}
		}
		free(buf);
		in.p += flen + (nl != NULL);
		in.n -= flen + (nl != NULL);
		if (flags & 16) {
			long m = report_intern_marker(rep, RUNNABLE_MARKER);

			if (m >= 0)
				frames[n++] = (uint32_t)m;
		}
		if (report_add_row(rep, pid, pid + (flags >> 5), comm, frames, n, nuser, nkernel,
				   (uint64_t)value << (9 * (flags >> 5))) < 0)
			abort();
		rep->total += rep->rows[rep->n - 1].value;
		if (!report_find_proc(rep, pid) &&
		    report_set_proc(rep, pid, comm, flags & 32 ? "3.11.2" : "") == 0 && (flags & 64))
			report_set_proc_interp(rep, pid, "/usr/lib/libhostile.so");
	}
	report_merge_rows(rep);
	rep->period_ns = 10101010;
	rep->duration_ns = 5000000000ULL;
	snprintf(rep->target, sizeof(rep->target), "PID %d", 1000);
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
