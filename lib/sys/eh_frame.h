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
};

/*
 * Parses the contents of .eh_frame (DATA, SIZE bytes, linked at address
 * VADDR) and returns a malloc'ed array of its FDEs sorted by start, with
 * their count in *COUNT; NULL if there are none or the section is garbled
 * beyond its first FDEs (what came before is kept).
 */
struct eh_fde *eh_frame_fdes(const uint8_t *data, size_t size, uint64_t vaddr, size_t *count);

/* The FDE that starts exactly at ADDR, or NULL. */
const struct eh_fde *eh_frame_fde_at(const struct eh_fde *fdes, size_t count, uint64_t addr);

#endif
