/* SPDX-License-Identifier: Apache-2.0 */
/* Function symbols of an ELF file by address, for naming native frames. */
#ifndef PYBPF_SYS_ELF_SYMBOLS_H
#define PYBPF_SYS_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "sys/elf_image.h"

struct elf_sym {
	uint64_t start, size; /* as linked */
	const char *name;
};

struct elf_symtab {
	struct elf_sym *v;
	size_t n;
	char *names;
};

/* The function symbols of .symtab, or of .dynsym for stripped files,
 * sorted by address. Returns 0 (possibly with none) or -1. */
int elf_symtab_load(struct elf_symtab *t, struct elf_image *img);
void elf_symtab_free(struct elf_symtab *t);

/* The function that holds addr (as linked), or NULL. */
const struct elf_sym *elf_symtab_find(const struct elf_symtab *t, uint64_t addr);

#endif
