/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/offsets.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Generated at build time from offsets/cpython-3.N.offsets. */
extern const char *const py_builtin_tables[];

static const char *const field_names[] = {
#define PY_OFFSET_NAME(name) #name,
	PY_OFFSET_FIELDS(PY_OFFSET_NAME)
#undef PY_OFFSET_NAME
};

#define FIELD_COUNT (sizeof(field_names) / sizeof(field_names[0]))

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
	return i < FIELD_COUNT ? field_names[i] : NULL;
}

int32_t py_offsets_value_at(const struct py_offsets *o, size_t i)
{
	return i < FIELD_COUNT ? ((const int32_t *)o)[i] : PY_OFFSET_ABSENT;
}

int32_t *py_offsets_field(struct py_offsets *o, const char *name)
{
	for (size_t i = 0; i < FIELD_COUNT; i++)
		if (strcmp(field_names[i], name) == 0)
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

const char *py_offsets_missing(const struct py_offsets *o, int minor)
{
	/* Fields every walker needs, then the ones tied to a version range. */
	static const struct {
		const char *name;
		int first_minor, last_minor;
	} required[] = {
		{ "runtime_interpreters_head", 8, 99 },
		{ "interp_next", 8, 99 },
		{ "interp_threads_head", 8, 99 },
		{ "tstate_next", 8, 99 },
		{ "tstate_interp", 8, 99 },
		{ "tstate_frame", 8, 99 },
		{ "tstate_thread_id", 8, 99 },
		{ "frame_previous", 8, 99 },
		{ "frame_code", 8, 99 },
		{ "frame_instr", 8, 99 },
		{ "code_filename", 8, 99 },
		{ "code_name", 8, 99 },
		{ "code_firstlineno", 8, 99 },
		{ "code_linetable", 8, 99 },
		{ "object_type", 8, 99 },
		{ "bytes_size", 8, 99 },
		{ "bytes_data", 8, 99 },
		{ "unicode_length", 8, 99 },
		{ "unicode_state", 8, 99 },
		{ "unicode_ascii_size", 8, 99 },
		{ "unicode_compact_size", 8, 99 },
		{ "cframe_current_frame", 11, 12 },
		{ "tstate_native_thread_id", 11, 99 },
		{ "frame_owner", 11, 99 },
		{ "frame_is_entry", 11, 11 },
		{ "code_qualname", 11, 99 },
		{ "code_adaptive", 11, 99 },
	};
	struct py_offsets copy = *o;

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (minor < required[i].first_minor || minor > required[i].last_minor)
			continue;
		if (*py_offsets_field(&copy, required[i].name) == PY_OFFSET_ABSENT)
			return required[i].name;
	}
	return NULL;
}
