/* SPDX-License-Identifier: Apache-2.0 */
/* CPython version numbers: parsing, formatting and what this build supports. */
#ifndef PYBPF_PY_VERSION_H
#define PYBPF_PY_VERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PY_MINOR_FIRST_SUPPORTED 8
#define PY_MINOR_LAST_SUPPORTED 15

struct py_version {
	int major, minor, micro;
	int level;  /* 0xA alpha, 0xB beta, 0xC release candidate, 0xF final */
	int serial;
};

/* From PY_VERSION_HEX (Py_Version, _Py_DebugOffsets.version). */
void py_version_from_hex(uint64_t hex, struct py_version *v);
uint32_t py_version_hex(const struct py_version *v);

/*
 * Parses "3.9.2", "3.15.0rc1", "3.12.0a7+" exactly (the whole string must
 * match). Returns 0 or -1.
 */
int py_version_parse(const char *s, size_t len, struct py_version *v);

/* "3.11.2", "3.15.0rc1" */
void py_version_format(const struct py_version *v, char *buf, size_t len);

/*
 * Major.minor from an interpreter file name: python3.9, python3.13t,
 * libpython3.11.so.1.0. Returns 0 and sets *free_threaded, or -1.
 */
int py_version_from_filename(const char *basename, int *major, int *minor, bool *free_threaded);

bool py_version_supported(const struct py_version *v);

#endif
