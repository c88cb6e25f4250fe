// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/offsets_dwarf.c (libdw) on hostile debug information: the input is
 * an ELF file (a memfd opened by path) whose DWARF the resolver searches
 * for CPython's structs, for every minor version that takes offsets from
 * DWARF. Seeds: DWARF of CPython's real headers (3.8 to 3.12) and of a
 * small file of the same shapes (dwarf_shapes.c), built by run.sh.
 */
#include "cpython/offsets_dwarf.h"
#include "fuzz_common.h"

static struct fuzz_file file;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init(&file, "fuzz-dwarf");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_file_set(&file, data, size);
	for (int minor = 8; minor <= 12; minor++) {
		struct py_offsets o;

		py_offsets_clear(&o);
		if (dwarf_offsets_resolve(file.path, minor, &o) < 0)
			return 0; /* no DWARF at all: same for every version */
		/*
		 * The readers index copied structs with these (py_frames.c
		 * checks only that the largest fits its buffer): like the
		 * other two sources, DWARF must give an offset or nothing.
		 */
		for (size_t i = 0; i < py_offsets_count(); i++) {
			int32_t v = py_offsets_value_at(&o, i);

			if (v < PY_OFFSET_ABSENT)
				fprintf(stderr, "3.%d %s = %d\n", minor, py_offsets_name_at(i), v);
			FUZZ_CHECK(v >= PY_OFFSET_ABSENT);
		}
		(void)py_offsets_missing(&o, minor);
	}
	(void)dwarf_offsetof(file.path, "probe_state_t", "interpreters.head");
	(void)dwarf_offsetof(file.path, "struct _ts", "cframe");
	(void)dwarf_offsetof(file.path, "PyThreadState", "a.b.c.d.e.f.g.h");
	return 0;
}
