/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/locals.h"

#include <stdio.h>
#include <string.h>

#include "cpython/code.h"
#include "sys/remote_mem.h"

#define NAMES_MAX 4096 /* a code object with more variables is garbage */

/* co_localspluskinds bits (Include/internal/pycore_code.h, 3.11+) */
#define FAST_HIDDEN 0x10
#define FAST_LOCAL 0x20
#define FAST_CELL 0x40
#define FAST_FREE 0x80

/* co_flags */
#define CO_VARARGS 0x04
#define CO_VARKEYWORDS 0x08

/* 3.14+: a _PyStackRef with both low bits set holds a small int. */
#define STACKREF_INT_TAG 3

const char *py_local_kind_name(enum py_local_kind kind)
{
	switch (kind) {
	case PY_LOCAL_ARG: return "arg";
	case PY_LOCAL_VAR: return "local";
	case PY_LOCAL_CELL: return "cell";
	case PY_LOCAL_FREE: return "free";
	}
	return "?";
}

/* The items of a tuple object (all of them, at most max); their count in *n. */
static int tuple_items(const struct py_objects *o, uint64_t tuple, uint64_t *items, size_t max,
		       size_t *n)
{
	int64_t length = 0;
	int got;

	*n = 0;
	if (!tuple)
		return 0; /* no such table in this frame's code */
	if (py_obj_type(o, tuple) != o->t_tuple)
		return -1;
	got = py_sequence(o, tuple, items, max, &length);
	if (got < 0 || length > NAMES_MAX || (uint64_t)length > max)
		return -1;
	*n = (size_t)got;
	return 0;
}

static int code_field_ptr(const struct py_objects *o, uint64_t code, int32_t off, uint64_t *v)
{
	*v = 0;
	if (off == PY_OFFSET_ABSENT)
		return -1;
	return remote_read_u64(o->p->pid, code + (uint64_t)off, v);
}

/* How many of the first variables are arguments. */
static size_t arg_count(const struct py_objects *o, uint64_t code)
{
	const struct py_offsets *f = &o->p->off;
	int32_t argc = 0, kwonly = 0, flags = 0;
	int32_t kw_off = f->code_kwonlyargcount, flags_off = f->code_flags;
	pid_t pid = o->p->pid;

	/* 3.13+ publish co_argcount only: co_flags precedes it and
	 * co_posonlyargcount, co_kwonlyargcount follow (cpython/code.h). */
	if (kw_off == PY_OFFSET_ABSENT && f->code_argcount != PY_OFFSET_ABSENT)
		kw_off = f->code_argcount + 8;
	if (flags_off == PY_OFFSET_ABSENT && f->code_argcount != PY_OFFSET_ABSENT)
		flags_off = f->code_argcount - 4;
	if (f->code_argcount == PY_OFFSET_ABSENT ||
	    remote_read_i32(pid, code + (uint64_t)f->code_argcount, &argc) < 0 ||
	    remote_read_i32(pid, code + (uint64_t)kw_off, &kwonly) < 0 ||
	    remote_read_i32(pid, code + (uint64_t)flags_off, &flags) < 0 || argc < 0 || kwonly < 0 ||
	    argc > NAMES_MAX || kwonly > NAMES_MAX)
		return 0;
	return (size_t)argc + (size_t)kwonly + !!(flags & CO_VARARGS) + !!(flags & CO_VARKEYWORDS);
}

/* A slot's object: tags of 3.14's stack references cleared, a cell
 * replaced by its content. *tagged_int set for a tagged small int. */
static uint64_t slot_object(const struct py_objects *o, uint64_t v, bool deref, bool *tagged_int)
{
	uint64_t mask = o->p->rules->stackref_tag_mask;

	*tagged_int = mask && (v & STACKREF_INT_TAG) == STACKREF_INT_TAG;
	if (*tagged_int)
		return v;
	v &= ~mask;
	if (v && deref && py_obj_type(o, v) == o->t_cell) {
		uint64_t content = 0;

		if (remote_read_u64(o->p->pid, v + (uint64_t)o->cell_ref, &content) < 0)
			return 0;
		return content;
	}
	return v;
}

