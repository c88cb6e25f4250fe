// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/eh_frame.c on hostile .eh_frame sections (they come from the
 * target's binaries). Input: the section's link address (8 bytes), then
 * its contents. Seeds: the start of .eh_frame of every interpreter on the
 * machine (run.sh).
 */
#include "sys/eh_frame.h"
#include "fuzz_common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint64_t vaddr = 0;
	struct eh_fde *fdes;
	uint8_t *copy;
	size_t n;

	fuzz_take(&in, &vaddr, sizeof(vaddr));
	copy = fuzz_dup(in.p, in.n); /* exactly the bytes: overreads are caught */
	fdes = eh_frame_fdes(copy, in.n, vaddr, &n);
	FUZZ_CHECK(fdes ? n > 0 : n == 0);
	for (size_t i = 0; i < n; i++) {
		struct eh_cfi cfi;

		FUZZ_CHECK(fdes[i].start < fdes[i].end);
		FUZZ_CHECK(fdes[i].entry + (uint64_t)8 <= in.n);
		/* the CIE an FDE shares (its initial row cached by this offset) */
		if (eh_frame_cfi(copy, in.n, vaddr, &fdes[i], &cfi) == 0)
			FUZZ_CHECK(cfi.cie_entry + (uint64_t)8 <= in.n && cfi.cie_entry != fdes[i].entry &&
				   !memcmp(copy + cfi.cie_entry + 4, "\0\0\0\0", 4) &&
				   cfi.cie_insns >= copy + cfi.cie_entry && cfi.fde_insns >= copy + fdes[i].entry);
		FUZZ_CHECK(i == 0 || fdes[i - 1].start <= fdes[i].start);
		FUZZ_CHECK(eh_frame_fde_at(fdes, n, fdes[i].start) != NULL);
		(void)eh_frame_fde_at(fdes, n, fdes[i].start + 1);
	}
	(void)eh_frame_fde_at(fdes, n, vaddr);
	free(fdes);
	free(copy);
	return 0;
}
