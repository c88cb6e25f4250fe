/* SPDX-License-Identifier: Apache-2.0 */
/* Just enough of an ELF file: symbols, sections, bytes at an address. */
#ifndef PYBPF_ELF_IMAGE_H
#define PYBPF_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_image {
	int fd;
	void *elf; /* Elf * */
	bool is_dyn; /* ET_DYN: position independent, needs a load bias */
	uint64_t first_load_vaddr, first_load_offset;
};

/* Returns 0, or -1 if the file cannot be opened or is not a 64-bit ELF.
 * For files of our own (tests): a target's files are opened through
 * sys/target_file.h, then read with elf_image_open_fd. */
int elf_image_open(struct elf_image *img, const char *path);
/* The same for a file already open; takes fd (closed on failure too).
 * Reads through the descriptor instead of mapping the file, so that a
 * file changed while it is read (a process's binary, untrusted) cannot
 * fault. */
int elf_image_open_fd(struct elf_image *img, int fd);
void elf_image_close(struct elf_image *img);

/* Looks in .dynsym, then .symtab. Returns 0 and the symbol's value, or -1. */
int elf_image_symbol(struct elf_image *img, const char *name, uint64_t *value, uint64_t *size);

/* Address and size of a section by name. Returns 0 or -1. */
int elf_image_section(struct elf_image *img, const char *name, uint64_t *addr, uint64_t *size);

/* Copies bytes stored in the file at virtual address vaddr (not .bss). */
int elf_image_read_vaddr(struct elf_image *img, uint64_t vaddr, void *buf, size_t len);

/*
 * Load bias of this file in a process, given the lowest mapping of the file
 * (start address and file offset). Address in process = bias + vaddr.
 */
uint64_t elf_image_load_bias(const struct elf_image *img, uint64_t map_start, uint64_t map_offset);

/* The linked address of a file offset, by the PT_LOAD that maps it (a
 * mapping of the file at `offset` starts at that address + the bias). */
int elf_image_vaddr_of_offset(struct elf_image *img, uint64_t offset, uint64_t *vaddr);

/* True if the file carries DWARF (.debug_info). */
bool elf_image_has_dwarf(struct elf_image *img);

/* Build id as lowercase hex; returns 0 or -1. */
int elf_image_build_id(struct elf_image *img, char *hex, size_t len);

/* File name from .gnu_debuglink; returns 0 or -1. */
int elf_image_debuglink(struct elf_image *img, char *name, size_t len);

/*
 * Calls fn for each NUL-terminated string in the named section (e.g.
 * ".rodata"); stops early when fn returns non-zero and returns that value.
 */
int elf_image_each_string(struct elf_image *img, const char *section,
			  int (*fn)(const char *s, size_t len, void *arg), void *arg);

#endif
