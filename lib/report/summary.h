/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The short summary that ends a text report, after its stacks: the Python
 * functions with the largest own share (the innermost Python function of
 * a stack, with the native and kernel code it called) and the largest
 * total share (anywhere on the stack, once per stack), named as the
 * stacks name frames, with the def line: "qualname (file:first line)".
 * Counted from every row of the report, not only the stacks shown; one
 * part per process when the report has several (those with the largest
 * values, a line on the rest). Its lines never start with four spaces,
 * as a stack's frames do.
 */
#ifndef PYBPF_REPORT_SUMMARY_H
#define PYBPF_REPORT_SUMMARY_H

#include <stdio.h>

#include "report/rows.h"

#define SUMMARY_FUNCTIONS 10	/* per list, when the report has one process */
#define SUMMARY_FUNCTIONS_EACH 5 /* per list and process, when it has several */
#define SUMMARY_PROCS 5		/* processes with a part, unless asked for all */

/* unit: "samples", "us" or "bytes" (as report_write takes it); what: what
 * the values are, for the title ("GIL waits"), or NULL; procs: how many
 * processes have a part (SUMMARY_PROCS; 0: every one, as --all asks).
 * Prints nothing for a report without rows or without a Python frame
 * (-K). */
void report_print_summary(const struct report *rep, const char *unit, const char *what,
			  size_t procs, FILE *out);

#endif
