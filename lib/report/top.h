/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A live table of functions, like top(1) (pyprofile --top): for each
 * function, its share of the samples of the last TOP_WINDOW refreshes in
 * which it was running itself (own) or was on the stack (total), and the
 * time those samples add up to since the start. Native functions no symbol
 * names (a stripped file's "FILE+0xSTART") are one row per file, "FILE
 * [unnamed]". Fed the run's cumulative report at each refresh; filtered by
 * process and thread; sorted by any column. Knows only reports: no
 * terminal, no BPF.
 */
#ifndef PYBPF_REPORT_TOP_H
#define PYBPF_REPORT_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "report/functions.h"
#include "report/rows.h"

enum top_sort { TOP_OWN_SHARE, TOP_TOTAL_SHARE, TOP_OWN_TIME, TOP_TOTAL_TIME };

/* How many refreshes the shares cover: one second at 49 Hz is 49 samples
 * a CPU, shares that jump by 2% at each; five are 245. */
#define TOP_WINDOW 5

/* A function's counts at the last TOP_WINDOW refreshes (struct top's ring). */
struct top_past {
	uint64_t own_at[TOP_WINDOW], total_at[TOP_WINDOW];
};

struct top {
	/* labels "qualname (file:first line)", a symbol, "FILE [unnamed]";
	 * own, total and all (every sample of the filtered rows) cumulative,
	 * in report units */
	struct function_counts fn;
	struct top_past *past; /* fn.v's, in its order */
	size_t past_cap;
	uint64_t all_at[TOP_WINDOW], ns_at[TOP_WINDOW]; /* fn.all and when, at past refreshes */
	size_t nat, next_at;	/* past refreshes kept (the window), the ring's next slot */
	uint64_t now_ns;	/* the last refresh */
	bool counted;		/* own, total and all count a report */
	double seconds_per_unit;
	enum top_sort sort;
	pid_t only_pid, only_tid; /* 0: all */
	bool since_start;	    /* the shares cover the whole run (first screen, new filter) */
	bool keys;		    /* keys are read: the table says which */
	pid_t *pids, *tids;	    /* seen in the last report, for the filter keys */
	size_t npids, ntids;
};

/* seconds_per_unit: what one unit of a row's value is worth (a sample's
 * period, or 1e-6 for microseconds). */
void top_init(struct top *t, double seconds_per_unit);
void top_free(struct top *t);

/* A new cumulative report, taken at now_ns (monotonic): the counts since
 * the oldest of the last TOP_WINDOW refreshes become the shares shown.
 * Returns 0 or -1 (out of memory). */
int top_update(struct top *t, const struct report *rep, uint64_t now_ns);

/*
 * Keys: 1-4 sort by own share, total share, own time, total time; p and t
 * step through the processes and threads seen (then back to all); a shows
 * all. A changed filter counts from the start until the next update
 * (rep: the last report). Returns true if the key was one of them.
 */
bool top_key(struct top *t, int key, const struct report *rep);

/*
 * The table, at most width columns and height lines (0: no limit), each
 * line ended by eol (the terminal's clear-to-end-of-line, or "").
 * title: the first line.
 */
void top_render(const struct top *t, FILE *out, int width, int height, const char *title,
		const char *eol);

#endif
