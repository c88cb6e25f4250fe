/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/elf_image.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PAGE_MASK_4K (~(uint64_t)4095)

static int open_with(struct elf_image *img, int fd, Elf_Cmd cmd)
{
	GElf_Ehdr ehdr;
	size_t nphdr;
	Elf *elf;

	memset(img, 0, sizeof(*img));
	img->fd = fd;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		img->fd = -1;
		return -1;
	}
	elf = elf_begin(img->fd, cmd, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    !gelf_getehdr(elf, &ehdr) || elf_getphdrnum(elf, &nphdr) != 0) {
		if (elf)
			elf_end(elf);
		close(img->fd);
		img->fd = -1;
		return -1;
	}
	img->elf = elf;
	img->is_dyn = ehdr.e_type == ET_DYN;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			img->first_load_vaddr = ph.p_vaddr;
			img->first_load_offset = ph.p_offset;
			break;
		}
	}
	return 0;
}

int elf_image_open(struct elf_image *img, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		memset(img, 0, sizeof(*img));
		img->fd = -1;
		return -1;
	}
	return open_with(img, fd, ELF_C_READ_MMAP);
}

int elf_image_open_fd(struct elf_image *img, int fd)
{
	/* read(2), never mmap(2): a file truncated while we read it must
	 * give errors, not SIGBUS */
	return open_with(img, fd, ELF_C_READ);
}

void elf_image_close(struct elf_image *img)
{
	if (img->elf)
		elf_end(img->elf);
	if (img->fd >= 0)
		close(img->fd);
	img->elf = NULL;
	img->fd = -1;
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;

		if (!gelf_getshdr(scn, out))
			continue;
		sname = elf_strptr(elf, shstrndx, out->sh_name);
		if (sname && strcmp(sname, name) == 0)
			return scn;
	}
	return NULL;
}

static int symbol_in(Elf *elf, Elf64_Word type, const char *name, uint64_t *value, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || sh.sh_entsize == 0)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *sname;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			sname = elf_strptr(elf, sh.sh_link, sym.st_name);
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
	if (symbol_in(img->elf, SHT_DYNSYM, name, value, size) == 0)
		return 0;
	return symbol_in(img->elf, SHT_SYMTAB, name, value, size);
}

int elf_image_section(struct elf_image *img, const char *name, uint64_t *addr, uint64_t *size)
{
	GElf_Shdr sh;

	if (!find_section(img->elf, name, &sh))
		return -1;
	*addr = sh.sh_addr;
	*size = sh.sh_size;
	return 0;
}

int elf_image_read_vaddr(struct elf_image *img, uint64_t vaddr, void *buf, size_t len)
{
	size_t nphdr;

	if (elf_getphdrnum(img->elf, &nphdr) != 0)
		return -1;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(img->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* [vaddr, vaddr + len) inside the segment's file bytes, in
		 * arithmetic that cannot wrap (both come from the file) */
		if (vaddr < ph.p_vaddr || len > ph.p_filesz || vaddr - ph.p_vaddr > ph.p_filesz - len ||
		    ph.p_offset > (uint64_t)INT64_MAX - ph.p_filesz)
			continue;
		if (pread(img->fd, buf, len, (off_t)(ph.p_offset + (vaddr - ph.p_vaddr))) ==
		    (ssize_t)len)
			return 0;
		return -1;
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
	size_t nphdr;

	if (elf_getphdrnum(img->elf, &nphdr) != 0)
		return -1;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;
		uint64_t first;

		if (!gelf_getphdr(img->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* mappings start at a page boundary of their segment's offset */
		first = ph.p_offset & PAGE_MASK_4K;
		if (offset >= first && offset < ph.p_offset + ph.p_filesz) {
			*vaddr = ph.p_vaddr - (ph.p_offset - offset);
			return 0;
		}
	}
	return -1;
}

bool elf_image_has_dwarf(struct elf_image *img)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(img->elf, ".debug_info", &sh);

	return scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

int elf_image_build_id(struct elf_image *img, char *hex, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(img->elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && data->d_buf && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) != 0)
				continue;
			if (len < (size_t)nh.n_descsz * 2 + 1) /* no 32-bit wrap-around */
				return -1;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", desc[i]);
			return 0;
		}
	}
	return -1;
}

int elf_image_debuglink(struct elf_image *img, char *name, size_t len)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(img->elf, ".gnu_debuglink", &sh);
	Elf_Data *data;
	size_t n;

	/* a SHT_NOBITS section has a size but no bytes */
	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_buf || data->d_size < 5)
		return -1;
	n = strnlen(data->d_buf, data->d_size);
	if (n == 0 || n >= len || n == data->d_size)
		return -1;
	memcpy(name, data->d_buf, n + 1);
	return strchr(name, '/') ? -1 : 0; /* a link is a file name, never a path */
}

int elf_image_each_string(struct elf_image *img, const char *section,
			  int (*fn)(const char *s, size_t len, void *arg), void *arg)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(img->elf, section, &sh);
	Elf_Data *data;

	if (!scn || sh.sh_type == SHT_NOBITS || !(data = elf_getdata(scn, NULL)) || !data->d_buf)
		return 0; /* an empty section has no buffer */
	const char *p = data->d_buf, *end = p + data->d_size;

	while (p < end) {
		size_t n = strnlen(p, (size_t)(end - p));
		int rc;

		if (n > 0 && (rc = fn(p, n, arg)) != 0)
			return rc;
		p += n + 1;
	}
	return 0;
}
