/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The code sections of an ELF file and the PLT stubs among them, for
 * naming native frames: a stub is named after the function it jumps to
 * ("memcpy@plt"), read from the relocation of the GOT slot its jmp uses
 * (.rela.plt's JUMP_SLOT for .plt and .plt.sec, .rela.dyn's GLOB_DAT for
 * .plt.got); never after the symbol that precedes the section. The file
 * is untrusted: every count is bounded, every read checked.
 */
#ifndef PYBPF_SYS_ELF_PLT_H
#define PYBPF_SYS_ELF_PLT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/elf_image.h"
#include "sys/elf_symbols.h"

#define ELF_CODE_SECTIONS_MAX 64 /* executable sections kept */
#define ELF_PLT_STUBS_MAX 65536  /* stubs decoded per file */

struct elf_code_section {
	uint64_t start, end; /* as linked */
	bool plt;            /* .plt, .plt.got or .plt.sec */
};

struct elf_plt {
	struct elf_code_section code[ELF_CODE_SECTIONS_MAX];
	size_t ncode;
	struct elf_symtab stubs; /* "NAME@plt", by address, each one stub long */
};

/* Reads the code sections and the stubs of the PLT sections. Returns 0
 * (possibly with none) or -1 when out of memory. */
int elf_plt_load(struct elf_plt *t, struct elf_image *img);
void elf_plt_free(struct elf_plt *t);

/* The code section holding addr (as linked), or NULL. */
const struct elf_code_section *elf_plt_code_section(const struct elf_plt *t, uint64_t addr);

/* Whether a and b lie in the same code section (or the file's sections
 * are not known): a symbol of no size holds nothing outside its own. */
bool elf_plt_same_section(const struct elf_plt *t, uint64_t a, uint64_t b);

/* The name of the PLT stub holding addr and addr's offset in it:
 * "NAME@plt", "[plt]" in a PLT section where the slot's target cannot be
 * told, or NULL when addr is in no PLT section. */
const char *elf_plt_name(const struct elf_plt *t, uint64_t addr, uint64_t *offset);

#endif