static int read_name(const struct py_objects *o, uint64_t name, char *buf, size_t len)
{
	if (py_read_string(o->p, name, buf, len) < 0 || !buf[0])
		return -1;
	return 0;
}

static int frame_variables(const struct py_objects *o, const struct py_frame *f,
			   struct py_local *out, size_t max, bool full)
{
	const struct py_offsets *off = &o->p->off;
	uint64_t names[NAMES_MAX], values[NAMES_MAX];
	uint8_t kinds[NAMES_MAX];
	size_t n = 0, nargs, count = 0;
	pid_t pid = o->p->pid;

	if (!f->code || (f->flags & PY_FRAME_UNREADABLE) || off->frame_localsplus == PY_OFFSET_ABSENT)
		return -1;
	memset(kinds, FAST_LOCAL, sizeof(kinds));
	if (o->rules->has_localsplus) {
		uint64_t tup, kb;
		int64_t klen = 0;

		if (code_field_ptr(o, f->code, off->code_localsplusnames, &tup) < 0 ||
		    tuple_items(o, tup, names, NAMES_MAX, &n) < 0 ||
		    code_field_ptr(o, f->code, off->code_localspluskinds, &kb) < 0 ||
		    py_obj_type(o, kb) != o->t_bytes ||
		    remote_read(pid, kb + (uint64_t)off->bytes_size, &klen, 8) < 0 ||
		    klen != (int64_t)n ||
		    (n && remote_read(pid, kb + (uint64_t)off->bytes_data, kinds, n) < 0))
			return -1;
	} else {
		/* f_localsplus: co_varnames, then co_cellvars, then co_freevars */
		const int32_t tables[3] = { off->code_varnames, off->code_cellvars, off->code_freevars };
		const uint8_t kind_of[3] = { FAST_LOCAL, FAST_CELL, FAST_FREE };

		for (int t = 0; t < 3; t++) {
			uint64_t tup;
			size_t got;

			if (code_field_ptr(o, f->code, tables[t], &tup) < 0 ||
			    tuple_items(o, tup, names + n, NAMES_MAX - n, &got) < 0)
				return -1;
			memset(kinds + n, kind_of[t], got);
			n += got;
		}
	}
	if (n && remote_read(pid, f->addr + (uint64_t)off->frame_localsplus, values, n * 8) < 0)
		return -1;
	nargs = arg_count(o, f->code);
	for (size_t i = 0; i < n && count < max; i++) {
		struct py_local *l = &out[count];
		bool cell = kinds[i] & (FAST_CELL | FAST_FREE), tagged;
		uint64_t v;

		if (kinds[i] & FAST_HIDDEN)
			continue; /* an inlined comprehension's variable */
		v = slot_object(o, values[i], cell, &tagged);
		if (!v)
			continue; /* unbound */
		memset(l, 0, sizeof(*l));
		l->name_obj = names[i];
		if (full && read_name(o, names[i], l->name, sizeof(l->name)) < 0)
			snprintf(l->name, sizeof(l->name), "<unreadable name %zu>", i);
		l->kind = i < nargs ? PY_LOCAL_ARG
			  : (kinds[i] & FAST_FREE) ? PY_LOCAL_FREE
			  : (kinds[i] & FAST_CELL) ? PY_LOCAL_CELL
						   : PY_LOCAL_VAR;
		if (tagged) {
			snprintf(l->repr, sizeof(l->repr), "%lld", (long long)((int64_t)v >> 2));
		} else {
			l->value = v;
			if (full)
				py_obj_repr(o, v, l->repr, sizeof(l->repr));
		}
		count++;
	}
	return (int)count;
}

int py_frame_locals(const struct py_objects *o, const struct py_frame *f, struct py_local *out,
		    size_t max)
{
	return frame_variables(o, f, out, max, true);
}

int py_frame_values(const struct py_objects *o, const struct py_frame *f, struct py_local *out,
		    size_t max)
{
	return frame_variables(o, f, out, max, false);
}
