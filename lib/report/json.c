/* SPDX-License-Identifier: Apache-2.0 */
#include "report/json.h"

void json_write_raw(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
}

void json_write_string(FILE *out, const char *s)
{
	fputc('"', out);
	json_write_raw(out, s);
	fputc('"', out);
}
