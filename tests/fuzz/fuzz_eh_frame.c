// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/eh_frame.c on hostile .eh_frame sections (they come from the
 * target's binaries). Input: the section's link address (8 bytes), then
 * its contents. Seeds: the start of .eh_frame of every interpreter on the
 * machine (run.sh).
 */
#include "sys/eh_frame.h"
#include "fuzz_common.h"

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
		FUZZ_CHECK(fdes[i].start < fdes[i].end);
		FUZZ_CHECK(i == 0 || fdes[i - 1].start <= fdes[i].start);
		FUZZ_CHECK(eh_frame_fde_at(fdes, n, fdes[i].start) != NULL);
		(void)eh_frame_fde_at(fdes, n, fdes[i].start + 1);
	}
	(void)eh_frame_fde_at(fdes, n, vaddr);
	free(fdes);
	free(copy);
	return 0;
}
