// SPDX-License-Identifier: Apache-2.0
/*
 * Names addresses of an ELF file the way the tools name native frames in
 * its PLT sections:
 *     plt_probe FILE HEXADDR...
 * prints, per address (as linked), "HEXADDR NAME+0xOFFSET", or
 * "HEXADDR -" where the address is in no PLT section. Used by
 * tests/test_native.py to hold sys/elf_plt.c to what objdump says every
 * stub of a real library is, byte by byte: the profiling test alone can
 * only see the stubs that the CPU's timer happens to interrupt.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sys/elf_plt.h"

int main(int argc, char **argv)
{
	struct elf_image img;
	struct elf_plt plt;

	if (argc < 2) {
		fprintf(stderr, "usage: plt_probe FILE HEXADDR...\n");
		return 2;
	}
	if (elf_image_open(&img, argv[1]) != 0) {
		fprintf(stderr, "plt_probe: %s: not a 64-bit ELF file\n", argv[1]);
		return 1;
	}
	if (elf_plt_load(&plt, &img) != 0) {
		fprintf(stderr, "plt_probe: out of memory\n");
		elf_image_close(&img);
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		uint64_t addr = strtoull(argv[i], NULL, 16), off = 0;
		const char *name = elf_plt_name(&plt, addr, &off);

		if (name)
			printf("%" PRIx64 " %s+0x%" PRIx64 "\n", addr, name, off);
		else
			printf("%" PRIx64 " -\n", addr);
	}
	elf_plt_free(&plt);
	elf_image_close(&img);
	return 0;
}
