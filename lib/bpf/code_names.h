/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names of code objects seen in sampled stacks, per process. BPF records
 * only code-object addresses; they are named here while the process is
 * still alive, so a process that exits before the report keeps its names.
 *
 * An address names one code object only while that object lives (module
 * code is freed after import, exec'd code when done, and a new code object
 * may take the address). So BPF also records, per frame, the code's
 * identity as it read it (PYB_CODE_IDENT: its name and file strings, line
 * table, first line, size and creation number, nothing that changes while
 * it lives), and entries are keyed by (pid, address, identity): the name is
 * read only if the object at the address still has that identity, else the
 * frame stays unnamed.
 */
#ifndef PYBPF_CODE_NAMES_H
#define PYBPF_CODE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/process.h"

struct code_name {
	pid_t pid;
	uint64_t code;
	uint64_t ident; /* PYB_CODE_IDENT as BPF saw it (see py_abi.h) */
	bool used, resolved;
	enum py_line_format line_format;
	int firstlineno;
	char *name, *filename;
	uint8_t *linetable;
	size_t linetable_len;
};

struct code_names {
	struct code_name *slots;
	size_t cap, count;
	size_t unresolved; /* lookups of code objects that could not be read */
};

void code_names_init(struct code_names *c);
void code_names_free(struct code_names *c);

/* Finds or reads (from the live process p) the code object at code whose
 * identity BPF saw as ident. NULL only when out of memory; an object that cannot
 * be read, or is no longer the one with that name, is returned unresolved. */
struct code_name *code_names_get(struct code_names *c, struct py_process *p, uint64_t code,
				 uint64_t ident);

/* Looks up without reading: NULL if never seen. */
struct code_name *code_names_find(struct code_names *c, pid_t pid, uint64_t code,
				  uint64_t ident);

/* The line running at byte offset instr_offset into the bytecode, or
 * LINE_UNKNOWN (cpython/linetable.h). */
int code_name_line(const struct code_name *e, int64_t instr_offset);

/* "qualname (file:line)"; line from the byte offset into the bytecode. */
void code_name_format(const struct code_name *e, int64_t instr_offset, char *buf, size_t len);

#endif
