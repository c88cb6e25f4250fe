/* SPDX-License-Identifier: Apache-2.0 */
/* Code objects and strings read out of a live interpreter. */
#ifndef PYBPF_PY_CODE_H
#define PYBPF_PY_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/process.h"
#include "cpython/str_object.h" /* py_read_string, for the names of code objects */

#define PY_NAME_MAX 512
#define PY_FILENAME_MAX 1024
#define PY_LINETABLE_MAX (1 << 20)

/* Where the fields are, in a code object, that never change while it
 * lives and tell it from others (byte offsets from its start; -1: the
 * version has no such field), plus _co_firsttraceable. The BPF walker
 * reads the same ones (cpython/bpf_layout.c). */
struct py_code_fields {
	int32_t name, filename, linetable, firstlineno;
	int32_t units;          /* 3.11+: ob_size, the bytecode's length in code units */
	int32_t version;        /* 3.12+: co_version, numbering code objects as made */
	int32_t firsttraceable; /* 3.11+: index of the first traceable code unit */
};

void py_code_fields(const struct py_process *p, struct py_code_fields *f);

/* What tells one code object from another at the same address. */
struct py_code_identity {
	uint64_t type, name, filename, linetable;
	uint64_t ident; /* PYB_CODE_IDENT, as the BPF walker computes it */
	int32_t firstlineno;
	int32_t units;          /* 0 where the version has no such field */
	int32_t version;        /* likewise */
	int32_t firsttraceable; /* likewise */
};

struct py_code_info {
	char name[PY_NAME_MAX];         /* co_qualname (3.11+) or co_name, UTF-8 */
	char filename[PY_FILENAME_MAX]; /* co_filename, UTF-8 */
	int firstlineno;
	uint8_t *linetable;
	size_t linetable_len;
	struct py_code_identity ident;
};

/* Reads the identity of the object at code (the code object in one read
 * where the layout allows, then its name and file strings). Returns 0, or
 * -1 if it cannot be read. */
int py_code_identity_read(struct py_process *p, uint64_t code, struct py_code_identity *id);

/* Reads a code object. Returns 0, or -1 if it is not a readable code object. */
int py_code_read(struct py_process *p, uint64_t code, struct py_code_info *ci);
void py_code_info_free(struct py_code_info *ci);

/* Current line for a byte offset into the code's bytecode; -1 if unknown. */
int py_code_line(const struct py_process *p, const struct py_code_info *ci, int64_t offset);

#endif
