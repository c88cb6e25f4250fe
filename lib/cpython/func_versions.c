/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/func_versions.h"

#include <string.h>

#include "sys/remote_mem.h"

/* Bytes of a function read at once: from its start to past its version. */
#define FUNC_READ 192

bool py_func_versions_possible(const struct py_process *p)
{
	const struct py_offsets *o = &p->off;

	return p->function_type && o->frame_func >= 0 && o->func_code >= 0 && o->object_type >= 0 &&
	       o->func_version >= 16 && o->func_version + 8 <= FUNC_READ &&
	       o->func_code + 8 <= FUNC_READ && o->func_code < o->func_version &&
	       !(o->func_code & 7) && !(o->func_version & 7) && !(o->frame_func & 7);
}

static uint64_t word(const uint8_t *buf, int32_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

void py_func_tally_frame(struct py_process *p, const struct py_frame *f, struct py_func_tally *t)
{
	const struct py_offsets *o = &p->off;
	uint8_t buf[FUNC_READ];
	uint64_t func = 0, call;

	if (!py_func_versions_possible(p) || (f->flags & PY_FRAME_UNREADABLE) || !f->code)
		return;
	if (remote_read_u64(p->pid, f->addr + (uint64_t)o->frame_func, &func) < 0 || !func ||
	    (func & 7) || remote_read(p->pid, func, buf, (size_t)o->func_version + 8) < 0) {
		t->bad++;
		return;
	}
	call = word(buf, o->func_version - 8);
	if (word(buf, o->object_type) != p->function_type || word(buf, o->func_code) != f->code ||
	    !call || (t->vectorcall && call != t->vectorcall)) {
		t->bad++;
		return;
	}
	t->vectorcall = call;
	t->good++;
}

void py_func_tally_settle(struct py_process *p, const struct py_func_tally *t)
{
	p->func_versions = t->good > 0 && t->bad * 4 <= t->good;
}
