// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/cfi_unwind.c and eh_frame_cfi() on hostile unwind tables and
 * stacks (they come from the target's binaries and memory). Input: the
 * section's link address (8 bytes), the length of the section (2 bytes),
 * the section, then a stack image the unwinder reads from (addresses
 * 0x10000 and up). Every FDE is stepped from registers pointing into the
 * stack, as pydump --native steps a frame.
 */
#include "fuzz_common.h"
#include "sys/cfi_unwind.h"
#include "sys/eh_frame.h"

#define STACK_AT 0x10000ULL

struct stack {
	const uint8_t *p;
	size_t n;
};

static int read_stack(void *ctx, uint64_t addr, uint64_t *value)
{
	const struct stack *s = ctx;

	if (addr < STACK_AT || addr - STACK_AT > s->n || s->n - (addr - STACK_AT) < 8)
		return -1;
	memcpy(value, s->p + (addr - STACK_AT), 8);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint64_t vaddr = 0;
	uint16_t len = 0;
	struct eh_fde *fdes;
	struct stack st;
	uint8_t *copy;
	size_t n;

	fuzz_take(&in, &vaddr, sizeof(vaddr));
	fuzz_take(&in, &len, sizeof(len));
	if (len > in.n)
		len = (uint16_t)in.n;
	copy = fuzz_dup(in.p, len); /* exactly the bytes: overreads are caught */
	st.p = in.p + len;
	st.n = in.n - len;
	fdes = eh_frame_fdes(copy, len, vaddr, &n);
	for (size_t i = 0; i < n && i < 64; i++) {
		struct eh_cfi cfi;
		struct proc_regs regs;

		FUZZ_CHECK(eh_frame_fde_covering(fdes, n, fdes[i].start) != NULL);
		if (eh_frame_cfi(copy, len, vaddr, &fdes[i], &cfi) < 0)
			continue;
		FUZZ_CHECK(cfi.start == fdes[i].start && cfi.end == fdes[i].end);
		memset(&regs, 0, sizeof(regs));
		for (int r = 0; r < XREG_COUNT; r++)
			proc_regs_set(&regs, r, STACK_AT + 8 * (uint64_t)r);
		for (int step = 0; step < 4; step++) {
			uint64_t pc = cfi.start + (cfi.end - cfi.start) / 2 * (uint64_t)step / 3;

			if (cfi_unwind_step(&cfi, pc, &regs, read_stack, &st) != CFI_STEP_OK)
				break;
			FUZZ_CHECK(proc_regs_has(&regs, XREG_RIP) && proc_regs_has(&regs, XREG_RSP));
		}
		(void)cfi_unwind_fp(&regs, read_stack, &st);
	}
	free(fdes);
	free(copy);
	return 0;
}
