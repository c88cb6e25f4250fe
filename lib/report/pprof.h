/* SPDX-License-Identifier: Apache-2.0 */
/* pprof's protobuf format, gzipped (go tool pprof, Pyroscope, Parca). */
#ifndef PYBPF_REPORT_PPROF_H
#define PYBPF_REPORT_PPROF_H

#include <stdio.h>

#include "report/rows.h"

/* CPU profiles use rep->period_ns; off-CPU ones nanoseconds. */
int report_write_pprof(const struct report *rep, FILE *out, const char *unit);

#endif
