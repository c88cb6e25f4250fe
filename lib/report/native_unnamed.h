/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How much of a report's native time ran in functions no symbol names
 * (stripped files without debug symbols: frames "FILE+0xSTART"), and in
 * which files, for the summary that says which build-ids lack symbols and
 * how to get them. Time is by the innermost user frame: a row counts as
 * native when that frame is native code.
 */
#ifndef PYBPF_REPORT_NATIVE_UNNAMED_H
#define PYBPF_REPORT_NATIVE_UNNAMED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/rows.h"

/* Files told apart (more add to the last one's "other files"), and
 * files named in the summary. */
#define NATIVE_UNNAMED_FILES_MAX 256
#define NATIVE_UNNAMED_FILES_SHOWN 8
/* The summary speaks when more than this share of native time is unnamed. */
#define NATIVE_UNNAMED_SHARE 0.20

struct native_unnamed_file {
	const char *module;   /* as the process names it (the report's); NULL unknown */
	const char *build_id; /* hex; NULL none */
	uint64_t value;
};

struct native_unnamed {
	uint64_t native;  /* rows whose innermost user frame is native code */
	uint64_t unnamed; /* of those, an unnamed function */
	struct native_unnamed_file *files; /* most first */
	size_t nfiles;
	uint64_t other; /* unnamed in files past NATIVE_UNNAMED_FILES_MAX */
};

/* Counts rep (its strings are borrowed: keep rep while u is used).
 * Returns 0 or -1 (out of memory). */
int native_unnamed_count(const struct report *rep, struct native_unnamed *u);
void native_unnamed_free(struct native_unnamed *u);

/* The summary's lines on out when over NATIVE_UNNAMED_SHARE: the share,
 * one line per file (at most NATIVE_UNNAMED_FILES_SHOWN, names escaped),
 * and how to get names. unit: what a row's value counts ("samples", "us");
 * debuginfod: DEBUGINFOD_URLS was set (the files' symbols were asked of
 * it). Returns whether it printed. */
bool native_unnamed_print(FILE *out, const char *tool, const struct native_unnamed *u,
			  const char *unit, bool debuginfod);

#endif
