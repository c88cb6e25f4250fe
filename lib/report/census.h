/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The report of a census of live objects (pymem --census): rows of
 * types with their object counts and bytes, the largest first, as a
 * text table, folded lines (module;QualName bytes, for a flame graph of
 * bytes by module) or JSON; and what grew between two censuses (the
 * types whose count and bytes both rose, with the deltas), as
 * objgraph.show_growth() prints it. Type names come from the target:
 * they are escaped here, whatever the format.
 */
#ifndef PYBPF_REPORT_CENSUS_H
#define PYBPF_REPORT_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct census_row {
	const char *name; /* module.QualName, raw */
	uint64_t count, bytes;
	int64_t dcount, dbytes; /* since the previous census (growth) */
};

struct census_report {
	int pid;
	const char *comm;          /* raw */
	struct census_row *rows;   /* sorted in place by the writers */
	size_t n;
	uint64_t objects, bytes, skipped, resyncs;
	int interpreters, walks;
	bool complete;
	const char *why;           /* why not complete */
	uint64_t time_ns;          /* realtime at the walk's end */
	uint64_t walk_ns;
	/* growth: set when there is a previous census */
	bool growth;
	double interval_s;         /* between the two censuses' ends */
};

/* The rows that grew (dcount > 0 and dbytes > 0), moved to the front
 * and sorted by dbytes; returns their count. */
size_t census_growth_rows(struct census_report *r);

/* Sorts r's rows by bytes, then count, largest first. */
void census_sort_rows(struct census_report *r);

/* A text table of the top rows (top 0: all); with r->growth, the growth table. */
void census_write_text(FILE *out, struct census_report *r, size_t top);

/* module;QualName bytes, one line per type. */
void census_write_folded(FILE *out, struct census_report *r);

/* One JSON object on one line (JSON Lines: one per census). */
void census_write_json(FILE *out, struct census_report *r, size_t top);

/* What a census leaves out, for the end of a text report. */
extern const char census_left_out[];

#endif
