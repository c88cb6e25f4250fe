/* SPDX-License-Identifier: Apache-2.0 */
/* Writing a stack report in each format the tools offer. */
#ifndef PYBPF_REPORT_FORMATS_H
#define PYBPF_REPORT_FORMATS_H

#include <stdio.h>

#include "report/rows.h"

enum report_format {
	REPORT_TEXT,
	REPORT_FOLDED,
	REPORT_SVG,
	REPORT_SPEEDSCOPE,
	REPORT_PPROF,
};

int report_format_parse(const char *name, enum report_format *fmt);

/* unit: "samples", "us" or "bytes"; tool: used in titles. Returns 0 or -1. */
int report_write(const struct report *rep, enum report_format fmt, FILE *out,
		 const char *unit, const char *tool);

#endif
