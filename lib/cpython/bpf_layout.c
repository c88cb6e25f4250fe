/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/bpf_layout.h"

#include <stdint.h>
#include <string.h>

#include "cpython/code.h"

/* The window of code object bytes the walker reads per frame: from the
 * first of the fields (8-aligned) to the end of the last. */
static void code_window(const struct py_process *p, struct pyb_layout *l)
{
	struct py_code_fields f;
	int32_t lo = INT32_MAX, hi = 0;

	py_code_fields(p, &f);
	const int32_t at[] = { f.name, f.filename, f.linetable, f.firstlineno, f.units,
			       f.version, f.firsttraceable };
	int32_t *rel[] = { &l->cw_name, &l->cw_file, &l->cw_lines, &l->cw_firstline,
			   &l->cw_units, &l->cw_version, &l->cw_traceable };

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		if (at[i] < 0)
			continue;
		if (at[i] < lo)
			lo = at[i];
		if (at[i] + 8 > hi)
			hi = at[i] + 8;
	}
	lo &= ~7;
	l->cw_at = (uint32_t)lo;
	l->cw_span = (uint32_t)(hi - lo);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		*rel[i] = at[i] < 0 ? -1 : at[i] - lo;
}

void py_bpf_layout(const struct py_process *p, struct pyb_layout *l)
{
	int32_t span = 0;
	/* 3.11's frame function, only once checked (cpython/func_versions.h) */
	int32_t frame_func = p->func_versions ? p->off.frame_func : -1;

	memset(l, 0, sizeof(*l));
#define COPY_FIELD(name, ...) l->name = p->off.name;
	PY_OFFSET_FIELDS(COPY_FIELD)
#undef COPY_FIELD
	l->minor = (uint32_t)p->version.minor;
	l->frame_model = p->rules->frame_model == PY_FRAMES_OBJECTS  ? PYB_FRAMES_OBJECTS
			 : p->rules->frame_model == PY_FRAMES_CFRAME ? PYB_FRAMES_CFRAME
								     : PYB_FRAMES_CURRENT;
	int32_t fields[] = { p->off.frame_previous, p->off.frame_code, p->off.frame_instr,
			     p->off.frame_owner, p->off.frame_is_entry, frame_func };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i] + 8 > span)
			span = fields[i] + 8;
	l->frame_span = (uint32_t)span;
	l->stackref_mask = (uint32_t)p->rules->stackref_tag_mask;
	l->lasti_scale = p->rules->instr_unit == PY_INSTR_LASTI_UNITS ? 2 : 1;
	l->owner_shim = (uint32_t)p->rules->first_shim_owner;
	l->owner_generator = (uint32_t)p->rules->generator_owner;
	l->str_ascii_bit = py_rules_str_ascii_bit(p->rules);
	code_window(p, l);
	if (frame_func < 0)
		l->frame_func = l->func_code = l->func_version = -1;
	l->lines_head_word = (uint32_t)(p->off.bytes_data - p->off.bytes_size) / 8;
}
