// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/linetable.c: every CPython line-table format, on tables copied out
 * of a hostile process. Input: minor (1 byte, FUZZ_MINOR_ANY), firstlineno
 * (int32), offset (int64), then the table. Seeds: real tables of real code
 * objects from every interpreter on the machine (seed_linetables.py).
 */
#include "fuzz_common.h"
#include "fuzz_minors.h"
#include "cpython/linetable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	int minor = FUZZ_MINOR_ANY(fuzz_u8(&in));
	int32_t first;
	int64_t offset;
	uint8_t *tab;

	fuzz_take(&in, &first, sizeof(first));
	fuzz_take(&in, &offset, sizeof(offset));
	tab = fuzz_dup(in.p, in.n); /* as read_bytes_object hands it over */
	(void)linetable_line(py_rules_for(minor, false)->line_format, tab, in.n, first, offset);
	(void)linetable_lnotab(tab, in.n, first, offset);
	(void)linetable_310(tab, in.n, first, offset);
	(void)linetable_311(tab, in.n, first, offset);
	/* every instruction of a small function, as a profile would ask */
	for (int64_t o = -2; o < 256; o += 2)
		(void)linetable_line(py_rules_for(minor, false)->line_format, tab, in.n, first, o);
	free(tab);
	return 0;
}
