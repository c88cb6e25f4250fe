/* SPDX-License-Identifier: Apache-2.0 */
/* Just enough of an ELF file: symbols, sections, bytes at an address. */
#ifndef PYBPF_ELF_IMAGE_H
#define PYBPF_ELF_IMAGE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A target's file is untrusted and may change while it is read: it is read
 * with pread(2), never mapped (a file cut short gives errors, not SIGBUS),
 * and within a budget. Bytes past the end of the file, sections of absurd
 * size and SHT_NOBITS are never read; a section's bytes are read once
 * (sections over the same bytes share them); only the first
 * ELF_IMAGE_SECTIONS_MAX section headers and ELF_IMAGE_PHDRS_MAX program
 * headers are looked at; all reads from one file together stop at
 * ELF_IMAGE_READ_BUDGET bytes. What is refused is counted in `refused`.
 */
#define ELF_IMAGE_READ_BUDGET (128u << 20)
#define ELF_IMAGE_SECTIONS_MAX 4096
#define ELF_IMAGE_PHDRS_MAX 256

struct elf_section_bytes;

struct elf_image {
	int fd;
	bool is_dyn; /* ET_DYN: position independent, needs a load bias */
	uint64_t first_load_vaddr, first_load_offset;
	uint64_t file_size;      /* at open */
	Elf64_Phdr *phdrs;
	size_t nphdrs;
	Elf64_Shdr *shdrs;       /* the first ELF_IMAGE_SECTIONS_MAX */
	size_t nshdrs, shstrndx;
	struct elf_section_bytes *cache; /* per section, read once */
	uint64_t bytes_read;     /* from the file, against ELF_IMAGE_READ_BUDGET */
	uint32_t refused;        /* reads and headers refused by the rules above */
};

/* Returns 0, or -1 if the file cannot be opened or is not a 64-bit
 * little-endian ELF file. For files of our own (tests): a target's files
 * are opened through sys/target_file.h, then read with elf_image_open_fd. */
int elf_image_open(struct elf_image *img, const char *path);
/* The same for a file already open; takes fd (closed on failure too). */
int elf_image_open_fd(struct elf_image *img, int fd);
void elf_image_close(struct elf_image *img);

/* The section headers looked at, by index (0 is the null section). */
size_t elf_image_section_count(const struct elf_image *img);
const Elf64_Shdr *elf_image_section_header(const struct elf_image *img, size_t index);
/* The bytes of a section (kept until close), their count in *len; NULL if
 * it has none (SHT_NOBITS, empty) or they cannot be read or are refused. */
const void *elf_image_section_bytes(struct elf_image *img, size_t index, size_t *len);
/* The string at offset off of string table section strtab, or NULL if it
 * is not there whole. */
const char *elf_image_string(struct elf_image *img, size_t strtab, uint64_t off);

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

/* The flags (PF_R, PF_W, PF_X) of the PT_LOAD a mapping of the file at
 * `offset` maps, as the loader mapped it; 0 or -1. */
int elf_image_flags_of_offset(struct elf_image *img, uint64_t offset, uint32_t *flags);

/* True if the file carries DWARF (.debug_info). */
bool elf_image_has_dwarf(struct elf_image *img);

/* Build id as lowercase hex, from the notes of PT_NOTE segments (or, in a
 * file without, the .note.gnu.build-id section), a few KB read at most;
 * returns 0 or -1. */
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
