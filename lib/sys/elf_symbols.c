/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/elf_symbols.h"

#include <stdlib.h>
#include <string.h>

static int by_start(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Function symbols of the first section of this type; -1 if there is none. */
static int load_table(struct elf_symtab *t, struct elf_image *img, uint32_t type)
{
	for (size_t k = 1; k < elf_image_section_count(img); k++) {
		const Elf64_Shdr *sh = elf_image_section_header(img, k);
		const uint8_t *data;
		size_t count, len, names_len = 0, used = 0;

		if (sh->sh_type != type || sh->sh_entsize != sizeof(Elf64_Sym))
			continue;
		data = elf_image_section_bytes(img, k, &len);
		if (!data)
			return -1;
		count = len / sizeof(Elf64_Sym);
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < count; i++) {
				Elf64_Sym sym;
				const char *name;

				memcpy(&sym, data + i * sizeof(sym), sizeof(sym));
				if (sym.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym.st_info) != STT_FUNC ||
				    !sym.st_value)
					continue;
				name = elf_image_string(img, sh->sh_link, sym.st_name);
				if (!name || !name[0])
					continue;
				/* "clock_nanosleep@@GLIBC_2.17": the name without its version */
				size_t nlen = strcspn(name, "@");

				if (pass == 0) {
					names_len += nlen + 1;
					t->n++;
					continue;
				}
				t->v[used].start = sym.st_value;
				t->v[used].size = sym.st_size;
				t->v[used].name = t->names + names_len;
				memcpy(t->names + names_len, name, nlen);
				t->names[names_len + nlen] = '\0';
				names_len += nlen + 1;
				used++;
			}
			if (pass == 0) {
				t->v = calloc(t->n ? t->n : 1, sizeof(*t->v));
				t->names = malloc(names_len ? names_len : 1);
				if (!t->v || !t->names)
					return -1;
				names_len = 0;
			}
		}
		t->n = used;
		qsort(t->v, t->n, sizeof(*t->v), by_start);
		return 0;
	}
	return -1;
}

int elf_symtab_load(struct elf_symtab *t, struct elf_image *img)
{
	memset(t, 0, sizeof(*t));
	if (load_table(t, img, SHT_SYMTAB) == 0 && t->n)
		return 0;
	elf_symtab_free(t);
	if (load_table(t, img, SHT_DYNSYM) == 0)
		return 0;
	elf_symtab_free(t);
	return -1;
}

void elf_symtab_free(struct elf_symtab *t)
{
	free(t->v);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

const struct elf_sym *elf_symtab_find(const struct elf_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* a symbol of unknown size holds what lies before the next one */
	if (t->v[lo - 1].size ? addr < t->v[lo - 1].start + t->v[lo - 1].size
			      : lo < t->n || addr - t->v[lo - 1].start < 4096)
		return &t->v[lo - 1];
	return NULL;
}
