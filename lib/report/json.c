/* SPDX-License-Identifier: Apache-2.0 */
#include "report/json.h"

#include "sys/text_escape.h"

/*
 * Valid UTF-8 is kept but for the controls (C0, DEL, C1), written as
 * \u00XX so that a document cat to a terminal prints none of them; a byte
 * that is not UTF-8 (names come from hostile processes) becomes U+FFFD.
 */
void json_write_raw(FILE *out, const char *s)
{
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n = text_char_len(s);

		if (n) {
			if (c == '"' || c == '\\')
				fputc('\\', out);
			fwrite(s, 1, n, out);
			s += n;
		} else if (c < 0x80) {
			fprintf(out, "\\u%04x", c);
			s++;
		} else if (c == 0xc2 && ((unsigned char)s[1] & 0xe0) == 0x80) {
			fprintf(out, "\\u%04x", (unsigned char)s[1]); /* U+0080-U+009F */
			s += 2;
		} else {
			fputs("\\ufffd", out);
			s++;
		}
	}
}

void json_write_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	json_write_raw(out, s);
	fputc('"', out);
}
