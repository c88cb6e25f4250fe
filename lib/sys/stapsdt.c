// SPDX-License-Identifier: Apache-2.0
#include "sys/stapsdt.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sys/elf_image.h"

#define NT_STAPSDT 3
#define NOTES_MAX 4096 /* notes looked at per file */

static const struct {
	const char *name[4]; /* 64, 32, 16 and 8-bit names */
	enum xreg reg;
} regs[] = {
	{ { "rax", "eax", "ax", "al" }, XREG_RAX }, { { "rbx", "ebx", "bx", "bl" }, XREG_RBX },
	{ { "rcx", "ecx", "cx", "cl" }, XREG_RCX }, { { "rdx", "edx", "dx", "dl" }, XREG_RDX },
	{ { "rsi", "esi", "si", "sil" }, XREG_RSI }, { { "rdi", "edi", "di", "dil" }, XREG_RDI },
	{ { "rbp", "ebp", "bp", "bpl" }, XREG_RBP }, { { "rsp", "esp", "sp", "spl" }, XREG_RSP },
	{ { "r8", "r8d", "r8w", "r8b" }, XREG_R8 },   { { "r9", "r9d", "r9w", "r9b" }, XREG_R9 },
	{ { "r10", "r10d", "r10w", "r10b" }, XREG_R10 }, { { "r11", "r11d", "r11w", "r11b" }, XREG_R11 },
	{ { "r12", "r12d", "r12w", "r12b" }, XREG_R12 }, { { "r13", "r13d", "r13w", "r13b" }, XREG_R13 },
	{ { "r14", "r14d", "r14w", "r14b" }, XREG_R14 }, { { "r15", "r15d", "r15w", "r15b" }, XREG_R15 },
	{ { "rip", "eip", "ip", NULL }, XREG_RIP },
};

/* "%name" at *p: the register, *p moved past it; -1 if not one. */
static int parse_reg(const char **p, enum xreg *out)
{
	const char *s = *p;
	size_t n = 0;

	if (*s++ != '%')
		return -1;
	while (n < 5 && isalnum((unsigned char)s[n]))
		n++;
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int w = 0; w < 4; w++)
			if (regs[i].name[w] && strlen(regs[i].name[w]) == n &&
			    !memcmp(regs[i].name[w], s, n)) {
				*out = regs[i].reg;
				*p = s + n;
				return 0;
			}
	return -1;
}

/* A decimal number at *p, within +-2^31; -1 if none. */
static int parse_num(const char **p, int64_t *out)
{
	char *end;
	long long v;

	if (!isdigit((unsigned char)**p) && !(**p == '-' && isdigit((unsigned char)(*p)[1])))
		return -1;
	errno = 0;
	v = strtoll(*p, &end, 10);
	if (errno || v > INT32_MAX || v < INT32_MIN)
		return -1;
	*out = v;
	*p = end;
	return 0;
}

/* One argument, "[-]SIZE@LOCATION"; -1 if not understood. */
static int parse_one(const char **p, struct stapsdt_arg *a)
{
	int64_t size;

	memset(a, 0, sizeof(*a));
	if (parse_num(p, &size) < 0 || *(*p)++ != '@')
		return -1;
	a->is_signed = size < 0;
	size = llabs(size);
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return -1;
	a->size = (uint8_t)size;
	if (**p == '$') {
		++*p;
		a->kind = STAPSDT_ARG_CONST;
		return parse_num(p, &a->value);
	}
	if (**p == '%') {
		a->kind = STAPSDT_ARG_REG;
		return parse_reg(p, &a->reg);
	}
	a->kind = STAPSDT_ARG_MEM;
	if (**p != '(' && parse_num(p, &a->value) < 0)
		return -1;
	if (*(*p)++ != '(' || parse_reg(p, &a->reg) < 0 || *(*p)++ != ')')
		return -1;
	return 0;
}

int stapsdt_parse_args(const char *spec, struct stapsdt_arg *args, int max)
{
	const char *p = spec;
	int n = 0;

	for (;;) {
		while (*p == ' ')
			p++;
		if (!*p)
			return n;
		if (n == max || parse_one(&p, &args[n]) < 0 || (*p && *p != ' '))
			return -1;
		n++;
	}
}

