/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/code.h"

#include <stdlib.h>
#include <string.h>

#include "cpython/linetable.h"
#include "abi/py_abi.h"
#include "sys/bytes_at.h"
#include "sys/remote_mem.h"

static int read_bytes_object(struct py_process *p, uint64_t addr, uint8_t **data, size_t *len)
{
	uint64_t type = 0;
	int64_t size = 0;
	uint8_t *buf;

	*data = NULL;
	*len = 0;
	if (!addr || remote_read_u64(p->pid, addr + (uint64_t)p->off.object_type, &type) < 0 || type != p->bytes_type)
		return -1;
	if (remote_read(p->pid, addr + (uint64_t)p->off.bytes_size, &size, 8) < 0 || size < 0 ||
	    size > PY_LINETABLE_MAX)
		return -1;
	buf = malloc(size ? (size_t)size : 1);
	if (!buf)
		return -1;
	if (size && remote_read(p->pid, addr + (uint64_t)p->off.bytes_data, buf, (size_t)size) < 0) {
		free(buf);
		return -1;
	}
	*data = buf;
	*len = (size_t)size;
	return 0;
}

/* PYB_STR_IDENT of the str at ptr, read as the BPF walker reads it
 * (unreadable words count as 0). */
static uint64_t str_ident(struct py_process *p, uint64_t ptr)
{
	uint64_t meta[3] = { 0 }, tail = 0;
	unsigned ascii_bit = py_rules_str_ascii_bit(p->rules);

	if (p->off.unicode_length < 0 ||
	    remote_read(p->pid, ptr + (uint64_t)p->off.unicode_length, meta, sizeof(meta)) < 0)
		memset(meta, 0, sizeof(meta));
	if (((meta[2] >> ascii_bit) & 1) && meta[0] >= 8 &&
	    remote_read_u64(p->pid, ptr + (uint64_t)p->off.unicode_ascii_size + meta[0] - 8,
			    &tail) < 0)
		tail = 0;
	return PYB_STR_IDENT(ptr, meta[0], tail);
}

/* PYB_STR_IDENT of the line table (a bytes object) at ptr: its length and
 * first 8 bytes, read as the BPF walker reads them. */
static uint64_t lines_ident(struct py_process *p, uint64_t ptr)
{
	uint64_t meta[4] = { 0 };
	int32_t head_word = (p->off.bytes_data - p->off.bytes_size) / 8;

	if (p->off.bytes_size < 0 || head_word < 0 || head_word > 3 ||
	    remote_read(p->pid, ptr + (uint64_t)p->off.bytes_size, meta, sizeof(meta)) < 0)
		return PYB_STR_IDENT(ptr, 0, 0);
	return PYB_STR_IDENT(ptr, meta[0], PYB_BYTES_HEAD(meta[0], meta[head_word]));
}

void py_code_fields(const struct py_process *p, struct py_code_fields *f)
{
	const struct py_rules *r = p->rules;

	f->name = p->off.code_qualname >= 0 ? p->off.code_qualname : p->off.code_name;
	f->filename = p->off.code_filename;
	f->linetable = p->off.code_linetable;
	f->firstlineno = p->off.code_firstlineno;
	f->units = p->off.code_size; /* 3.11+: PY_OFFSET_FIELDS' code_size */
	f->version = r->version_before_filename ? p->off.code_filename - r->version_before_filename
						: -1;
	f->firsttraceable = r->firsttraceable_before_code && p->off.code_adaptive >= 0
				    ? p->off.code_adaptive - r->firsttraceable_before_code
				    : -1;
}

int py_code_identity_read(struct py_process *p, uint64_t code, struct py_code_identity *id)
{
	struct py_code_fields f;
	uint8_t head[512];
	int32_t end = 0;

	py_code_fields(p, &f);
	const int32_t need[] = { p->off.object_type, f.name, f.filename, f.linetable,
				 f.firstlineno };
	const int32_t fields[] = { p->off.object_type, f.name, f.filename, f.linetable,
				   f.firstlineno, f.units, f.version, f.firsttraceable };

	memset(id, 0, sizeof(*id));
	if (!code)
		return -1;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (need[i] < 0)
			return -1;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i] + 8 > end)
			end = fields[i] + 8;
	if (end > (int32_t)sizeof(head) || remote_read(p->pid, code, head, (size_t)end) < 0)
		return -1;
	id->type = u64_at(head, p->off.object_type);
	id->name = u64_at(head, f.name);
	id->filename = u64_at(head, f.filename);
	id->linetable = u64_at(head, f.linetable);
	id->firstlineno = i32_at(head, f.firstlineno);
	id->units = i32_at(head, f.units);
	id->version = i32_at(head, f.version);
	id->firsttraceable = i32_at(head, f.firsttraceable);
	id->ident = PYB_CODE_IDENT(str_ident(p, id->name), str_ident(p, id->filename),
				   lines_ident(p, id->linetable), id->firstlineno, id->units,
				   id->version);
	return 0;
}

int py_code_read(struct py_process *p, uint64_t code, struct py_code_info *ci)
{
	struct py_code_identity *id = &ci->ident;

	memset(ci, 0, sizeof(*ci));
	if (py_code_identity_read(p, code, id) < 0 || id->type != p->code_type)
		return -1;
	ci->firstlineno = id->firstlineno;
	if (py_read_string(p, id->name, ci->name, sizeof(ci->name)) < 0)
		strcpy(ci->name, "[unreadable name]");
	if (py_read_string(p, id->filename, ci->filename, sizeof(ci->filename)) < 0)
		strcpy(ci->filename, "[unreadable file]");
	if (read_bytes_object(p, id->linetable, &ci->linetable, &ci->linetable_len) < 0) {
		ci->linetable = NULL;
		ci->linetable_len = 0;
	}
	return 0;
}

void py_code_info_free(struct py_code_info *ci)
{
	free(ci->linetable);
	ci->linetable = NULL;
	ci->linetable_len = 0;
}

int py_code_line(const struct py_process *p, const struct py_code_info *ci, int64_t offset)
{
	if (!ci->linetable)
		return LINE_UNKNOWN;
	return linetable_line(p->rules->line_format, ci->linetable, ci->linetable_len, ci->firstlineno,
			      offset);
}
