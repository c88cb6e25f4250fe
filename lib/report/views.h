/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Other cuts of a report's rows: by function instead of by line
 * (--function), and split by process and thread at the root (--threads).
 * They rewrite the rows in place, before any writer runs.
 */
#ifndef PYBPF_REPORT_VIEWS_H
#define PYBPF_REPORT_VIEWS_H

#include "report/rows.h"

/*
 * Every Python frame takes its function's first line (co_firstlineno, the
 * "def" line) for the line it was running, so each function is one frame
 * wherever in it the samples fell; rows that become equal are merged.
 * Returns 0 or -1 (out of memory).
 */
int report_view_functions(struct report *rep);

/*
 * Two frames at the root of every row: the process, "[PID 1234 python3]"
 * (its name from report_set_proc, else "?"), then the thread, "[TID 1240
 * worker]" (report_row_thread_name: its Python name, else its comm).
 * Returns 0 or -1 (out of memory).
 */
int report_view_threads(struct report *rep);

#endif
