/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Instruction offset -> source line, for each CPython line-table format.
 * Pure functions over bytes copied out of the target: they must cope with
 * any garbage, so every read is bounds-checked.
 */
#ifndef PYBPF_LINETABLE_H
#define PYBPF_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/rules.h"

#define LINE_UNKNOWN (-1)

/* 3.8-3.9 co_lnotab: (byte delta, signed line delta) pairs. offset in bytes. */
int linetable_lnotab(const uint8_t *tab, size_t len, int firstlineno, int64_t offset);

/* 3.10 co_linetable (PEP 626): (byte delta, line delta; -128 = none). */
int linetable_310(const uint8_t *tab, size_t len, int firstlineno, int64_t offset);

/* 3.11+ location table (PEP 657). offset in bytes (2 per code unit). */
int linetable_311(const uint8_t *tab, size_t len, int firstlineno, int64_t offset);

/* Picks the decoder for a format (struct py_rules.line_format). */
int linetable_line(enum py_line_format format, const uint8_t *tab, size_t len, int firstlineno,
		   int64_t offset);

#endif
