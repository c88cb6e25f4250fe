/* SPDX-License-Identifier: Apache-2.0 */
/* JSON output helpers. */
#ifndef PYBPF_REPORT_JSON_H
#define PYBPF_REPORT_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal (quotes included); null for NULL. */
void json_write_string(FILE *out, const char *s);

/* The same without the quotes (to build one string from pieces). */
void json_write_raw(FILE *out, const char *s);

#endif
