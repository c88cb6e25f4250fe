/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A report: named stacks with a value each (samples, microseconds), and
 * the text formats users know from bcc (multi-line text, folded stacks).
 * Rows arrive already named; nothing here knows CPython or BPF.
 */
#ifndef PYBPF_REPORT_ROWS_H
#define PYBPF_REPORT_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct report_row {
	pid_t pid;
	char comm[16];
	char *frames;   /* root first, ';'-separated; kernel frames carry "_[k]" */
	int nuser;      /* frames before the kernel ones */
	int nkernel;
	uint64_t value; /* samples, or microseconds */
};

struct report {
	struct report_row *rows;
	size_t n, cap;
	bool delimiter;          /* -d: a "--" between user and kernel frames */
	uint64_t total;          /* value of the rows shown */
	uint64_t runnable_total; /* pyoffcpu: time runnable, waiting for a CPU */
	/* for formats that record them (pprof) */
	uint64_t period_ns; /* pyprofile: time between samples */
	uint64_t start_realtime_ns, duration_ns;
};

/* Leaf frame that marks time a thread was runnable but not running. */
#define RUNNABLE_MARKER "[runnable: waiting for a CPU]"

void report_init(struct report *rep, bool delimiter);
void report_free(struct report *rep);

/* Adds a row; frames (malloc'ed, see struct report_row) is taken over,
 * also on failure. Returns 0 or -1. */
int report_add_row(struct report *rep, pid_t pid, const char *comm, char *frames, int nuser,
		   int nkernel, uint64_t value);

/* Same process, thread name and frames (different threads): one row. */
void report_merge_rows(struct report *rep);

/* bcc profile/offcputime layout: leaf first, ascending by value. */
void report_print_text(const struct report *rep, FILE *out);
/* comm;root;...;leaf value */
void report_print_folded(const struct report *rep, FILE *out);

#endif
