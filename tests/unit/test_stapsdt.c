// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/stapsdt.c: the argument specs the notes carry (the forms GCC
 * writes: a register, memory at a register plus a displacement, a
 * constant), what is refused, and the gc probes of the host's Debian
 * python3.11 when it is there.
 */
#include <unistd.h>

#include "sys/elf_image.h"
#include "sys/stapsdt.h"
#include "unit_check.h"

static void test_args(void)
{
	struct stapsdt_arg a[STAPSDT_MAX_ARGS];

	CHECK(stapsdt_parse_args("-4@112(%rsp)", a, STAPSDT_MAX_ARGS) == 1);
	CHECK(a[0].kind == STAPSDT_ARG_MEM && a[0].reg == XREG_RSP && a[0].value == 112 &&
	      a[0].size == 4 && a[0].is_signed);
	CHECK(stapsdt_parse_args("-4@-228(%rbp)", a, STAPSDT_MAX_ARGS) == 1);
	CHECK(a[0].kind == STAPSDT_ARG_MEM && a[0].reg == XREG_RBP && a[0].value == -228);
	CHECK(stapsdt_parse_args("-8@%r12", a, STAPSDT_MAX_ARGS) == 1);
	CHECK(a[0].kind == STAPSDT_ARG_REG && a[0].reg == XREG_R12 && a[0].size == 8);
	CHECK(stapsdt_parse_args("8@%rdi 8@%rsi -4@%eax", a, STAPSDT_MAX_ARGS) == 3);
	CHECK(a[0].reg == XREG_RDI && a[1].reg == XREG_RSI && a[2].reg == XREG_RAX &&
	      !a[1].is_signed && a[2].is_signed && a[2].size == 4);
	CHECK(stapsdt_parse_args("4@$5", a, STAPSDT_MAX_ARGS) == 1);
	CHECK(a[0].kind == STAPSDT_ARG_CONST && a[0].value == 5);
	CHECK(stapsdt_parse_args("8@(%rax)", a, STAPSDT_MAX_ARGS) == 1);
	CHECK(a[0].kind == STAPSDT_ARG_MEM && a[0].value == 0 && a[0].reg == XREG_RAX);
	CHECK(stapsdt_parse_args("", a, STAPSDT_MAX_ARGS) == 0);
	/* refused: sizes, registers, indexed forms, junk, too many */
	CHECK(stapsdt_parse_args("3@%rax", a, STAPSDT_MAX_ARGS) < 0);
	CHECK(stapsdt_parse_args("8@%xmm0", a, STAPSDT_MAX_ARGS) < 0);
	CHECK(stapsdt_parse_args("8@8(%rax,%rbx,4)", a, STAPSDT_MAX_ARGS) < 0);
	CHECK(stapsdt_parse_args("8@%rax)", a, STAPSDT_MAX_ARGS) < 0);
	CHECK(stapsdt_parse_args("8@99999999999(%rax)", a, STAPSDT_MAX_ARGS) < 0);
	CHECK(stapsdt_parse_args("-4@%eax", a, 0) < 0);
	CHECK(stapsdt_parse_args("8@%rax 8@%rax", a, 1) < 0);
}

static void test_host_python(void)
{
	static const char path[] = "/usr/bin/python3.11";
	struct stapsdt_probe start, done, none;
	struct elf_image img;

	if (access(path, R_OK) != 0 || elf_image_open(&img, path) != 0) {
		printf("test_stapsdt: %s not here, its probes not checked\n", path);
		return;
	}
	CHECK(stapsdt_find(&img, "python", "gc__start", &start) == 0);
	CHECK(stapsdt_find(&img, "python", "gc__done", &done) == 0);
	CHECK(start.nargs == 1 && start.args[0].size == 4 && start.args[0].is_signed);
	CHECK(done.nargs == 1 && done.args[0].size == 8);
	CHECK(start.sem_offset && done.sem_offset && start.sem_offset != done.sem_offset);
	CHECK(start.pc_offset && start.pc_offset < img.file_size);
	CHECK(stapsdt_find(&img, "python", "no__such__probe", &none) == 1);
	CHECK(stapsdt_find(&img, "nopython", "gc__start", &none) == 1);
	elf_image_close(&img);
}

int main(void)
{
	test_args();
	test_host_python();
	printf("test_stapsdt: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
