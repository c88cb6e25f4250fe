/* SPDX-License-Identifier: Apache-2.0 */
/* Writing a stack report in each format the tools offer. */
#ifndef PYBPF_REPORT_FORMATS_H
#define PYBPF_REPORT_FORMATS_H

#include <stdio.h>

#include "stack_report.h"

enum report_format {
	REPORT_TEXT,
	REPORT_FOLDED,
	REPORT_SVG,
	REPORT_SPEEDSCOPE,
	REPORT_PPROF,
};

int report_format_parse(const char *name, enum report_format *fmt);

/* unit: "samples" or "us"; tool: used in titles. Returns 0 or -1. */
int report_write(const struct stack_report *rep, enum report_format fmt, FILE *out,
		 const char *unit, const char *tool);

/* A self-contained interactive flame graph (SVG with a small script). */
int report_write_svg(const struct stack_report *rep, FILE *out, const char *title,
		     const char *unit);

/* speedscope's file format: one sampled profile per process. */
int report_write_speedscope(const struct stack_report *rep, FILE *out, const char *unit,
			    const char *tool);

/* pprof's protobuf format, gzipped (go tool pprof, Pyroscope, Parca).
 * CPU profiles use rep->period_ns; off-CPU ones nanoseconds. */
int report_write_pprof(const struct stack_report *rep, FILE *out, const char *unit);

/* Writes s as a JSON string literal (quotes included). */
void json_write_string(FILE *out, const char *s);

#endif
