/* SPDX-License-Identifier: Apache-2.0 */
/* A self-contained interactive flame graph (SVG with a small script). */
#ifndef PYBPF_REPORT_SVG_H
#define PYBPF_REPORT_SVG_H

#include <stdio.h>

#include "report/rows.h"

int report_write_svg(const struct report *rep, FILE *out, const char *title, const char *unit);

#endif
