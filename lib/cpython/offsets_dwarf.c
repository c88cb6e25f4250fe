/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/offsets_dwarf.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

struct field_spec {
	enum py_offset_index field; /* a name missing from PY_OFFSET_FIELDS does not compile */
	int first_minor, last_minor;
	const char *type, *member; /* member NULL: sizeof(type) */
};

static const struct field_spec specs[] = {
#define PY_FIELD(f, lo, hi, t, m) { PY_OFF_##f, lo, hi, #t, #m },
#define PY_SIZE(f, lo, hi, t) { PY_OFF_##f, lo, hi, #t, NULL },
#include "offsets/field_specs.def"
#undef PY_FIELD
#undef PY_SIZE
};

#define SPEC_COUNT (sizeof(specs) / sizeof(specs[0]))

/* Offsets and sizes beyond any CPython struct's. */
#define DWARF_MAX_OFFSET (1L << 20)

/* Follows typedefs and qualifiers to the underlying type DIE. */
static bool strip_type(Dwarf_Die *die)
{
	for (int depth = 0; depth < 16; depth++) {
		Dwarf_Attribute attr;
		int tag = dwarf_tag(die);

		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_atomic_type)
			return true;
		if (!dwarf_attr(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, die))
			return false;
	}
	return false;
}

/* Finds member name in a struct/union DIE, looking inside anonymous members.
 * A hostile binary's DWARF can make those loop: *budget bounds the members
 * looked at, depth the nesting. */
static bool find_member(Dwarf_Die *parent, const char *name, Dwarf_Word *offset, Dwarf_Die *type,
			int depth, int *budget)
{
	Dwarf_Die child;

	if (depth > 8 || dwarf_child(parent, &child) != 0)
		return false;
	do {
		Dwarf_Attribute attr;
		Dwarf_Word loc = 0;
		const char *cname;

		if (--*budget < 0)
			return false;
		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		if (dwarf_attr(&child, DW_AT_data_member_location, &attr))
			dwarf_formudata(&attr, &loc);
		if (loc > DWARF_MAX_OFFSET)
			continue; /* hostile: it could wrap around to a small sum */
		if (!dwarf_attr(&child, DW_AT_type, &attr) || !dwarf_formref_die(&attr, type))
			continue;
		cname = dwarf_diename(&child);
		if (cname && strcmp(cname, name) == 0) {
			*offset = loc;
			return true;
		}
		if (!cname) { /* anonymous struct or union */
			Dwarf_Die inner = *type;
			Dwarf_Word sub;

			if (strip_type(&inner) &&
			    find_member(&inner, name, &sub, type, depth + 1, budget)) {
				*offset = loc + sub;
				return true;
			}
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Offset of a dotted member path inside a struct DIE. */
static long member_path_offset(Dwarf_Die *st, const char *path)
{
	char buf[128], *save = NULL;
	Dwarf_Die cur = *st;
	long total = 0;
	int budget = 1 << 14;

	if (strlen(path) >= sizeof(buf))
		return -1;
	strcpy(buf, path);
	for (char *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		Dwarf_Word off;
		Dwarf_Die type;

		/* no CPython struct is larger than 1 MiB: a bigger offset is
		 * hostile (and a sum of several would overflow) */
		if (!strip_type(&cur) || !find_member(&cur, tok, &off, &type, 0, &budget) ||
		    off > DWARF_MAX_OFFSET || total + (long)off > DWARF_MAX_OFFSET)
			return -1;
		total += (long)off;
		cur = type;
	}
	return total;
}

/* Is this top-level DIE the complete definition of the named type? */
static bool die_names_type(Dwarf_Die *die, const char *type, Dwarf_Die *def)
{
	bool want_struct = strncmp(type, "struct ", 7) == 0;
	const char *name = want_struct ? type + 7 : type;
	const char *dname = dwarf_diename(die);
	int tag = dwarf_tag(die);

	if (!dname || strcmp(dname, name) != 0)
		return false;
	if (want_struct ? tag != DW_TAG_structure_type
			: tag != DW_TAG_typedef && tag != DW_TAG_structure_type)
		return false;
	*def = *die;
	if (!strip_type(def) || dwarf_hasattr(def, DW_AT_declaration))
		return false;
	return dwarf_tag(def) == DW_TAG_structure_type || dwarf_tag(def) == DW_TAG_union_type;
}

typedef bool (*type_visitor)(Dwarf_Die *die, void *arg);

/* Visits each top-level DIE of every compile unit until fn returns true. */
static void each_top_level_die(Dwarf *dw, type_visitor fn, void *arg)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			do {
				if (fn(&child, arg))
					return;
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
}

struct resolve_state {
	int minor;
	struct py_offsets *o;
	bool done[SPEC_COUNT];
	size_t remaining;
	int resolved;
};

static bool resolve_visitor(Dwarf_Die *die, void *arg)
{
	struct resolve_state *st = arg;

	if (!dwarf_diename(die))
		return false;
	for (size_t i = 0; i < SPEC_COUNT; i++) {
		Dwarf_Die def;
		long v;

		if (st->done[i] || !die_names_type(die, specs[i].type, &def))
			continue;
		if (specs[i].member) {
			v = member_path_offset(&def, specs[i].member);
		} else {
			Dwarf_Attribute attr;
			Dwarf_Word size;

			v = dwarf_attr(&def, DW_AT_byte_size, &attr) &&
					    dwarf_formudata(&attr, &size) == 0
				    ? (long)size
				    : -1;
		}
		/* no offset (maybe another CU has the full definition), or one no
		 * CPython struct has: hostile DWARF must not reach the readers */
		if (v < 0 || v > DWARF_MAX_OFFSET)
			continue;
		*py_offsets_field_at(st->o, specs[i].field) = (int32_t)v;
		st->done[i] = true;
		st->resolved++;
		st->remaining--;
	}
	return st->remaining == 0;
}

/* DWARF of the file open at fd, read through it (never mapped: a
 * target's file changed under us must give errors, not SIGBUS). */
static Dwarf *open_dwarf(int fd, Elf **elf)
{
	Dwarf *dw;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!*elf)
		return NULL;
	dw = dwarf_begin_elf(*elf, DWARF_C_READ, NULL);
	if (!dw) {
		elf_end(*elf);
		*elf = NULL;
	}
	return dw;
}

static void close_dwarf(Dwarf *dw, Elf *elf)
{
	dwarf_end(dw);
	elf_end(elf);
}

int dwarf_offsets_resolve(const char *path, int minor, struct py_offsets *o)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0)
		return -1;
	n = dwarf_offsets_resolve_fd(fd, minor, o);
	close(fd);
	return n;
}

