/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/code.h"
#include "sys/bytes_at.h"
#include "sys/remote_mem.h"

int py_frames_first(struct py_process *p, uint64_t tstate, uint64_t *frame)
{
	uint64_t ptr = 0;
	int rc = remote_read_u64(p->pid, tstate + (uint64_t)p->off.tstate_frame, &ptr);

	if (rc == 0 && p->rules->frame_model == PY_FRAMES_CFRAME && ptr)
		rc = remote_read_u64(p->pid, ptr + (uint64_t)p->off.cframe_current_frame, &ptr);
	if (rc == 0 && ptr && p->off.tstate_base_frame >= 0) {
		uint64_t base = 0;

		rc = remote_read_u64(p->pid, tstate + (uint64_t)p->off.tstate_base_frame, &base);
		if (rc == 0 && ptr == base)
			ptr = 0;
	}
	*frame = rc == 0 ? ptr : 0;
	return rc;
}

/* Bytes of a frame struct we copy in one read: up to the last field we use. */
static size_t frame_span(const struct py_offsets *o)
{
	int32_t fields[] = { o->frame_previous, o->frame_code, o->frame_instr, o->frame_owner,
			     o->frame_is_entry, o->frame_tlbc_index };
	int32_t max = 0;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i] > max)
			max = fields[i];
	return (size_t)max + 8;
}

/* Start of the bytecode a 3.11+ frame executes. */
static uint64_t bytecode_base(struct py_process *p, const uint8_t *frame, uint64_t code)
{
	uint64_t base = code + (uint64_t)p->off.code_adaptive;

	/* Free-threaded 3.14+: each thread may run its own copy (co_tlbc). */
	if (p->free_threaded && p->off.frame_tlbc_index >= 0 && p->off.code_tlbc >= 0) {
		int32_t idx = i32_at(frame, p->off.frame_tlbc_index);
		uint64_t array = 0, entry = 0;

		if (idx > 0 && idx < 4096 &&
		    remote_read_u64(p->pid, code + (uint64_t)p->off.code_tlbc, &array) == 0 &&
		    remote_read_u64(p->pid, array + 8 + 8 * (uint64_t)idx, &entry) == 0 && entry)
			base = entry;
	}
	return base;
}

/*
 * Whether a 3.11+ frame is incomplete, as _PyFrame_IsIncomplete says
 * (shims are dealt with before): not owned by a generator, and its
 * instruction before the code's first traceable one (the RESUME after
 * the prologue that makes cells or the generator; an internal frame whose
 * code has no RESUME, like 3.13's _Py_InitCleanup, is never complete).
 * CPython's own tracebacks leave such frames out.
 */
static bool is_incomplete(struct py_process *p, const uint8_t *frame, uint64_t code,
			  int64_t instr_offset)
{
	struct py_code_fields f;
	int32_t first = 0;

	py_code_fields(p, &f);
	if (f.firsttraceable < 0 || p->rules->generator_owner < 0 || p->off.frame_owner < 0 ||
	    frame[p->off.frame_owner] == p->rules->generator_owner)
		return false;
	if (remote_read_i32(p->pid, code + (uint64_t)f.firsttraceable, &first) < 0)
		return false;
	return instr_offset < 2 * (int64_t)first;
}

static bool is_code_object(struct py_process *p, uint64_t code)
{
	uint64_t type = 0;

	return code && remote_read_u64(p->pid, code + (uint64_t)p->off.object_type, &type) == 0 &&
	       type == p->code_type;
}

