/* SPDX-License-Identifier: Apache-2.0 */
/* speedscope's file format: one sampled profile per process. */
#ifndef PYBPF_REPORT_SPEEDSCOPE_H
#define PYBPF_REPORT_SPEEDSCOPE_H

#include <stdio.h>

#include "report/rows.h"

int report_write_speedscope(const struct report *rep, FILE *out, const char *unit,
			    const char *tool);

#endif
