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

/* rows as a count and a hash, to compare two runs */
struct rows_seen {
	uint64_t n, hash;
};

static int see_row(void *ctx, uint64_t loc, const struct cfi_row *row)
{
	struct rows_seen *r = ctx;

	r->n++;
	r->hash = (r->hash ^ loc ^ (uint64_t)row->cfa_reg ^ (uint64_t)row->cfa_off) * 1099511628211ULL;
	for (int i = 0; i < XREG_COUNT; i++)
		r->hash = (r->hash ^ (uint64_t)row->reg[i].kind ^ (uint64_t)row->reg[i].value) *
			  1099511628211ULL;
	return r->n > 100000; /* bounded: advances are at least a byte of instructions */
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
		{
			/* the CIE's row run once and reused: the same rows as run each time */
			struct rows_seen a = { 0, 0 }, b = { 0, 0 };
			struct cfi_row initial;
			int ra = cfi_each_row(&cfi, see_row, &a), rb = -1;

			if (cfi_initial_row(&cfi, &initial))
				rb = cfi_each_row_from(&cfi, &initial, see_row, &b);
			FUZZ_CHECK(ra == rb && (ra < 0 || (a.n == b.n && a.hash == b.hash)));
			FUZZ_CHECK(a.n <= 2 + cfi.fde_len); /* a row per advance, each a byte or more */
			if (cfi.cie_len + cfi.fde_len > CFI_FDE_BYTES_MAX)
				FUZZ_CHECK(ra < 0); /* over the budget: not run */
		}
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
