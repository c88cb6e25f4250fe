/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SystemTap (USDT) probes of an ELF file: where a probe's call site and
 * its semaphore are in the file, and where its arguments are at the call
 * site. The file is a target's, untrusted: notes are read within their
 * section, every string must end inside its note, and what does not
 * parse is refused, never guessed at.
 */
#ifndef PYBPF_SYS_STAPSDT_H
#define PYBPF_SYS_STAPSDT_H

#include <stdint.h>

#include "sys/regs.h"

struct elf_image;

#define STAPSDT_MAX_ARGS 4

/* One argument: a register's value, the bytes at a register plus a
 * displacement, or a constant; size bytes, sign-extended if is_signed. */
struct stapsdt_arg {
	enum { STAPSDT_ARG_REG, STAPSDT_ARG_MEM, STAPSDT_ARG_CONST } kind;
	enum xreg reg;
	int64_t value; /* MEM: the displacement; CONST: the constant */
	uint8_t size;  /* 1, 2, 4 or 8 */
	uint8_t is_signed;
};

struct stapsdt_probe {
	uint64_t pc_offset;  /* file offset of the call site (a nop) */
	uint64_t sem_offset; /* file offset of the 2-byte semaphore; 0: none */
	int nargs;
	struct stapsdt_arg args[STAPSDT_MAX_ARGS];
};

/* Parses an argument list as the notes write it ("-4@112(%rsp) -8@%r12").
 * Returns the number of arguments (at most max), or -1 if one is not
 * understood. */
int stapsdt_parse_args(const char *spec, struct stapsdt_arg *args, int max);

/*
 * The first site of probe provider:name in img. Returns 0, 1 if the file
 * has no such probe, or -1 if it has one that cannot be used (its
 * arguments not understood, its addresses not in the file, several
 * sites: a probe inlined twice is not supported).
 */
int stapsdt_find(struct elf_image *img, const char *provider, const char *name,
		 struct stapsdt_probe *out);

#endif
