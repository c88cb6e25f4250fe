// SPDX-License-Identifier: Apache-2.0
/*
 * lib/report/speedscope.c (and json_write_string) given hostile names: the output
 * must be one well-formed JSON document (RFC 8259 grammar; byte values
 * above 0x7f are taken as they are). Input: rows, see fuzz_rows.h.
 */
#include <ctype.h>

#include "fuzz_rows.h"
#include "report/speedscope.h"

struct json {
	const char *p, *end;
	int depth;
};

static void ws(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static bool lit(struct json *j, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n) != 0)
		return false;
	j->p += n;
	return true;
}

static bool string(struct json *j)
{
	if (!lit(j, "\""))
		return false;
	while (j->p < j->end) {
		unsigned char c = (unsigned char)*j->p++;

		if (c == '"')
			return true;
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (j->p >= j->end)
			return false;
		c = (unsigned char)*j->p++;
		if (c == 'u') {
			for (int i = 0; i < 4; i++)
				if (j->p >= j->end || !isxdigit((unsigned char)*j->p++))
					return false;
		} else if (!strchr("\"\\/bfnrt", c) || !c) {
			return false;
		}
	}
	return false;
}

static bool number(struct json *j)
{
	const char *start = j->p;

	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (j->p < j->end && *j->p >= '1' && *j->p <= '9')
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	else
		return false;
	return j->p > start; /* speedscope's numbers are integers */
}

static bool value(struct json *j);

static bool members(struct json *j, char close, bool object)
{
	ws(j);
	if (lit(j, (char[]){ close, 0 }))
		return true;
	for (;;) {
		ws(j);
		if (object) {
			if (!string(j))
				return false;
			ws(j);
			if (!lit(j, ":"))
				return false;
		}
		if (!value(j))
			return false;
		ws(j);
		if (lit(j, (char[]){ close, 0 }))
			return true;
		if (!lit(j, ","))
			return false;
	}
}

static bool value(struct json *j)
{
	bool ok, object;

	ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{':
	case '[':
		if (++j->depth > 64)
			return false;
		object = *j->p++ == '{';
		ok = members(j, object ? '}' : ']', object);
		j->depth--;
		return ok;
	case '"':
		return string(j);
	default:
		return number(j) || lit(j, "true") || lit(j, "false") || lit(j, "null");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report rep;
	struct fuzz_out out;
	struct json j;

	fuzz_rows_build(&rep, data, size);
	fuzz_out_open(&out);
	FUZZ_CHECK(report_write_speedscope(&rep, out.f, size & 1 ? "us" : "samples",
					   "pyprofile") == 0);
	fuzz_out_close(&out);
	j.p = out.buf;
	j.end = out.buf + out.len;
	j.depth = 0;
	if (!value(&j) || (ws(&j), j.p != j.end)) {
		fprintf(stderr, "not JSON at byte %zu: %.60s\n", (size_t)(j.p - out.buf), j.p);
		FUZZ_CHECK(!"speedscope output is JSON");
	}
	fuzz_out_free(&out);
	report_free(&rep);
	return 0;
}
