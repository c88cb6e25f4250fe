/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/code_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/linetable.h"
#include "cpython/code.h"

void code_names_init(struct code_names *c)
{
	memset(c, 0, sizeof(*c));
}

void code_names_free(struct code_names *c)
{
	for (size_t i = 0; i < c->cap; i++) {
		free(c->slots[i].name);
		free(c->slots[i].filename);
		free(c->slots[i].linetable);
	}
	free(c->slots);
	memset(c, 0, sizeof(*c));
}

static size_t slot_hash(pid_t pid, uint64_t code, uint64_t ident, size_t cap)
{
	uint64_t h = (code ^ (ident << 7) ^ ((uint64_t)pid << 40)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 17) & (cap - 1);
}

static struct code_name *lookup(struct code_names *c, pid_t pid, uint64_t code, uint64_t ident,
				 bool insert)
{
	if (insert && (c->count + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct code_name *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return NULL;
		for (size_t i = 0; i < c->cap; i++) {
			size_t j;

			if (!c->slots[i].used)
				continue;
			for (j = slot_hash(c->slots[i].pid, c->slots[i].code, c->slots[i].ident, cap);
			     slots[j].used;
			     j = (j + 1) & (cap - 1))
				;
			slots[j] = c->slots[i];
		}
		free(c->slots);
		c->slots = slots;
		c->cap = cap;
	}
	if (!c->cap)
		return NULL;
	for (size_t j = slot_hash(pid, code, ident, c->cap);; j = (j + 1) & (c->cap - 1)) {
		struct code_name *e = &c->slots[j];

		if (!e->used) {
			if (!insert)
				return NULL;
			e->used = true;
			e->pid = pid;
			e->code = code;
			e->ident = ident;
			c->count++;
			return e;
		}
		if (e->pid == pid && e->code == code && e->ident == ident)
			return e;
	}
}

struct code_name *code_names_find(struct code_names *c, pid_t pid, uint64_t code,
				  uint64_t ident)
{
	return lookup(c, pid, code, ident, false);
}

struct code_name *code_names_get(struct code_names *c, struct py_process *p, uint64_t code,
				 uint64_t ident)
{
	struct code_name *e = lookup(c, p->pid, code, ident, true);
	struct py_code_info ci;

	if (!e || e->resolved)
		return e;
	if (py_code_read(p, code, &ci) < 0) {
		c->unresolved++;
		return e;
	}
	if (ci.ident.ident != ident) {
		/* freed since the sample; another object lives there now */
		py_code_info_free(&ci);
		c->unresolved++;
		return e;
	}
	e->name = strdup(ci.name);
	e->filename = strdup(ci.filename);
	e->firstlineno = ci.firstlineno;
	e->linetable = ci.linetable; /* ownership moves to the cache */
	e->linetable_len = ci.linetable_len;
	e->line_format = p->rules->line_format;
	e->resolved = e->name && e->filename;
	return e;
}

int code_name_line(const struct code_name *e, int64_t instr_offset)
{
	return e->linetable ? linetable_line(e->line_format, e->linetable, e->linetable_len,
					     e->firstlineno, instr_offset)
			    : LINE_UNKNOWN;
}

void code_name_format(const struct code_name *e, int64_t instr_offset, char *buf, size_t len)
{
	int line;

	if (!e || !e->resolved) {
		snprintf(buf, len, "[unknown code 0x%llx]", e ? (unsigned long long)e->code : 0ULL);
		return;
	}
	line = code_name_line(e, instr_offset);
	if (line >= 0)
		snprintf(buf, len, "%s (%s:%d)", e->name, e->filename, line);
	else
		snprintf(buf, len, "%s (%s:?)", e->name, e->filename);
}
