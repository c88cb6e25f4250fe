/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ELF64 little-endian (x86-64) read by hand with pread(2): the headers once
 * at open, section bytes when asked, all of it within the rules and the
 * budget of sys/elf_image.h.
 */
#include "sys/elf_image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE_MASK_4K (~(uint64_t)4095)
#define NOTES_READ_MAX 4096 /* bytes of one PT_NOTE segment looked at */
#define NOTE_SEGMENTS_MAX 16
#define DEBUGLINK_MAX 4096

struct elf_section_bytes {
	void *bytes;
	size_t len;
	bool tried; /* read, or refused: never tried twice */
	bool owner; /* bytes are this section's own (else another's, same range) */
};

/* Reads len bytes at off, within the file as it was at open and within
 * the budget; -1 (counted) if refused, -1 if the file is shorter now. */
static int read_at(struct elf_image *img, uint64_t off, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (off > img->file_size || len > img->file_size - off ||
	    len > ELF_IMAGE_READ_BUDGET - img->bytes_read) {
		img->refused++;
		return -1;
	}
	img->bytes_read += len;
	while (len) {
		ssize_t n = pread(img->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1; /* cut short since it was opened */
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* A table of count entries of size each at off, read whole: NULL if it
 * does not fit in the file (or the budget). */
static void *read_table(struct elf_image *img, uint64_t off, size_t count, size_t size)
{
	void *t;

	if (!count || count > img->file_size / size)
		return NULL;
	t = malloc(count * size);
	if (t && read_at(img, off, t, count * size) < 0) {
		free(t);
		t = NULL;
	}
	return t;
}

static int fail(struct elf_image *img)
{
	elf_image_close(img);
	return -1;
}

/* The section headers, their count (extended numbering included) capped. */
static void read_sections(struct elf_image *img, const Elf64_Ehdr *eh, Elf64_Shdr *first)
{
	uint64_t count = eh->e_shnum;

	img->shstrndx = eh->e_shstrndx;
	if (!eh->e_shoff || eh->e_shentsize != sizeof(Elf64_Shdr))
		return;
	if (count == 0 || eh->e_shstrndx == SHN_XINDEX) {
		/* 0xff00 sections and more: the real figures are in section 0 */
		if (read_at(img, eh->e_shoff, first, sizeof(*first)) < 0)
			return;
		if (count == 0)
			count = first->sh_size;
		if (eh->e_shstrndx == SHN_XINDEX)
			img->shstrndx = first->sh_link;
	}
	if (count > ELF_IMAGE_SECTIONS_MAX) {
		img->refused++;
		count = ELF_IMAGE_SECTIONS_MAX;
	}
	img->shdrs = read_table(img, eh->e_shoff, (size_t)count, sizeof(Elf64_Shdr));
	if (!img->shdrs)
		return;
	img->cache = calloc((size_t)count, sizeof(*img->cache));
	if (!img->cache) {
		free(img->shdrs);
		img->shdrs = NULL;
		return;
	}
	img->nshdrs = (size_t)count;
}

static int open_fd(struct elf_image *img, int fd)
{
	Elf64_Ehdr eh;
	Elf64_Shdr first = { 0 };
	struct stat st;
	uint64_t nphdrs;

	memset(img, 0, sizeof(*img));
	img->fd = fd;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(eh))
		return fail(img);
	img->file_size = (uint64_t)st.st_size;
	if (read_at(img, 0, &eh, sizeof(eh)) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return fail(img);
	img->is_dyn = eh.e_type == ET_DYN;
	read_sections(img, &eh, &first);
	nphdrs = eh.e_phnum == PN_XNUM ? first.sh_info : eh.e_phnum;
	if (nphdrs && eh.e_phentsize != sizeof(Elf64_Phdr))
		return fail(img);
	if (nphdrs > ELF_IMAGE_PHDRS_MAX) {
		img->refused++;
		nphdrs = ELF_IMAGE_PHDRS_MAX;
	}
	if (nphdrs) {
		img->phdrs = read_table(img, eh.e_phoff, (size_t)nphdrs, sizeof(Elf64_Phdr));
		if (!img->phdrs)
			return fail(img);
		img->nphdrs = (size_t)nphdrs;
	}
	for (size_t i = 0; i < img->nphdrs; i++) {
		if (img->phdrs[i].p_type == PT_LOAD) {
			img->first_load_vaddr = img->phdrs[i].p_vaddr;
			img->first_load_offset = img->phdrs[i].p_offset;
			break;
		}
	}
	return 0;
}

int elf_image_open(struct elf_image *img, const char *path)
{
	return open_fd(img, open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
}

int elf_image_open_fd(struct elf_image *img, int fd)
{
	return open_fd(img, fd);
}

void elf_image_close(struct elf_image *img)
{
	for (size_t i = 0; img->cache && i < img->nshdrs; i++)
		if (img->cache[i].owner)
			free(img->cache[i].bytes);
	free(img->cache);
	free(img->shdrs);
	free(img->phdrs);
	if (img->fd >= 0)
		close(img->fd);
	memset(img, 0, sizeof(*img));
	img->fd = -1;
}

size_t elf_image_section_count(const struct elf_image *img)
{
	return img->nshdrs;
}

const Elf64_Shdr *elf_image_section_header(const struct elf_image *img, size_t index)
{
	return index < img->nshdrs ? &img->shdrs[index] : NULL;
}

const void *elf_image_section_bytes(struct elf_image *img, size_t index, size_t *len)
{
	const Elf64_Shdr *sh = elf_image_section_header(img, index);
	struct elf_section_bytes *c;

	*len = 0;
	if (!sh || sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL || !sh->sh_size)
		return NULL;
	c = &img->cache[index];
	if (c->tried) {
		*len = c->len;
		return c->bytes;
	}
	c->tried = true;
	/* sections over the same bytes share them */
	for (size_t i = 0; i < img->nshdrs; i++) {
		if (img->cache[i].bytes && img->shdrs[i].sh_offset == sh->sh_offset &&
		    img->shdrs[i].sh_size == sh->sh_size && img->shdrs[i].sh_type != SHT_NOBITS) {
			c->bytes = img->cache[i].bytes;
			c->len = img->cache[i].len;
			*len = c->len;
			return c->bytes;
		}
	}
	if (sh->sh_offset > img->file_size || sh->sh_size > img->file_size - sh->sh_offset) {
		img->refused++; /* past the end of the file */
		return NULL;
	}
	c->bytes = malloc((size_t)sh->sh_size);
	if (!c->bytes)
		return NULL;
	if (read_at(img, sh->sh_offset, c->bytes, (size_t)sh->sh_size) < 0) {
		free(c->bytes);
		c->bytes = NULL;
		return NULL;
	}
	c->owner = true;
	c->len = (size_t)sh->sh_size;
	*len = c->len;
	return c->bytes;
}

const char *elf_image_string(struct elf_image *img, size_t strtab, uint64_t off)
{
	size_t len;
	const char *s = elf_image_section_bytes(img, strtab, &len);

	if (!s || off >= len || !memchr(s + off, '\0', len - (size_t)off))
		return NULL;
	return s + off;
}

static const char *section_name(struct elf_image *img, size_t index)
{
	return elf_image_string(img, img->shstrndx, img->shdrs[index].sh_name);
}

/* The first section of that name, or -1. */
static long find_section(struct elf_image *img, const char *name)
{
	for (size_t i = 1; i < img->nshdrs; i++) {
		const char *s = section_name(img, i);

		if (s && strcmp(s, name) == 0)
			return (long)i;
	}
	return -1;
}

static int symbol_in(struct elf_image *img, uint32_t type, const char *name, uint64_t *value,
		     uint64_t *size)
{
	for (size_t i = 1; i < img->nshdrs; i++) {
		const Elf64_Shdr *sh = &img->shdrs[i];
		const uint8_t *data;
		size_t len;

		if (sh->sh_type != type || sh->sh_entsize != sizeof(Elf64_Sym) ||
		    !(data = elf_image_section_bytes(img, i, &len)))
			continue;
		for (size_t k = 0; k < len / sizeof(Elf64_Sym); k++) {
			Elf64_Sym sym;
			const char *sname;

			memcpy(&sym, data + k * sizeof(sym), sizeof(sym));
			if (sym.st_shndx == SHN_UNDEF)
				continue;
			sname = elf_image_string(img, sh->sh_link, sym.st_name);
			if (sname && strcmp(sname, name) == 0) {
				*value = sym.st_value;
				if (size)
					*size = sym.st_size;
				return 0;
			}
		}
	}
	return -1;
}

int elf_image_symbol(struct elf_image *img, const char *name, uint64_t *value, uint64_t *size)
{
	if (symbol_in(img, SHT_DYNSYM, name, value, size) == 0)
		return 0;
	return symbol_in(img, SHT_SYMTAB, name, value, size);
}

int elf_image_section(struct elf_image *img, const char *name, uint64_t *addr, uint64_t *size)
{
	long i = find_section(img, name);

	if (i < 0)
		return -1;
	*addr = img->shdrs[i].sh_addr;
	*size = img->shdrs[i].sh_size;
	return 0;
}

int elf_image_read_vaddr(struct elf_image *img, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < img->nphdrs; i++) {
		const Elf64_Phdr *ph = &img->phdrs[i];

		if (ph->p_type != PT_LOAD)
			continue;
		/* [vaddr, vaddr + len) inside the segment's file bytes, in
		 * arithmetic that cannot wrap (both come from the file) */
		if (vaddr < ph->p_vaddr || len > ph->p_filesz || vaddr - ph->p_vaddr > ph->p_filesz - len ||
		    ph->p_offset > (uint64_t)INT64_MAX - ph->p_filesz)
			continue;
		return read_at(img, ph->p_offset + (vaddr - ph->p_vaddr), buf, len);
	}
	return -1;
}

uint64_t elf_image_load_bias(const struct elf_image *img, uint64_t map_start, uint64_t map_offset)
{
	/* The lowest mapping of a file maps its first PT_LOAD (file offset 0
	 * rounded down to a page); non-PIE executables have a bias of zero. */
	(void)map_offset;
	if (!img->is_dyn)
		return 0;
	return map_start - (img->first_load_vaddr & PAGE_MASK_4K);
}

int elf_image_vaddr_of_offset(struct elf_image *img, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < img->nphdrs; i++) {
		const Elf64_Phdr *ph = &img->phdrs[i];
		uint64_t first;

		if (ph->p_type != PT_LOAD)
			continue;
		/* mappings start at a page boundary of their segment's offset */
		first = ph->p_offset & PAGE_MASK_4K;
		if (offset >= first && offset < ph->p_offset + ph->p_filesz) {
			*vaddr = ph->p_vaddr - (ph->p_offset - offset);
			return 0;
		}
	}
	return -1;
}

int elf_image_flags_of_offset(struct elf_image *img, uint64_t offset, uint32_t *flags)
{
	const Elf64_Phdr *within = NULL;

	for (size_t i = 0; i < img->nphdrs; i++) {
		const Elf64_Phdr *ph = &img->phdrs[i];
		uint64_t first = ph->p_offset & PAGE_MASK_4K;

		if (ph->p_type != PT_LOAD || offset < first ||
		    (offset >= ph->p_offset && offset - ph->p_offset >= ph->p_filesz))
			continue;
		/* a segment's own mapping starts at its first page; a page two
		 * segments share belongs to the one that starts there */
		if (first == offset) {
			*flags = ph->p_flags;
			return 0;
		}
		if (!within)
			within = ph;
	}
	if (!within)
		return -1;
	*flags = within->p_flags;
	return 0;
}

bool elf_image_has_dwarf(struct elf_image *img)
{
	long i = find_section(img, ".debug_info");

	return i >= 0 && img->shdrs[i].sh_type != SHT_NOBITS && img->shdrs[i].sh_size > 0;
}

/* The GNU build-id among the notes in [p, p + len), as hex; 0 or -1. */
static int build_id_in(const uint8_t *p, size_t len, char *hex, size_t hexlen)
{
	size_t off = 0;

	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		uint64_t name_at, desc_at, next;

		memcpy(&nh, p + off, sizeof(nh));
		name_at = off + sizeof(nh);
		desc_at = name_at + (((uint64_t)nh.n_namesz + 3) & ~(uint64_t)3);
		next = desc_at + (((uint64_t)nh.n_descsz + 3) & ~(uint64_t)3);
		if (desc_at > len || nh.n_descsz > len - desc_at)
			return -1;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p + name_at, "GNU", 4) == 0) {
			if (!nh.n_descsz || hexlen < (size_t)nh.n_descsz * 2 + 1)
				return -1;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", p[desc_at + i]);
			return 0;
		}
		if (next > len)
			return -1;
		off = (size_t)next;
	}
	return -1;
}

