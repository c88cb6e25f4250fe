/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The functions of a report and the value each one has: own, of the rows
 * whose innermost function it is (the code it called that is not a
 * function, kernel frames and markers, counts to it), and total, of the
 * rows it is anywhere in (once per row, however deep it recurses). Which
 * frames are functions, and what each is called, is the caller's: --top
 * counts Python and native functions, the text report's summary Python
 * functions only. Functions are told apart by their label; they keep
 * their place in v (a caller may keep more of each, in that order).
 */
#ifndef PYBPF_REPORT_FUNCTIONS_H
#define PYBPF_REPORT_FUNCTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "report/rows.h"

/* Writes f's function's name (escaped: it is shown) into buf; false when
 * f is not a function to count. */
typedef bool (*function_label_fn)(const struct report_frame *f, char *buf, size_t len);

struct function_count {
	char *label;
	uint64_t own, total;
};

struct function_counts {
	struct function_count *v;
	size_t n, cap;
	size_t *slots, nslots; /* hash index of v by label: index + 1, 0 empty */
	uint64_t all;	       /* the value of every row counted */
	function_label_fn label;
};

void function_counts_init(struct function_counts *c, function_label_fn label);
void function_counts_free(struct function_counts *c);

/* Sets every count (own, total and all) back to 0, keeping the functions. */
void function_counts_clear(struct function_counts *c);

/* Adds rep's rows of process pid and thread tid (0: any) to the counts.
 * Returns 0 or -1 (out of memory). */
int function_counts_add(struct function_counts *c, const struct report *rep, pid_t pid,
			pid_t tid);

#endif
