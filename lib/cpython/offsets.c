/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/offsets.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Generated at build time from offsets/cpython-3.N.offsets. */
extern const char *const py_builtin_tables[];

/* PY_OFFSET_FIELDS as a table. */
static const struct {
	const char *name;
	int first_minor, last_minor; /* needed by the walker of these */
	const char *debug_slot;      /* in _Py_DebugOffsets, or NULL */
} fields[] = {
#define PY_OFFSET_ROW(name, first, last, slot) { #name, first, last, slot },
	PY_OFFSET_FIELDS(PY_OFFSET_ROW)
#undef PY_OFFSET_ROW
};

#define FIELD_COUNT (sizeof(fields) / sizeof(fields[0]))
_Static_assert(sizeof(struct py_offsets) == FIELD_COUNT * sizeof(int32_t) &&
		       FIELD_COUNT == PY_OFF_COUNT,
	       "struct py_offsets is the field list, nothing else");

const char *py_offsets_source_name(enum py_offsets_source src)
{
	switch (src) {
	case PY_OFFSETS_DEBUG:
		return "debug offsets";
	case PY_OFFSETS_DWARF:
		return "dwarf";
	case PY_OFFSETS_TABLE:
		return "table";
	case PY_OFFSETS_NONE:
		break;
	}
	return "none";
}

void py_offsets_clear(struct py_offsets *o)
{
	int32_t *v = (int32_t *)o;

	for (size_t i = 0; i < FIELD_COUNT; i++)
		v[i] = PY_OFFSET_ABSENT;
}

size_t py_offsets_count(void)
{
	return FIELD_COUNT;
}

const char *py_offsets_name_at(size_t i)
{
	return i < FIELD_COUNT ? fields[i].name : NULL;
}

int32_t py_offsets_value_at(const struct py_offsets *o, size_t i)
{
	return i < FIELD_COUNT ? ((const int32_t *)o)[i] : PY_OFFSET_ABSENT;
}

int32_t *py_offsets_field_at(struct py_offsets *o, size_t i)
{
	return i < FIELD_COUNT ? (int32_t *)o + i : NULL;
}

int32_t *py_offsets_field(struct py_offsets *o, const char *name)
{
	for (size_t i = 0; i < FIELD_COUNT; i++)
		if (strcmp(fields[i].name, name) == 0)
			return (int32_t *)o + i;
	return NULL;
}

static int parse_version_line(const char *value, int *minor)
{
	char *end;
	long major, min;

	errno = 0;
	major = strtol(value, &end, 10);
	if (errno || *end != '.' || major != 3)
		return -1;
	min = strtol(end + 1, &end, 10);
	if (errno || min < 0 || min > 99 || (*end && !isspace((unsigned char)*end)))
		return -1;
	*minor = (int)min;
	return 0;
}

int py_offsets_parse_table(const char *text, struct py_offsets *o, int *minor,
			   char *err, size_t errlen)
{
	int lineno = 0;
	const char *p = text;

	py_offsets_clear(o);
	*minor = -1;
	while (*p) {
		char line[256], key[64], value[64];
		size_t n = strcspn(p, "\n");

		lineno++;
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "line %d too long", lineno);
			return -1;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (p[n] == '\n');
		if (line[0] == '#' || strspn(line, " \t\r") == n)
			continue;
		if (sscanf(line, "%63s %63s", key, value) != 2) {
			snprintf(err, errlen, "line %d: expected 'field value'", lineno);
			return -1;
		}
		if (strcmp(key, "version") == 0) {
			if (parse_version_line(value, minor) < 0) {
				snprintf(err, errlen, "line %d: bad version '%s'", lineno, value);
				return -1;
			}
			continue;
		}
		int32_t *field = py_offsets_field(o, key);
		char *end;
		long v;

		if (!field) {
			snprintf(err, errlen, "line %d: unknown field '%s'", lineno, key);
			return -1;
		}
		errno = 0;
		v = strtol(value, &end, 10);
		if (errno || *end || v < 0 || v > 1 << 20) {
			snprintf(err, errlen, "line %d: bad offset '%s'", lineno, value);
			return -1;
		}
		*field = (int32_t)v;
	}
	if (*minor < 0) {
		snprintf(err, errlen, "no 'version' line");
		return -1;
	}
	return 0;
}

int py_offsets_builtin_table(int minor, struct py_offsets *o)
{
	for (size_t i = 0; py_builtin_tables[i]; i++) {
		char err[128];
		int table_minor;

		if (py_offsets_parse_table(py_builtin_tables[i], o, &table_minor, err,
					   sizeof(err)) == 0 &&
		    table_minor == minor)
			return 0;
	}
	py_offsets_clear(o);
	return -1;
}

bool py_offsets_required(size_t i, int minor)
{
	return i < FIELD_COUNT && fields[i].first_minor && minor >= fields[i].first_minor &&
	       minor <= fields[i].last_minor;
}

const char *py_offsets_debug_slot(size_t i)
{
	return i < FIELD_COUNT ? fields[i].debug_slot : NULL;
}

const char *py_offsets_missing(const struct py_offsets *o, int minor)
{
	for (size_t i = 0; i < FIELD_COUNT; i++)
		if (py_offsets_required(i, minor) && py_offsets_value_at(o, i) == PY_OFFSET_ABSENT)
			return fields[i].name;
	return NULL;
}

const char *py_offsets_disagreement(const struct py_offsets *a, const struct py_offsets *b,
				    int32_t *va, int32_t *vb)
{
	for (size_t i = 0; i < FIELD_COUNT; i++) {
		*va = py_offsets_value_at(a, i);
		*vb = py_offsets_value_at(b, i);
		if (*va != PY_OFFSET_ABSENT && *vb != PY_OFFSET_ABSENT && *va != *vb)
			return fields[i].name;
	}
	return NULL;
}
