/* SPDX-License-Identifier: Apache-2.0 */
#include "report_formats.h"

#include <stdlib.h>
#include <string.h>

int report_format_parse(const char *name, enum report_format *fmt)
{
	static const struct {
		const char *name;
		enum report_format fmt;
	} names[] = {
		{ "text", REPORT_TEXT },
		{ "folded", REPORT_FOLDED },
		{ "svg", REPORT_SVG },
		{ "speedscope", REPORT_SPEEDSCOPE },
		{ "pprof", REPORT_PPROF },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i].name) == 0) {
			*fmt = names[i].fmt;
			return 0;
		}
	return -1;
}

int report_write(const struct stack_report *rep, enum report_format fmt, FILE *out,
		 const char *unit, const char *tool)
{
	char title[128];

	switch (fmt) {
	case REPORT_TEXT:
		stack_report_print_text(rep, out);
		return 0;
	case REPORT_FOLDED:
		stack_report_print_folded(rep, out);
		return 0;
	case REPORT_SVG:
		snprintf(title, sizeof(title), "%s: %s", tool,
			 strcmp(unit, "samples") == 0 ? "CPU Flame Graph"
						      : "Off-CPU Time Flame Graph");
		return report_write_svg(rep, out, title, unit);
	case REPORT_SPEEDSCOPE:
		return report_write_speedscope(rep, out, unit, tool);
	case REPORT_PPROF:
		return report_write_pprof(rep, out, unit);
	}
	return -1;
}

void json_write_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}