/* The first bytes of [off, off + size) (NOTES_READ_MAX at most), then the
 * build-id in them. */
static int build_id_at(struct elf_image *img, uint64_t off, uint64_t size, char *hex, size_t len)
{
	uint8_t notes[NOTES_READ_MAX];
	size_t n = size < sizeof(notes) ? (size_t)size : sizeof(notes);

	if (!n || read_at(img, off, notes, n) < 0)
		return -1;
	return build_id_in(notes, n, hex, len);
}

int elf_image_build_id(struct elf_image *img, char *hex, size_t len)
{
	size_t seen = 0;
	long i;

	for (size_t k = 0; k < img->nphdrs && seen < NOTE_SEGMENTS_MAX; k++) {
		if (img->phdrs[k].p_type != PT_NOTE)
			continue;
		seen++;
		if (build_id_at(img, img->phdrs[k].p_offset, img->phdrs[k].p_filesz, hex, len) == 0)
			return 0;
	}
	/* a file without program headers for its notes (some debug files) */
	i = find_section(img, ".note.gnu.build-id");
	if (i < 0 || img->shdrs[i].sh_type != SHT_NOTE)
		return -1;
	return build_id_at(img, img->shdrs[i].sh_offset, img->shdrs[i].sh_size, hex, len);
}

int elf_image_debuglink(struct elf_image *img, char *name, size_t len)
{
	long i = find_section(img, ".gnu_debuglink");
	const char *data;
	size_t size, n;

	/* a SHT_NOBITS section has a size but no bytes */
	if (i < 0 || img->shdrs[i].sh_size > DEBUGLINK_MAX ||
	    !(data = elf_image_section_bytes(img, (size_t)i, &size)) || size < 5)
		return -1;
	n = strnlen(data, size);
	if (n == 0 || n >= len || n == size)
		return -1;
	memcpy(name, data, n + 1);
	return strchr(name, '/') ? -1 : 0; /* a link is a file name, never a path */
}

int elf_image_each_string(struct elf_image *img, const char *section,
			  int (*fn)(const char *s, size_t len, void *arg), void *arg)
{
	long i = find_section(img, section);
	const char *p, *end;
	size_t size;

	if (i < 0 || !(p = elf_image_section_bytes(img, (size_t)i, &size)))
		return 0; /* an empty section has no bytes */
	end = p + size;
	while (p < end) {
		size_t n = strnlen(p, (size_t)(end - p));
		int rc;

		if (n > 0 && (rc = fn(p, n, arg)) != 0)
			return rc;
		p += n + 1;
	}
	return 0;
}
