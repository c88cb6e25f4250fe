/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Just enough of .eh_frame (x86-64): the code range of every FDE, and
 * whether the code at its start already runs in a frame set up elsewhere
 * (its CFA is rbp-based from the first instruction: a fragment of a
 * frame-pointer function that the compiler placed apart, such as the
 * ".cold" or ".text.hot" part of a PGO/LTO build).
 */
#ifndef PYBPF_EH_FRAME_H
#define PYBPF_EH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eh_fde {
	uint64_t start, end;   /* code addresses, as linked */
	bool continues_frame; /* CFA on rbp at start: no prologue of its own */
	bool uses_rbp;        /* CFA on rbp somewhere: keeps a frame pointer */
	uint32_t entry;       /* where the FDE is in the section (eh_frame_cfi) */
};

/*
 * Parses the contents of .eh_frame (DATA, SIZE bytes, linked at address
 * VADDR) and returns a malloc'ed array of its FDEs sorted by start, with
 * their count in *COUNT; NULL if there are none or the section is garbled
 * beyond its first FDEs (what came before is kept).
 */
struct eh_fde *eh_frame_fdes(const uint8_t *data, size_t size, uint64_t vaddr, size_t *count);

/* What it takes to unwind through one function: its code range, the
 * CIE's factors and the two instruction streams (see sys/cfi_unwind.h). */
struct eh_cfi {
	uint64_t start, end; /* code addresses, as linked */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	bool signal_frame;
	const uint8_t *cie_insns, *fde_insns; /* point into the section's data */
	size_t cie_len, fde_len;
	uint32_t cie_entry; /* where the CIE is in the section: FDEs that share it
			     * share its initial row */
};

/* The unwind rules of one FDE of .eh_frame (DATA, SIZE bytes linked at
 * VADDR), as eh_frame_fdes() listed it. Returns 0, or -1 if garbled. */
int eh_frame_cfi(const uint8_t *data, size_t size, uint64_t vaddr, const struct eh_fde *fde,
		 struct eh_cfi *out);

/* The FDE whose range holds ADDR, or NULL. */
const struct eh_fde *eh_frame_fde_covering(const struct eh_fde *fdes, size_t count, uint64_t addr);

/* The FDE that starts exactly at ADDR, or NULL. */
const struct eh_fde *eh_frame_fde_at(const struct eh_fde *fdes, size_t count, uint64_t addr);

#endif
