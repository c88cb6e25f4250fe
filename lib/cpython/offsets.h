/* SPDX-License-Identifier: Apache-2.0 */
/* The struct offsets a CPython frame walker needs, for one interpreter build. */
#ifndef PYBPF_PY_OFFSETS_H
#define PYBPF_PY_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/py_offset_fields.h"

#define PY_OFFSET_ABSENT (-1)

struct py_offsets {
#define PY_OFFSET_MEMBER(name, ...) int32_t name;
	PY_OFFSET_FIELDS(PY_OFFSET_MEMBER)
#undef PY_OFFSET_MEMBER
};

/* PY_OFF_<field>: a field's place in PY_OFFSET_FIELDS. */
enum py_offset_index {
#define PY_OFFSET_INDEX(name, ...) PY_OFF_##name,
	PY_OFFSET_FIELDS(PY_OFFSET_INDEX)
#undef PY_OFFSET_INDEX
	PY_OFF_COUNT
};

/* Where a set of offsets came from, best first. */
enum py_offsets_source {
	PY_OFFSETS_NONE = 0,
	PY_OFFSETS_DEBUG, /* the process's own _Py_DebugOffsets (3.13+) */
	PY_OFFSETS_DWARF, /* debug information of the interpreter binary */
	PY_OFFSETS_TABLE, /* built-in table generated from headers */
};

const char *py_offsets_source_name(enum py_offsets_source src);

/* Sets every field to PY_OFFSET_ABSENT. */
void py_offsets_clear(struct py_offsets *o);

/* Field access by name, for parsers and diagnostics. Returns NULL if unknown. */
int32_t *py_offsets_field(struct py_offsets *o, const char *name);
size_t py_offsets_count(void);
const char *py_offsets_name_at(size_t i);
int32_t py_offsets_value_at(const struct py_offsets *o, size_t i);
int32_t *py_offsets_field_at(struct py_offsets *o, size_t i); /* i < PY_OFF_COUNT */

/*
 * Parses a table in the offsets/ text format ("version 3.N" then
 * "field value" lines, '#' comments). Returns 0 and fills *minor, or -1
 * with a message in err.
 */
int py_offsets_parse_table(const char *text, struct py_offsets *o, int *minor,
			   char *err, size_t errlen);

/* Loads the built-in table for 3.minor; -1 if there is none. */
int py_offsets_builtin_table(int minor, struct py_offsets *o);

/*
 * Checks that a set of offsets has what a walker of that minor version
 * needs (the ranges of PY_OFFSET_FIELDS). Returns NULL if complete, else
 * the name of the first missing field.
 */
const char *py_offsets_missing(const struct py_offsets *o, int minor);

/* Whether the walker of 3.minor needs field i (PY_OFFSET_FIELDS order). */
bool py_offsets_required(size_t i, int minor);

/* The _Py_DebugOffsets field ("section.field") field i is read from, or
 * NULL when it is not published there. */
const char *py_offsets_debug_slot(size_t i);

/*
 * The first field both sets give with different values (PY_OFFSET_ABSENT
 * in either: not compared), its values in *va and *vb; NULL if they agree.
 */
const char *py_offsets_disagreement(const struct py_offsets *a, const struct py_offsets *b,
				    int32_t *va, int32_t *vb);

#endif
