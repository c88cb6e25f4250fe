/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/bpf_layout.h"

#include <string.h>

void py_bpf_layout(const struct py_process *p, struct pyb_layout *l)
{
	int32_t span = 0, name_off;

	memset(l, 0, sizeof(*l));
#define COPY_FIELD(name, ...) l->name = p->off.name;
	PY_OFFSET_FIELDS(COPY_FIELD)
#undef COPY_FIELD
	l->minor = (uint32_t)p->version.minor;
	l->frame_model = p->rules->frame_model == PY_FRAMES_OBJECTS  ? PYB_FRAMES_OBJECTS
			 : p->rules->frame_model == PY_FRAMES_CFRAME ? PYB_FRAMES_CFRAME
								     : PYB_FRAMES_CURRENT;
	int32_t fields[] = { p->off.frame_previous, p->off.frame_code, p->off.frame_instr,
			     p->off.frame_owner, p->off.frame_is_entry };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i] + 8 > span)
			span = fields[i] + 8;
	l->frame_span = (uint32_t)span;
	l->stackref_mask = (uint32_t)p->rules->stackref_tag_mask;
	l->lasti_scale = p->rules->instr_unit == PY_INSTR_LASTI_UNITS ? 2 : 1;
	l->owner_shim = (uint32_t)p->rules->first_shim_owner;
	l->str_ascii_bit = py_rules_str_ascii_bit(p->rules);
	name_off = p->off.code_qualname >= 0 ? p->off.code_qualname : p->off.code_name;
	l->code_ptrs_at = (uint32_t)(name_off < p->off.code_filename ? name_off : p->off.code_filename);
	for (int32_t i = 0; i < 3; i++) {
		l->name_sel[i] = name_off - (int32_t)l->code_ptrs_at == 8 * i ? -1 : 0;
		l->file_sel[i] = p->off.code_filename - (int32_t)l->code_ptrs_at == 8 * i ? -1 : 0;
	}
}
