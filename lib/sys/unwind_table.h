/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file's .eh_frame turned into the compact rows the BPF unwinder reads
 * (struct pyb_unwind_row, abi/native_abi.h): per address range, the
 * CFA from rsp or rbp plus an offset, where rbp was saved, or one of the
 * special cases (PLT stubs, signal trampolines, the outermost frame, no
 * information). What the rows cannot say exactly is PYB_CFA_NONE: the
 * walk stops there rather than guess.
 */
#ifndef PYBPF_SYS_UNWIND_TABLE_H
#define PYBPF_SYS_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "abi/native_abi.h"

struct elf_image;

/* The most bytes of call frame instructions run for one file: with each
 * CIE's run once (cached), about the size of its .eh_frame; FDEs past it
 * (and those over CFI_FDE_BYTES_MAX) get no rows, counted in fdes_cut. */
#define UNWIND_CFI_BYTES_MAX (32u << 20)

struct unwind_table {
	struct pyb_unwind_row *rows; /* malloc'ed, sorted by pc */
	size_t n;
	size_t fdes, fdes_garbled;   /* for -v */
	size_t fdes_cut;             /* FDEs left out by the budgets above */
	uint64_t cfi_bytes;          /* instructions run */
};

/* Rows of an ELF file's .eh_frame. Returns 0, or -1 with a reason in err. */
int unwind_table_build(struct elf_image *img, struct unwind_table *t, char *err, size_t errlen);

/* The same from a section's bytes linked at vaddr (fuzzing, tests). */
int unwind_table_from_eh_frame(const uint8_t *data, size_t size, uint64_t vaddr,
			       struct unwind_table *t, char *err, size_t errlen);

void unwind_table_free(struct unwind_table *t);

/* The row for pc (last with row.pc <= pc), or NULL: what BPF finds. */
const struct pyb_unwind_row *unwind_table_find(const struct unwind_table *t, uint64_t pc);

#endif
