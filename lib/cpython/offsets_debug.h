/* SPDX-License-Identifier: Apache-2.0 */
/* CPython 3.13+ _Py_DebugOffsets: the offsets an interpreter publishes. */
#ifndef PYBPF_DEBUG_OFFSETS_H
#define PYBPF_DEBUG_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/offsets.h"

#define DEBUG_OFFSETS_COOKIE "xdebugpy"
#define DEBUG_OFFSETS_MAX_BYTES 2048

/* Bytes this version's table spans, or 0 if we know no layout for it. */
size_t debug_offsets_size(int minor);

/*
 * Decodes a raw _Py_DebugOffsets copied from &_PyRuntime. Checks the cookie
 * and that the table's version is 3.minor; sets *version_hex and
 * *free_threaded. Returns 0, or -1 with a reason in err.
 */
int debug_offsets_decode(const uint8_t *raw, size_t len, int minor, struct py_offsets *o,
			 uint64_t *version_hex, bool *free_threaded, char *err, size_t errlen);

/*
 * One slot of a raw _Py_DebugOffsets of 3.minor by its name in the
 * headers ("interpreter_state.imports_modules"), for readers beyond the
 * frame walker (cpython/asyncio_layout.c). Returns 0, or -1 if this
 * version's table has no such slot or raw is too short.
 */
int debug_offsets_slot(const uint8_t *raw, size_t len, int minor, const char *name,
		       uint64_t *value);

#endif
