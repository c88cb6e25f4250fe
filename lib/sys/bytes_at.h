/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fields of a struct copied out of another process in one read: the value
 * at a byte offset of the copy, whatever its alignment. The caller has
 * checked that off plus the field's size fits the copy.
 */
#ifndef PYBPF_SYS_BYTES_AT_H
#define PYBPF_SYS_BYTES_AT_H

#include <stdint.h>
#include <string.h>

static inline uint64_t u64_at(const uint8_t *buf, int32_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* 0 for an offset the version lacks (negative). */
static inline int32_t i32_at(const uint8_t *buf, int32_t off)
{
	int32_t v = 0;

	if (off >= 0)
		memcpy(&v, buf + off, sizeof(v));
	return v;
}

#endif
