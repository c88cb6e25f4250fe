// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/elf_image.c on hostile binaries: the input is a file (a memfd opened
 * by path), queried the way lib/py_process.c queries an interpreter:
 * symbols, sections, bytes at addresses, build id, debuglink, .rodata
 * strings, USDT probes (sys/stapsdt.h), code sections and PLT stubs
 * (sys/elf_plt.h). Seeds: real interpreters and
 * libraries, whole or cut down to their headers, symbol tables, notes and
 * data (run.sh).
 */
#include "sys/elf_image.h"
#include "sys/elf_plt.h"
#include "sys/code_fragments.h"
#include "sys/stapsdt.h"
#include "fuzz_common.h"
#include "cpython/version.h"

static struct fuzz_file file;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init(&file, "fuzz-elf");
	return 0;
}

/* as py_process.c's scan_version_string */
static int each_string(const char *s, size_t len, void *arg)
{
	struct py_version v;

	FUZZ_CHECK(len > 0 && !memchr(s, '\0', len));
	if (len >= 5 && len <= 12 && py_version_parse(s, len, &v) == 0)
		++*(int *)arg;
	return 0;
}

static int stop_at_first(const char *s, size_t len, void *arg)
{
	(void)s;
	(void)len;
	(void)arg;
	return 7;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const symbols[] = {
		"_PyRuntime", "Py_Version", "Py_GetVersion", "PyCode_Type", "PyUnicode_Type",
		"PyBytes_Type", "_PyEval_EvalFrameDefault", "_thread_db_pthread_tid",
	};
	static const char *const sections[] = { ".PyRuntime", ".bss", ".rodata", ".text",
						".data" };
	struct elf_image img;
	uint64_t value, vsize, addr, ssize;
	char hex[128], name[256], small[9];
	uint8_t buf[2048];
	int versions = 0;

	fuzz_file_set(&file, data, size);
	if (elf_image_open(&img, file.path) != 0)
		return 0;
	FUZZ_CHECK(img.nshdrs <= ELF_IMAGE_SECTIONS_MAX && img.nphdrs <= ELF_IMAGE_PHDRS_MAX);
	FUZZ_CHECK(img.file_size == size && img.bytes_read <= 2 * (uint64_t)size + 128);
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		if (elf_image_symbol(&img, symbols[i], &value, &vsize) != 0)
			continue;
		(void)elf_image_read_vaddr(&img, value, buf, 4);
		(void)elf_image_read_vaddr(&img, value, buf, sizeof(buf));
		(void)elf_image_read_vaddr(&img, value, buf, vsize < sizeof(buf) ? vsize : 0);
	}
	(void)elf_image_symbol(&img, "Py_Version", &value, NULL);
	/* as py_process.c's find_eval_loop: .eh_frame and jumps in the code */
	if (elf_image_symbol(&img, "_PyEval_EvalFrameDefault", &value, &vsize) == 0 && vsize) {
		struct code_range ranges[4];
		bool frame_pointers;
		int n = eval_fragments(&img, value, vsize, ranges, 4, &frame_pointers);

		FUZZ_CHECK(n >= 1 && n <= 4 && (frame_pointers || n == 1));
	}
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (elf_image_section(&img, sections[i], &addr, &ssize) == 0)
			(void)elf_image_read_vaddr(&img, addr, buf, ssize < 64 ? ssize : 64);
	(void)elf_image_load_bias(&img, 0x555555554000ULL, 0);
	(void)elf_image_has_dwarf(&img);
	/* the segment a mapping at an offset maps (pydump --core, gcore's cores) */
	for (uint64_t off = 0; off < 0x10000; off += 0x1000) {
		uint32_t flags;

		(void)elf_image_flags_of_offset(&img, off, &flags);
	}
	{
		uint32_t flags;

		(void)elf_image_flags_of_offset(&img, UINT64_MAX & ~(uint64_t)4095, &flags);
	}
	if (elf_image_build_id(&img, hex, sizeof(hex)) == 0)
		FUZZ_CHECK(strlen(hex) < sizeof(hex));
	if (elf_image_build_id(&img, small, sizeof(small)) == 0)
		FUZZ_CHECK(strlen(small) < sizeof(small));
	if (elf_image_debuglink(&img, name, sizeof(name)) == 0)
		FUZZ_CHECK(strlen(name) < sizeof(name) && !strchr(name, '/'));
	if (elf_image_debuglink(&img, small, sizeof(small)) == 0)
		FUZZ_CHECK(strlen(small) < sizeof(small));
	(void)elf_image_each_string(&img, ".rodata", each_string, &versions);
	(void)elf_image_each_string(&img, ".dynstr", stop_at_first, NULL);
	/* as pymem --gc: USDT notes, their addresses and argument specs */
	for (int i = 0; i < 2; i++) {
		struct stapsdt_probe probe;

		if (stapsdt_find(&img, "python", i ? "gc__done" : "gc__start", &probe) != 0)
			continue;
		FUZZ_CHECK(probe.nargs >= 0 && probe.nargs <= STAPSDT_MAX_ARGS);
		FUZZ_CHECK(probe.pc_offset < size && probe.sem_offset < size);
		for (int k = 0; k < probe.nargs; k++)
			FUZZ_CHECK(probe.args[k].reg < XREG_COUNT &&
				   (probe.args[k].size == 1 || probe.args[k].size == 2 ||
				    probe.args[k].size == 4 || probe.args[k].size == 8));
	}
	/* as sys/native_symbols.c: PLT stubs by the relocations of their slots */
	{
		struct elf_plt plt;

		if (elf_plt_load(&plt, &img) == 0) {
			FUZZ_CHECK(plt.ncode <= ELF_CODE_SECTIONS_MAX &&
				   plt.stubs.n <= ELF_PLT_STUBS_MAX);
			for (size_t i = 0; i < plt.stubs.n; i++) {
				const struct elf_sym *s = &plt.stubs.v[i];
				const struct elf_code_section *c = elf_plt_code_section(&plt, s->start);
				size_t len = strlen(s->name);

				FUZZ_CHECK(s->size == 8 || s->size == 16);
				FUZZ_CHECK(len > 4 && strcmp(s->name + len - 4, "@plt") == 0);
				FUZZ_CHECK(c && c->plt);
			}
			for (size_t i = 0; i < plt.ncode; i++) {
				uint64_t off = 0;
				const char *n = elf_plt_name(&plt, plt.code[i].start, &off);

				FUZZ_CHECK(!n == !plt.code[i].plt);
				(void)elf_plt_name(&plt, plt.code[i].end - 1, &off);
			}
			elf_plt_free(&plt);
		}
	}
	FUZZ_CHECK(img.bytes_read <= ELF_IMAGE_READ_BUDGET);
	{
		/* a section's bytes are read once: the same questions again read nothing */
		uint64_t read_before = img.bytes_read;

		for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++)
			(void)elf_image_symbol(&img, symbols[i], &value, &vsize);
		(void)elf_image_debuglink(&img, name, sizeof(name));
		(void)elf_image_each_string(&img, ".rodata", each_string, &versions);
		FUZZ_CHECK(img.bytes_read == read_before);
	}
	elf_image_close(&img);
	return 0;
}