int py_frames_read(struct py_process *p, uint64_t tstate, struct py_frame *out, size_t max,
		   bool *truncated)
{
	uint8_t buf[256];
	size_t span = frame_span(&p->off), n = 0;
	uint64_t frame;
	size_t steps = 0;
	int rc;

	*truncated = false;
	if (span > sizeof(buf)) {
		return py_process_fail(p, PY_FAIL_VALIDATION, "frame offsets out of range");
	}
	rc = py_frames_first(p, tstate, &frame);
	if (rc < 0)
		return py_process_read_failed(p, rc, "the thread state");
	while (frame) {
		struct py_frame *f;
		uint64_t code;

		if (n == max || ++steps > 2 * max + 64) {
			*truncated = true;
			break;
		}
		/* A chain that comes back to a frame already seen is corrupt. */
		for (size_t i = 0; i < n; i++)
			if (out[i].addr == frame) {
				*truncated = true;
				return (int)n;
			}
		f = &out[n];
		memset(f, 0, sizeof(*f));
		f->addr = frame;
		rc = remote_read(p->pid, frame, buf, span);
		if (rc < 0) {
			if (rc == -ESRCH)
				return py_process_read_failed(p, rc, "a frame");
			f->flags = PY_FRAME_UNREADABLE;
			n++;
			*truncated = true; /* cannot follow the chain past it */
			break;
		}
		code = u64_at(buf, p->off.frame_code);
		code &= ~p->rules->stackref_tag_mask;
		frame = u64_at(buf, p->off.frame_previous);
		if (p->rules->first_shim_owner && p->off.frame_owner >= 0 &&
		    buf[p->off.frame_owner] >= p->rules->first_shim_owner) {
			/* A shim: the Python frame inside it began an eval-loop run. */
			if (n > 0)
				out[n - 1].flags |= PY_FRAME_ENTRY;
			continue;
		}
		if (!is_code_object(p, code)) {
			f->flags = PY_FRAME_UNREADABLE;
			n++;
			continue;
		}
		f->code = code;
		if (p->rules->frame_model == PY_FRAMES_OBJECTS) {
			int32_t lasti = i32_at(buf, p->off.frame_instr);

			f->instr_offset = p->rules->instr_unit == PY_INSTR_LASTI_UNITS
						  ? (int64_t)lasti * 2 : lasti;
		} else {
			uint64_t instr = u64_at(buf, p->off.frame_instr);

			f->instr_offset = (int64_t)(instr - bytecode_base(p, buf, code));
			if (f->instr_offset > (1 << 26) || f->instr_offset < -2) {
				f->instr_offset = -1;
				f->flags |= PY_FRAME_BAD_INSTR;
			} else if (is_incomplete(p, buf, code, f->instr_offset)) {
				continue; /* left out, as in CPython's tracebacks */
			}
			if (p->off.frame_is_entry >= 0 && buf[p->off.frame_is_entry])
				f->flags |= PY_FRAME_ENTRY;
		}
		n++;
	}
	return (int)n;
}

static bool any_unreadable(const struct py_frame *f, int n)
{
	for (int i = 0; i < n; i++)
		if (f[i].flags & (PY_FRAME_UNREADABLE | PY_FRAME_BAD_INSTR))
			return true;
	return false;
}

/* Whether two walks found the same frames running the same code (where
 * each one is in its code may move on between them). */
static bool same_chain(const struct py_frame *a, int na, const struct py_frame *b, int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (a[i].addr != b[i].addr || a[i].code != b[i].code)
			return false;
	return true;
}

int py_frames_read_settled(struct py_process *p, uint64_t tstate, struct py_frame *out,
			   size_t max, bool *truncated)
{
	struct py_frame *again = max ? calloc(max, sizeof(*again)) : NULL;
	int n = py_frames_read(p, tstate, out, max, truncated);

	if (!again) /* out of memory: one walk, as good as it gets */
		return n;
	for (int look = 1; look < PY_FRAMES_LOOKS && n >= 0; look++) {
		bool more = false;
		int m = py_frames_read(p, tstate, again, max, &more);
		bool settled = m >= 0 && !any_unreadable(again, m) && more == *truncated &&
			       same_chain(out, n, again, m);

		if (m < 0)
			break;
		memcpy(out, again, (size_t)m * sizeof(*out));
		n = m;
		*truncated = more;
		if (settled)
			break;
	}
	free(again);
	return n;
}
