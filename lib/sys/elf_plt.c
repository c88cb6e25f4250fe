/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/elf_plt.h"

#include <stdlib.h>
#include <string.h>

#define R_JUMP_SLOT 7 /* R_X86_64_JUMP_SLOT */
#define R_GLOB_DAT 6  /* R_X86_64_GLOB_DAT */
#define STUB_NAME_MAX 256

/* A relocated GOT slot and the dynamic symbol it is bound to. */
struct slot {
	uint64_t got;
	const char *name; /* in the image's string table */
};

static int by_got(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

static int by_start(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool section_named(struct elf_image *img, const Elf64_Shdr *sh, const char *name)
{
	const char *s = elf_image_string(img, img->shstrndx, sh->sh_name);

	return s && strcmp(s, name) == 0;
}

/* The JUMP_SLOT and GLOB_DAT relocations of every SHT_RELA section, by
 * GOT address; their names from the symbol table each section links. */
static struct slot *read_slots(struct elf_image *img, size_t *n)
{
	struct slot *v = NULL;
	size_t cap = 0;

	*n = 0;
	for (size_t k = 1; k < elf_image_section_count(img); k++) {
		const Elf64_Shdr *sh = elf_image_section_header(img, k);
		const Elf64_Shdr *symtab;
		const uint8_t *rel, *syms;
		size_t len, slen, count;

		if (sh->sh_type != SHT_RELA || sh->sh_entsize != sizeof(Elf64_Rela) ||
		    sh->sh_link == 0 || sh->sh_link >= elf_image_section_count(img))
			continue;
		symtab = elf_image_section_header(img, sh->sh_link);
		if (symtab->sh_entsize != sizeof(Elf64_Sym) ||
		    symtab->sh_link >= elf_image_section_count(img) ||
		    !(rel = elf_image_section_bytes(img, k, &len)) ||
		    !(syms = elf_image_section_bytes(img, sh->sh_link, &slen)))
			continue;
		count = len / sizeof(Elf64_Rela);
		for (size_t i = 0; i < count && *n < ELF_PLT_STUBS_MAX; i++) {
			Elf64_Rela r;
			Elf64_Sym sym;
			uint64_t si;
			const char *name;

			memcpy(&r, rel + i * sizeof(r), sizeof(r));
			si = ELF64_R_SYM(r.r_info);
			if ((ELF64_R_TYPE(r.r_info) != R_JUMP_SLOT &&
			     ELF64_R_TYPE(r.r_info) != R_GLOB_DAT) ||
			    si == 0 || si >= slen / sizeof(Elf64_Sym))
				continue;
			memcpy(&sym, syms + si * sizeof(sym), sizeof(sym));
			name = elf_image_string(img, symtab->sh_link, sym.st_name);
			if (!name || !name[0])
				continue;
			if (*n == cap) {
				struct slot *w = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

				if (!w) {
					free(v);
					*n = 0;
					return NULL;
				}
				v = w;
			}
			v[(*n)++] = (struct slot){ r.r_offset, name };
		}
	}
	if (*n)
		qsort(v, *n, sizeof(*v), by_got);
	return v;
}

static const struct slot *find_slot(const struct slot *v, size_t n, uint64_t got)
{
	struct slot key = { got, NULL };

	return n ? bsearch(&key, v, n, sizeof(*v), by_got) : NULL;
}

/*
 * The GOT slot a stub jumps through: its "jmp *disp32(%rip)" (ff 25),
 * after an endbr64 (f3 0f 1e fa) and a bnd prefix (f2) when there are;
 * 0 if the stub has none in its first bytes (PLT0, a lazy stub's push).
 */
static uint64_t stub_got(const uint8_t *b, size_t len, uint64_t addr)
{
	size_t i = 0;
	int32_t disp;

	if (len >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;
	if (i < len && b[i] == 0xf2)
		i++;
	if (i + 6 > len || b[i] != 0xff || b[i + 1] != 0x25)
		return 0;
	memcpy(&disp, b + i + 2, 4);
	return addr + i + 6 + (uint64_t)(int64_t)disp;
}

/* Stub names of one PLT section, appended to t->stubs (its names kept in
 * *names, grown as needed). */
static int add_stubs(struct elf_plt *t, size_t most, struct elf_image *img, size_t k,
		     const struct slot *slots, size_t nslots, char **names, size_t *names_len,
		     size_t *cap)
{
	const Elf64_Shdr *sh = elf_image_section_header(img, k);
	uint64_t ent = sh->sh_entsize == 8 || sh->sh_entsize == 16 ? sh->sh_entsize : 16;
	const uint8_t *b;
	size_t len;

	b = elf_image_section_bytes(img, k, &len);
	if (!b)
		return 0;
	for (uint64_t at = 0; at + ent <= len && t->stubs.n < most; at += ent) {
		const struct slot *s = find_slot(slots, nslots, stub_got(b + at, ent, sh->sh_addr + at));
		size_t nlen;

		if (!s)
			continue;
		nlen = strnlen(s->name, STUB_NAME_MAX);
		if (*names_len + nlen + 5 > *cap) {
			char *w = realloc(*names, *cap = 2 * (*cap + nlen + 5));

			if (!w)
				return -1;
			*names = w;
		}
		memcpy(*names + *names_len, s->name, nlen);
		memcpy(*names + *names_len + nlen, "@plt", 5);
		/* offsets for now: the buffer may move until all are in */
		t->stubs.v[t->stubs.n++] = (struct elf_sym){ sh->sh_addr + at, ent,
							     (const char *)(uintptr_t)*names_len };
		*names_len += nlen + 5;
	}
	return 0;
}

/* c (not yet kept) overlaps a code section kept before it. */
static bool overlaps_kept(const struct elf_plt *t, const struct elf_code_section *c)
{
	for (size_t i = 0; i < t->ncode; i++)
		if (c->start < t->code[i].end && t->code[i].start < c->end)
			return true;
	return false;
}

int elf_plt_load(struct elf_plt *t, struct elf_image *img)
{
	size_t nslots = 0, names_len = 0, cap = 0, most = 0;
	struct slot *slots = NULL;
	char *names = NULL;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	for (size_t k = 1; k < elf_image_section_count(img) && t->ncode < ELF_CODE_SECTIONS_MAX; k++) {
		const Elf64_Shdr *sh = elf_image_section_header(img, k);
		struct elf_code_section *c = &t->code[t->ncode];

		if (!(sh->sh_flags & SHF_EXECINSTR) || !(sh->sh_flags & SHF_ALLOC) || !sh->sh_size ||
		    sh->sh_addr + sh->sh_size < sh->sh_addr)
			continue;
		c->start = sh->sh_addr;
		c->end = sh->sh_addr + sh->sh_size;
		/* a valid image's code sections do not overlap; a hostile one's
		 * would give an address two answers: the first one kept wins */
		if (overlaps_kept(t, c))
			continue;
		c->plt = section_named(img, sh, ".plt") || section_named(img, sh, ".plt.got") ||
			 section_named(img, sh, ".plt.sec");
		if (c->plt && sh->sh_type == SHT_PROGBITS)
			most += sh->sh_size / 8;
		t->ncode++;
	}
	if (!most)
		return 0;
	slots = read_slots(img, &nslots);
	if (!slots)
		return 0; /* no relocations: every stub is [plt] */
	most = most < ELF_PLT_STUBS_MAX ? most : ELF_PLT_STUBS_MAX;
	t->stubs.v = calloc(most, sizeof(*t->stubs.v));
	if (!t->stubs.v) {
		rc = -1;
		goto out;
	}
	for (size_t k = 1; k < elf_image_section_count(img); k++) {
		const Elf64_Shdr *sh = elf_image_section_header(img, k);

		const struct elf_code_section *c = elf_plt_code_section(t, sh->sh_addr);

		if (sh->sh_type != SHT_PROGBITS || !(sh->sh_flags & SHF_EXECINSTR) ||
		    !(section_named(img, sh, ".plt") || section_named(img, sh, ".plt.got") ||
		      section_named(img, sh, ".plt.sec")))
			continue;
		/* only a section kept above (not one left out for overlapping) */
		if (!c || !c->plt || c->start != sh->sh_addr || c->end != sh->sh_addr + sh->sh_size)
			continue;
		if (add_stubs(t, most, img, k, slots, nslots, &names, &names_len, &cap) < 0) {
			rc = -1;
			goto out;
		}
	}
	for (size_t i = 0; i < t->stubs.n; i++)
		t->stubs.v[i].name = names + (uintptr_t)t->stubs.v[i].name;
	t->stubs.names = names;
	names = NULL;
	qsort(t->stubs.v, t->stubs.n, sizeof(*t->stubs.v), by_start);
out:
	free(names);
	free(slots);
	if (rc < 0)
		elf_plt_free(t);
	return rc;
}

void elf_plt_free(struct elf_plt *t)
{
	elf_symtab_free(&t->stubs);
	t->ncode = 0;
}

const struct elf_code_section *elf_plt_code_section(const struct elf_plt *t, uint64_t addr)
{
	for (size_t i = 0; i < t->ncode; i++)
		if (addr >= t->code[i].start && addr < t->code[i].end)
			return &t->code[i];
	return NULL;
}

bool elf_plt_same_section(const struct elf_plt *t, uint64_t a, uint64_t b)
{
	return !t->ncode || elf_plt_code_section(t, a) == elf_plt_code_section(t, b);
}

const char *elf_plt_name(const struct elf_plt *t, uint64_t addr, uint64_t *offset)
{
	const struct elf_code_section *c = elf_plt_code_section(t, addr);
	const struct elf_sym *s;

	if (!c || !c->plt)
		return NULL;
	s = elf_symtab_find(&t->stubs, addr);
	if (s && addr - s->start < s->size) {
		if (offset)
			*offset = addr - s->start;
		return s->name;
	}
	if (offset)
		*offset = addr - c->start;
	return "[plt]";
}
