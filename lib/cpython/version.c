/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/version.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void py_version_from_hex(uint64_t hex, struct py_version *v)
{
	v->major = (int)((hex >> 24) & 0xff);
	v->minor = (int)((hex >> 16) & 0xff);
	v->micro = (int)((hex >> 8) & 0xff);
	v->level = (int)((hex >> 4) & 0xf);
	v->serial = (int)(hex & 0xf);
}

uint32_t py_version_hex(const struct py_version *v)
{
	return (uint32_t)v->major << 24 | (uint32_t)v->minor << 16 | (uint32_t)v->micro << 8 |
	       (uint32_t)v->level << 4 | (uint32_t)v->serial;
}

static int read_num(const char *s, size_t len, size_t *i, int *out)
{
	int n = 0;
	size_t start = *i;

	while (*i < len && isdigit((unsigned char)s[*i]) && *i - start < 3)
		n = n * 10 + (s[(*i)++] - '0');
	if (*i == start)
		return -1;
	*out = n;
	return 0;
}

int py_version_parse(const char *s, size_t len, struct py_version *v)
{
	size_t i = 0;

	memset(v, 0, sizeof(*v));
	v->level = 0xf;
	if (read_num(s, len, &i, &v->major) || i >= len || s[i++] != '.' ||
	    read_num(s, len, &i, &v->minor) || i >= len || s[i++] != '.' ||
	    read_num(s, len, &i, &v->micro))
		return -1;
	if (i < len && (s[i] == 'a' || s[i] == 'b' || s[i] == 'r')) {
		if (s[i] == 'r') {
			if (i + 1 >= len || s[i + 1] != 'c')
				return -1;
			v->level = 0xc;
			i += 2;
		} else {
			v->level = s[i] == 'a' ? 0xa : 0xb;
			i++;
		}
		if (read_num(s, len, &i, &v->serial))
			return -1;
	}
	if (i < len && s[i] == '+')
		i++;
	return i == len && v->major >= 2 && v->major <= 3 ? 0 : -1;
}

void py_version_format(const struct py_version *v, char *buf, size_t len)
{
	const char *level = v->level == 0xa ? "a" : v->level == 0xb ? "b" : v->level == 0xc ? "rc" : "";

	if (v->micro < 0)
		snprintf(buf, len, "%d.%d", v->major, v->minor);
	else if (*level)
		snprintf(buf, len, "%d.%d.%d%s%d", v->major, v->minor, v->micro, level, v->serial);
	else
		snprintf(buf, len, "%d.%d.%d", v->major, v->minor, v->micro);
}

int py_version_from_filename(const char *base, int *major, int *minor, bool *free_threaded)
{
	const char *p;
	int ma, mi, n = 0;

	if (strncmp(base, "libpython", 9) == 0)
		p = base + 9;
	else if (strncmp(base, "python", 6) == 0)
		p = base + 6;
	else
		return -1;
	if (sscanf(p, "%d.%d%n", &ma, &mi, &n) != 2 || ma < 2 || ma > 3 || mi < 0 || mi > 99)
		return -1;
	p += n;
	/* ABI flags: d (debug), m (pymalloc, <3.8), t (free-threaded, 3.13+) */
	*free_threaded = false;
	while (*p == 'd' || *p == 'm' || *p == 't' || *p == 'u')
		if (*p++ == 't')
			*free_threaded = true;
	if (*p && *p != '.' && *p != '-')
		return -1;
	*major = ma;
	*minor = mi;
	return 0;
}

bool py_version_supported(const struct py_version *v)
{
	return v->major == 3 && v->minor >= PY_MINOR_FIRST_SUPPORTED &&
	       v->minor <= PY_MINOR_LAST_SUPPORTED;
}