int dwarf_offsets_resolve_fd(int fd, int minor, struct py_offsets *o)
{
	struct resolve_state st = { .minor = minor, .o = o };
	Elf *elf;
	Dwarf *dw = open_dwarf(fd, &elf);

	if (!dw)
		return -1;
	for (size_t i = 0; i < SPEC_COUNT; i++) {
		if (minor < specs[i].first_minor || minor > specs[i].last_minor)
			st.done[i] = true;
		else
			st.remaining++;
	}
	if (st.remaining)
		each_top_level_die(dw, resolve_visitor, &st);
	close_dwarf(dw, elf);
	return st.resolved;
}

struct offsetof_state {
	const char *type, *member;
	long result;
};

static bool offsetof_visitor(Dwarf_Die *die, void *arg)
{
	struct offsetof_state *st = arg;
	Dwarf_Die def;

	if (!die_names_type(die, st->type, &def))
		return false;
	st->result = member_path_offset(&def, st->member);
	return st->result >= 0;
}

long dwarf_offsetof(const char *path, const char *type, const char *member)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	long v;

	if (fd < 0)
		return -1;
	v = dwarf_offsetof_fd(fd, type, member);
	close(fd);
	return v;
}

long dwarf_offsetof_fd(int fd, const char *type, const char *member)
{
	struct offsetof_state st = { type, member, -1 };
	Elf *elf;
	Dwarf *dw = open_dwarf(fd, &elf);

	if (!dw)
		return -1;
	each_top_level_die(dw, offsetof_visitor, &st);
	close_dwarf(dw, elf);
	return st.result;
}
