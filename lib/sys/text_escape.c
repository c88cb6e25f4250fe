/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/text_escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

size_t text_char_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n;
	uint32_t cp;

	if (u[0] < 0x80)
		return u[0] >= 0x20 && u[0] != 0x7f ? 1 : 0;
	n = u[0] >= 0xf0 ? 4 : u[0] >= 0xe0 ? 3 : u[0] >= 0xc2 ? 2 : 0;
	if (!n || u[0] > 0xf4)
		return 0; /* a continuation byte, an overlong lead or past U+10FFFF */
	cp = u[0] & (0x7fu >> n);
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0; /* also stops at the terminating NUL */
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if ((n == 2 && cp < 0xa0) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0; /* C1 controls, overlong forms, surrogates */
	return n;
}

/* The 4-byte "\xHH" of byte c. */
static void hex_escape(unsigned char c, char esc[4])
{
	static const char hex[] = "0123456789abcdef";

	esc[0] = '\\';
	esc[1] = 'x';
	esc[2] = hex[c >> 4];
	esc[3] = hex[c & 15];
}

size_t text_escape(char *dst, size_t len, const char *src, const char *also_escape)
{
	size_t used = 0, kept = 0; /* the whole escaped length, what fits in dst */
	bool full = false;

	for (const char *s = src; *s;) {
		size_t n = text_char_len(s), plen = n;
		const char *piece = s;
		char esc[4];

		if (n == 1 && also_escape && strchr(also_escape, *s))
			n = 0;
		if (!n) {
			hex_escape((unsigned char)*s, esc);
			piece = esc;
			plen = 4;
			n = 1;
		}
		if (!full && used + plen < len) {
			memcpy(dst + used, piece, plen);
			kept = used + plen;
		} else {
			full = true;
		}
		used += plen;
		s += n;
	}
	if (len)
		dst[kept] = '\0';
	return used;
}

void text_escape_write(FILE *out, const char *src)
{
	for (const char *s = src; *s;) {
		size_t n = text_char_len(s);
		char esc[4];

		if (n) {
			fwrite(s, 1, n, out);
			s += n;
			continue;
		}
		hex_escape((unsigned char)*s++, esc);
		fwrite(esc, 1, sizeof(esc), out);
	}
}

const char *text_escaped(char *buf, size_t len, const char *src)
{
	text_escape(buf, len, src ? src : "(null)", NULL);
	return buf;
}
