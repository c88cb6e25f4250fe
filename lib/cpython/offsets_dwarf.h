/* SPDX-License-Identifier: Apache-2.0 */
/* Offsets from the interpreter's own DWARF debug information. */
#ifndef PYBPF_DWARF_OFFSETS_H
#define PYBPF_DWARF_OFFSETS_H

#include <stddef.h>

#include "cpython/offsets.h"

/*
 * Resolves every field of offsets/field_specs.def that applies to 3.minor
 * from the DWARF in the ELF file at path. Fields it cannot find stay
 * absent. Returns the number of fields resolved, or -1 if the file has no
 * usable DWARF.
 */
int dwarf_offsets_resolve(const char *path, int minor, struct py_offsets *o);
/* The same for a file already open (a target's: see sys/target_file.h);
 * fd stays open. */
int dwarf_offsets_resolve_fd(int fd, int minor, struct py_offsets *o);

/* Offset of a (dotted) member path in a named type, or -1. */
long dwarf_offsetof(const char *path, const char *type, const char *member);
long dwarf_offsetof_fd(int fd, const char *type, const char *member);

#endif
