// SPDX-License-Identifier: Apache-2.0
/*
 * ELF and DWARF readers, tried on this very test binary: its own symbols,
 * sections and build id, and the DWARF offsets of a struct defined here
 * compared with what the compiler says (offsetof). Exits 77 (skipped) when
 * the build has no debug information.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "unit_check.h"

#include "cpython/offsets_dwarf.h"
#include "sys/elf_image.h"

/* Shapes like CPython's: nested structs, an anonymous union, a typedef. */
struct probe_inner {
	int kind;
	void *head;
};

typedef struct probe_state {
	char pad[24];
	struct probe_inner interpreters;
	union {
		long anon_a;
		short anon_b;
	};
	unsigned int bits : 3;
	double tail;
} probe_state_t;

probe_state_t probe_instance; /* keeps the type in the DWARF */
const char probe_rodata_marker[] = "3.9.18";

int main(void)
{
	struct elf_image img;
	uint64_t value, size;
	char hex[128];

	if (elf_image_open(&img, "/proc/self/exe") != 0) {
		fprintf(stderr, "cannot open /proc/self/exe\n");
		return 1;
	}
	CHECK(elf_image_symbol(&img, "probe_instance", &value, &size) == 0 &&
	      size == sizeof(probe_instance));
	CHECK(elf_image_symbol(&img, "no_such_symbol_anywhere", &value, &size) < 0);
	CHECK(elf_image_section(&img, ".text", &value, &size) == 0 && size > 0);
	CHECK(elf_image_section(&img, ".no_such_section", &value, &size) < 0);
	CHECK(elf_image_symbol(&img, "probe_rodata_marker", &value, &size) == 0);
	char marker[7] = { 0 };
	CHECK(elf_image_read_vaddr(&img, value, marker, 6) == 0 && strcmp(marker, "3.9.18") == 0);
	if (elf_image_build_id(&img, hex, sizeof(hex)) == 0)
		CHECK(strlen(hex) >= 16);
	if (!elf_image_has_dwarf(&img)) {
		elf_image_close(&img);
		printf("%d passed, %d failed (DWARF checks skipped: no debug info)\n", passed,
		       failed);
		return failed ? 1 : 77;
	}
	elf_image_close(&img);
	CHECK(dwarf_offsetof("/proc/self/exe", "probe_state_t", "interpreters.head") ==
	      (long)offsetof(probe_state_t, interpreters.head));
	CHECK(dwarf_offsetof("/proc/self/exe", "struct probe_state", "tail") ==
	      (long)offsetof(probe_state_t, tail));
	CHECK(dwarf_offsetof("/proc/self/exe", "probe_state_t", "anon_b") ==
	      (long)offsetof(probe_state_t, anon_b));
	CHECK(dwarf_offsetof("/proc/self/exe", "probe_state_t", "interpreters.nope") == -1);
	CHECK(dwarf_offsetof("/proc/self/exe", "no_such_type_t", "x") == -1);
	CHECK(dwarf_offsetof("/no/such/file", "probe_state_t", "tail") == -1);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
