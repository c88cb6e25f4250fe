// SPDX-License-Identifier: Apache-2.0
/*
 * lib/flamegraph_svg.c given hostile names: the output must stay a
 * well-formed XML document that browsers open: balanced tags, quoted
 * attributes, only the five predefined entities or character references,
 * no characters XML forbids, valid UTF-8. Input: rows, see fuzz_rows.h.
 */
#include <ctype.h>

#include "fuzz_rows.h"
#include "report/svg.h"

static const char *fail_at;

#define XML_CHECK(cond, at)                                                   \
	do {                                                                  \
		if (!(cond)) {                                                \
			fail_at = (at);                                       \
			return false;                                         \
		}                                                             \
	} while (0)

/* One UTF-8 character XML allows (tab, newline, CR, U+0020 up, no
 * surrogates, not U+FFFE/U+FFFF); returns its length or 0. */
static size_t xml_char(const unsigned char *p, const unsigned char *end)
{
	uint32_t cp;
	size_t n;

	if (*p < 0x80)
		return *p >= 0x20 || *p == '\t' || *p == '\n' || *p == '\r';
	n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 0;
	if (!n || *p > 0xf4 || (size_t)(end - p) < n)
		return 0;
	cp = *p & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

static bool entity(const char **p, const char *end)
{
	static const char *const names[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };

	for (size_t i = 0; i < 5; i++)
		if ((size_t)(end - *p) >= strlen(names[i]) &&
		    memcmp(*p, names[i], strlen(names[i])) == 0) {
			*p += strlen(names[i]);
			return true;
		}
	return false; /* the writer uses no character references */
}

static bool well_formed(const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	char stack[64][16];
	int depth = 0, roots = 0;

	for (const char *q = s; q < end;) {
		size_t n = xml_char((const unsigned char *)q, (const unsigned char *)end);

		XML_CHECK(n, q);
		q += n;
	}
	XML_CHECK(len > 5 && memcmp(s, "<?xml", 5) == 0, s);
	p = strstr(s, "?>");
	XML_CHECK(p, s);
	p += 2;
	while (p < end) {
		if (*p == '&') {
			XML_CHECK(entity(&p, end), p);
			continue;
		}
		if (*p != '<') {
			XML_CHECK(depth > 0 || strchr(" \t\r\n", *p), p);
			p++;
			continue;
		}
		if ((size_t)(end - p) > 9 && memcmp(p, "<![CDATA[", 9) == 0) {
			const char *close = strstr(p, "]]>");

			XML_CHECK(close && depth > 0, p);
			p = close + 3;
			continue;
		}
		if (p[1] == '/') {
			size_t n = strcspn(p + 2, ">");

			XML_CHECK(depth > 0 && p + 2 + n < end, p);
			depth--;
			XML_CHECK(strlen(stack[depth]) == n && memcmp(stack[depth], p + 2, n) == 0, p);
			p += n + 3;
			continue;
		}
		/* start tag: name, attributes name="value" */
		const char *name = ++p;
		size_t name_len;

		while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == ':'))
			p++;
		name_len = (size_t)(p - name);
		XML_CHECK(name_len > 0 && name_len < 16, name);
		for (;;) {
			while (p < end && *p == ' ')
				p++;
			XML_CHECK(p < end, p);
			if (*p == '>' || (*p == '/' && p + 1 < end && p[1] == '>'))
				break;
			while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == ':'))
				p++;
			XML_CHECK(p + 1 < end && p[0] == '=' && p[1] == '"', p);
			for (p += 2; p < end && *p != '"'; ) {
				XML_CHECK(*p != '<', p);
				if (*p == '&')
					XML_CHECK(entity(&p, end), p);
				else
					p++;
			}
			XML_CHECK(p < end, p);
			p++;
		}
		if (*p == '/') {
			p += 2;
			continue;
		}
		XML_CHECK(depth < 64, p);
		memcpy(stack[depth], name, name_len);
		stack[depth][name_len] = '\0';
		if (!depth)
			roots++;
		depth++;
		p++;
	}
	XML_CHECK(depth == 0 && roots == 1, end);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report rep;
	struct fuzz_out out;

	fuzz_rows_build(&rep, data, size);
	fuzz_out_open(&out);
	FUZZ_CHECK(report_write_svg(&rep, out.f, "pyprofile: CPU Flame Graph", "samples") == 0);
	fuzz_out_close(&out);
	if (!well_formed(out.buf, out.len)) {
		fprintf(stderr, "not well-formed XML at byte %zu: %.40s\n",
			(size_t)(fail_at - out.buf), fail_at);
		FUZZ_CHECK(!"SVG output is well-formed XML");
	}
	fuzz_out_free(&out);
	report_free(&rep);
	return 0;
}
