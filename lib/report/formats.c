/* SPDX-License-Identifier: Apache-2.0 */
#include "report/formats.h"

#include "report/pprof.h"
#include "report/speedscope.h"
#include "report/summary.h"
#include "report/svg.h"

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

int report_write(const struct report *rep, enum report_format fmt, FILE *out,
		 const char *unit, const char *tool)
{
	char title[256];

	switch (fmt) {
	case REPORT_TEXT:
		report_print_text(rep, out);
		report_print_summary(rep, unit, NULL, SUMMARY_PROCS, out);
		return 0;
	case REPORT_FOLDED:
		report_print_folded(rep, out);
		return 0;
	case REPORT_SVG:
		/* "pyprofile: CPU Flame Graph of PID 1234 (python3)" */
		snprintf(title, sizeof(title), "%s: %s Flame Graph%s%s", tool,
			 strcmp(unit, "samples") == 0   ? "CPU"
			 : strstr(tool, "--alloc")      ? "Outstanding Allocations (bytes)"
			 : strcmp(unit, "bytes") == 0   ? "Memory Growth (bytes)"
			 : strstr(tool, "--wall")       ? "Wall-Clock Time"
			 : strcmp(tool, "pygil") == 0   ? "GIL Wait Time"
			 : strstr(tool, "--gc")         ? "GC Pause Time"
							: "Off-CPU Time",
			 rep->target[0] ? " of " : "", rep->target);
		return report_write_svg(rep, out, title, unit);
	case REPORT_SPEEDSCOPE:
		return report_write_speedscope(rep, out, unit, tool);
	case REPORT_PPROF:
		return report_write_pprof(rep, out, unit);
	}
	return -1;
}
