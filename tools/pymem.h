/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pymem's options and its modes. tools/pymem.c parses the command line
 * and hands the run to one mode, each in a file of its own:
 * pymem_growth.c (the default: memory the process got from the kernel,
 * by stack), pymem_census.c (--census: live objects by type),
 * pymem_gc.c (--gc: collector pauses) and pymem_alloc.c (--alloc:
 * libc allocations still outstanding, by stack).
 */
#ifndef PYBPF_PYMEM_H
#define PYBPF_PYMEM_H

#include <stdbool.h>

#include "cli.h"

struct tool_session;

enum pymem_mode { PYMEM_GROWTH, PYMEM_CENSUS, PYMEM_GC, PYMEM_ALLOC };

struct pymem_options {
	struct cli cli;
	enum pymem_mode mode;
	int interval; /* -i SECS: a report every SECS seconds; 0: one at the end */
	int top;      /* rows or stacks in the text report; 0: all (--all); -1: the mode's default */
	bool folded;  /* -f */
	/* --alloc: -z/-Z size filters (bytes), --sample N (1: every allocation) */
	unsigned long long alloc_min, alloc_max;
	int alloc_sample;
};

/*
 * Each mode runs from the parsed options to the report and returns the
 * tool's exit status (cli_exit_status), having printed why if it failed.
 */
int pymem_growth(struct pymem_options *o, struct tool_session *s);
int pymem_census(struct pymem_options *o, struct tool_session *s);
int pymem_gc(struct pymem_options *o, struct tool_session *s);
int pymem_alloc(struct pymem_options *o, struct tool_session *s);

#endif
