/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --interval N with -o PATTERN: one report per interval of N seconds, for
 * continuous profiling. Each file is named by strftime(PATTERN) at the
 * start of its interval ("cpu-%Y%m%dT%H%M%S.pb.gz"), and written whole
 * under a temporary name, then renamed: whatever watches the directory
 * (a Pyroscope or Parca uploader, a cron job) never reads half a file.
 */
#ifndef PYBPF_TOOLS_PERIODIC_H
#define PYBPF_TOOLS_PERIODIC_H

#include <stdbool.h>
#include <stdint.h>

#include "report/formats.h"

struct tool_session;

struct periodic_output {
	const char *tool, *unit; /* "pyprofile", "samples" */
	const char *pattern;     /* -o */
	enum report_format format;
	bool delimiter;
	uint64_t period_ns; /* the sampling period, for the reports */
	unsigned written, failed;
};

/* A pattern that names each interval's file apart (has a strftime
 * conversion). Returns 0, or -1 after printing why. */
int periodic_check_pattern(const char *tool, const char *pattern);

/* Sets s up to call periodic_write every interval_s seconds. */
void periodic_start(struct tool_session *s, struct periodic_output *p, int interval_s);

/* Writes the interval that ends now. Returns 0, or -1 after printing why. */
int periodic_write(struct tool_session *s, struct periodic_output *p);

#endif
