/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Text reports people read end at a size they can read: the rows with the
 * largest values, and a count of the rest (bcc's top-style tools bound
 * their output the same way). Machine formats stay complete.
 */
#ifndef PYBPF_REPORT_ROW_LIMIT_H
#define PYBPF_REPORT_ROW_LIMIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/rows.h"

struct report_top {
	struct report view;     /* the kept rows (sharing rep's frames and rows' frame lists):
				   print it, never free it */
	size_t omitted;         /* rows left out */
	uint64_t omitted_value; /* their total value */
};

/* The top rows of rep by value (top 0: all). Returns 0, or -1 (out of
 * memory: the view then holds every row). */
int report_top_rows(const struct report *rep, size_t top, struct report_top *out);
void report_top_free(struct report_top *t);

/*
 * The text report of the top rows (report_print_text), after a line on
 * the rest when some are left out: "(N more stacks with LESS, VALUE in
 * all (P%), not shown: ...)", VALUE written by format (report_format_us,
 * report_format_bytes).
 */
void report_print_top(const struct report *rep, size_t top, const char *less,
		      void (*format)(uint64_t v, char *buf, size_t len), FILE *out);

#endif