/* The file offset of linked address vaddr, by the PT_LOAD whose file
 * bytes hold it; -1 if none does or the file is shorter. */
static int offset_of_vaddr(const struct elf_image *img, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < img->nphdrs; i++) {
		const Elf64_Phdr *ph = &img->phdrs[i];

		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr < ph->p_filesz) {
			*off = vaddr - ph->p_vaddr + ph->p_offset;
			/* headers may claim bytes the file does not have */
			return *off < ph->p_offset || *off >= img->file_size ? -1 : 0;
		}
	}
	return -1;
}

/* The string at desc[*at..len), NUL-terminated inside; NULL if not. */
static const char *note_string(const char *desc, size_t len, size_t *at)
{
	const char *s = desc + *at, *nul;

	if (*at >= len || !(nul = memchr(s, '\0', len - *at)))
		return NULL;
	*at += (size_t)(nul - s) + 1;
	return s;
}

/* One stapsdt note's descriptor: its site if it is provider:name (0),
 * 1 if another probe, -1 if it is this one and cannot be used. */
static int read_note(struct elf_image *img, const char *desc, size_t len, const char *provider,
		     const char *name, uint64_t base_addr, struct stapsdt_probe *out)
{
	uint64_t pc, base, sem;
	size_t at = 24;
	const char *prov, *pname, *args;

	if (len < 24)
		return 1;
	memcpy(&pc, desc, 8);
	memcpy(&base, desc + 8, 8);
	memcpy(&sem, desc + 16, 8);
	if (!(prov = note_string(desc, len, &at)) || !(pname = note_string(desc, len, &at)) ||
	    strcmp(prov, provider) || strcmp(pname, name))
		return 1;
	args = note_string(desc, len, &at);
	/* prelink moved the file: .stapsdt.base says by how much */
	if (base_addr && base) {
		pc += base_addr - base;
		if (sem)
			sem += base_addr - base;
	}
	memset(out, 0, sizeof(*out));
	if (!args || (out->nargs = stapsdt_parse_args(args, out->args, STAPSDT_MAX_ARGS)) < 0 ||
	    offset_of_vaddr(img, pc, &out->pc_offset) < 0 ||
	    (sem && offset_of_vaddr(img, sem, &out->sem_offset) < 0))
		return -1;
	return 0;
}

int stapsdt_find(struct elf_image *img, const char *provider, const char *name,
		 struct stapsdt_probe *out)
{
	uint64_t base_addr = 0, base_size;
	int found = 0, notes = 0;

	if (elf_image_section(img, ".stapsdt.base", &base_addr, &base_size) < 0)
		base_addr = 0;
	for (size_t i = 1; i < elf_image_section_count(img); i++) {
		const Elf64_Shdr *sh = elf_image_section_header(img, i);
		const char *p;
		size_t len, at = 0;

		if (!sh || sh->sh_type != SHT_NOTE || !(p = elf_image_section_bytes(img, i, &len)))
			continue;
		while (len - at >= 12 && notes++ < NOTES_MAX) {
			uint32_t nsz, dsz, type;
			size_t name_end, desc_end;
			struct stapsdt_probe site;
			int rc;

			memcpy(&nsz, p + at, 4);
			memcpy(&dsz, p + at + 4, 4);
			memcpy(&type, p + at + 8, 4);
			name_end = at + 12 + (((size_t)nsz + 3) & ~(size_t)3);
			desc_end = name_end + (((size_t)dsz + 3) & ~(size_t)3);
			if (name_end > len || desc_end > len || name_end + dsz > len)
				break;
			if (type == NT_STAPSDT && nsz == 8 && !memcmp(p + at + 12, "stapsdt", 8)) {
				rc = read_note(img, p + name_end, dsz, provider, name, base_addr,
					       &site);
				if (rc < 0 || (rc == 0 && found))
					return -1; /* unusable, or a second site */
				if (rc == 0) {
					*out = site;
					found = 1;
				}
			}
			at = desc_end;
		}
	}
	return found ? 0 : 1;
}
