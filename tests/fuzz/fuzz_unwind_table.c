// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/unwind_table.c on hostile .eh_frame sections (they come from the
 * target's binaries, and the rows go to BPF). Input: the section's link
 * address (8 bytes), then its contents, as fuzz_eh_frame. Checks what the
 * BPF walk relies on (rows strictly sorted by pc, kinds it knows, the
 * special kinds' fixed offsets) and, for the first FDEs, that a row the
 * walk follows (CFA from rsp or rbp) says what cfi_unwind_step says.
 */
#include "fuzz_common.h"
#include "sys/cfi_unwind.h"
#include "sys/eh_frame.h"
#include "sys/unwind_table.h"

/* Memory: a hash of the address, never 0 (0 would end the walk). */
static uint64_t mem_at(uint64_t a)
{
	uint64_t z = (a + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;

	return (z ^ (z >> 31)) | 1;
}

static int read_hash(void *ctx, uint64_t addr, uint64_t *value)
{
	(void)ctx;
	*value = mem_at(addr);
	return 0;
}

/* One pc of FDE cfi, where the table's row must be the FDE's. */
static void compare(const struct eh_cfi *cfi, const struct unwind_table *t, uint64_t pc)
{
	const struct pyb_unwind_row *row = unwind_table_find(t, pc);
	struct proc_regs regs;
	uint64_t cfa;
	enum cfi_step_result rc;

	FUZZ_CHECK(row != NULL);
	memset(&regs, 0, sizeof(regs));
	for (int r = 0; r < XREG_COUNT; r++)
		proc_regs_set(&regs, r, 0x7ff000000000ULL + 0x1000ULL * (uint64_t)r);
	proc_regs_set(&regs, XREG_RIP, pc);
	rc = cfi_unwind_step(cfi, pc, &regs, read_hash, NULL);
	if (row->kind == PYB_CFA_END)
		FUZZ_CHECK(rc != CFI_STEP_OK);
	if (rc == CFI_STEP_END)
		FUZZ_CHECK(row->kind == PYB_CFA_END || row->kind == PYB_CFA_NONE ||
			   row->kind == PYB_CFA_SIGNAL);
	if (row->kind != PYB_CFA_RSP && row->kind != PYB_CFA_RBP)
		return;
	cfa = 0x7ff000000000ULL + 0x1000ULL * (row->kind == PYB_CFA_RSP ? XREG_RSP : XREG_RBP) +
	      (uint64_t)((int64_t)row->cfa_off8 * 8);
	FUZZ_CHECK(rc == CFI_STEP_OK);
	FUZZ_CHECK(regs.r[XREG_RSP] == cfa && regs.r[XREG_RIP] == mem_at(cfa - 8));
	FUZZ_CHECK(proc_regs_has(&regs, XREG_RBP));
	FUZZ_CHECK(regs.r[XREG_RBP] ==
		   (row->rbp_off ? mem_at(cfa + 8 * (uint64_t)(int64_t)row->rbp_off)
				 : 0x7ff000000000ULL + 0x1000ULL * XREG_RBP));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint64_t vaddr = 0;
	struct unwind_table t;
	struct eh_fde *fdes;
	char err[128];
	uint8_t *copy;
	size_t n;

	fuzz_take(&in, &vaddr, sizeof(vaddr));
	copy = fuzz_dup(in.p, in.n); /* exactly the bytes: overreads are caught */
	if (unwind_table_from_eh_frame(copy, in.n, vaddr, &t, err, sizeof(err)) < 0) {
		FUZZ_CHECK(t.rows == NULL && t.n == 0 && err[0]);
		free(copy);
		return 0;
	}
	FUZZ_CHECK(t.fdes_garbled <= t.fdes && (t.rows != NULL) == (t.n > 0));
	FUZZ_CHECK(t.fdes_garbled + t.fdes_cut <= t.fdes);
	/* the instructions run: each CIE's once (while cached) and each FDE's;
	 * never past the per-file cap by more than one FDE's worth */
	FUZZ_CHECK(t.cfi_bytes <= UNWIND_CFI_BYTES_MAX + CFI_FDE_BYTES_MAX);
	FUZZ_CHECK(t.n <= 2 * t.fdes + t.cfi_bytes + 1);
	for (size_t i = 0; i < t.n; i++) {
		const struct pyb_unwind_row *r = &t.rows[i];

		FUZZ_CHECK(i == 0 || t.rows[i - 1].pc < r->pc);
		FUZZ_CHECK(r->kind <= PYB_CFA_END);
		FUZZ_CHECK(i == 0 || t.rows[i - 1].kind != r->kind ||
			   t.rows[i - 1].cfa_off8 != r->cfa_off8 || t.rows[i - 1].rbp_off != r->rbp_off);
		if (r->kind == PYB_CFA_PLT)
			FUZZ_CHECK(r->cfa_off8 == 1 && r->rbp_off >= 0 && r->rbp_off < 32);
		if (r->kind == PYB_CFA_NONE || r->kind == PYB_CFA_END || r->kind == PYB_CFA_SIGNAL)
			FUZZ_CHECK(r->cfa_off8 == 0 && r->rbp_off == 0);
		FUZZ_CHECK(unwind_table_find(&t, r->pc) == r);
		FUZZ_CHECK(r->pc == 0 || unwind_table_find(&t, r->pc - 1) == (i ? r - 1 : NULL));
	}
	if (t.n)
		FUZZ_CHECK(t.rows[t.n - 1].kind == PYB_CFA_NONE); /* after the last function */
	fdes = eh_frame_fdes(copy, in.n, vaddr, &n);
	FUZZ_CHECK(n == t.fdes);
	for (size_t i = 0; i < n && i < 64; i++) {
		const struct eh_fde *f = &fdes[i];
		/* the FDE's own rows run up to the next FDE's start */
		uint64_t end = i + 1 < n && fdes[i + 1].start < f->end ? fdes[i + 1].start : f->end;
		struct eh_cfi cfi;

		FUZZ_CHECK(unwind_table_find(&t, f->start) != NULL);
		if (i + 1 == n || fdes[i + 1].start > f->end)
			FUZZ_CHECK(unwind_table_find(&t, f->end)->kind == PYB_CFA_NONE);
		/* (a code alignment so large that an advance wraps around the
		 * address space: cfi_unwind_step goes on from the wrapped
		 * address, the table stops there) */
		if (end <= f->start || eh_frame_cfi(copy, in.n, vaddr, f, &cfi) < 0 ||
		    cfi.code_align > (1u << 24))
			continue;
		compare(&cfi, &t, f->start);
		compare(&cfi, &t, f->start + (end - f->start) / 2);
		compare(&cfi, &t, end - 1);
	}
	free(fdes);
	unwind_table_free(&t);
	free(copy);
	return 0;
}
