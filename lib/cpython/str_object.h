/* SPDX-License-Identifier: Apache-2.0 */
/*
 * str objects read out of a live interpreter: the one decoder of their
 * header (PyASCIIObject.state: interned bits, then kind:3, compact:1,
 * ascii:1, per struct py_rules) for names, locals, thread names and
 * asyncio. Every length is bounded; garbage makes a call fail.
 */
#ifndef PYBPF_CPYTHON_STR_OBJECT_H
#define PYBPF_CPYTHON_STR_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/process.h"

#define PY_STR_CHARS_MAX 1024 /* code points read of one str at most; more are cut */

/* A str's header, read: where its text is and how it is stored. */
struct py_str_view {
	int64_t length; /* in code points */
	unsigned kind;  /* bytes per code point: 1, 2 or 4 */
	bool ascii;
	uint64_t data;
};

/* Reads the header of the str at addr (its type is not checked). 0 or -1. */
int py_str_view_read(const struct py_process *p, uint64_t addr, struct py_str_view *v);

/* The first code points of a str, up to max: 0 and *got, or -1 when they
 * cannot be read or are not what a str of that kind holds. */
int py_str_code_points(const struct py_process *p, const struct py_str_view *v, uint32_t *cps,
		       size_t max, size_t *got);

/*
 * Reads a str object into buf as UTF-8 (truncated to fit, marked with
 * "..."; control characters as U+FFFD, so the text stays on its line).
 * Returns 0, or -1 if addr is not a readable str.
 */
int py_read_string(const struct py_process *p, uint64_t addr, char *buf, size_t len);

/* Whether the object at addr is a str equal to s (a compact ASCII str,
 * as names are, in one read). */
bool py_str_equals(const struct py_process *p, uint64_t addr, const char *s);

/* Appends code point cp as UTF-8 (U+FFFD for invalid ones). For tests too. */
size_t utf8_encode(uint32_t cp, char out[4]);

#endif
