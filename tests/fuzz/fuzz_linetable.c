// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/linetable.c: every CPython line-table format, on tables copied out
 * of a hostile process. Input: minor (1 byte, 3.(8 + b % 8)), firstlineno
 * (int32), offset (int64), then the table. Seeds: real tables of real code
 * objects from every interpreter on the machine (seed_linetables.py).
 */
#include "fuzz_common.h"
#include "cpython/linetable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	int minor = 8 + fuzz_u8(&in) % 8;
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
