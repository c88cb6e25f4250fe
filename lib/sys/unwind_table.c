// SPDX-License-Identifier: Apache-2.0
/*
 * From .eh_frame to unwind rows: every FDE's call frame instructions run
 * over its range (sys/cfi_unwind.c interprets them) and each rule the BPF
 * step can follow becomes a row; see sys/unwind_table.h and the contract in
 * abi/native_abi.h.
 */
#include "sys/unwind_table.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/cfi_unwind.h"
#include "sys/eh_frame.h"
#include "sys/elf_image.h"
#include "sys/grow.h"

#define EH_FRAME_MAX (64u << 20)

#define CIE_CACHE 64 /* direct-mapped by CIE offset; a miss runs the CIE again */

struct cie_row {
	uint32_t entry; /* CIE offset + 1; 0: empty */
	bool ok;
	struct cfi_row row;
};

struct builder {
	struct pyb_unwind_row *rows;
	size_t n, cap;
	bool oom;
	uint64_t cfi_bytes; /* instructions run so far, against UNWIND_CFI_BYTES_MAX */
	struct cie_row cies[CIE_CACHE];
};

static bool same_rule(const struct pyb_unwind_row *a, const struct pyb_unwind_row *b)
{
	return a->kind == b->kind && a->cfa_off8 == b->cfa_off8 && a->rbp_off == b->rbp_off;
}

/* Drops the rows from pc on: a later FDE wins from its start. */
static void trim(struct builder *b, uint64_t pc)
{
	while (b->n && b->rows[b->n - 1].pc >= pc)
		b->n--;
}

/* Appends a row at r.pc (above every row kept), unless the row before
 * already says the same. */
static void push(struct builder *b, struct pyb_unwind_row r)
{
	struct pyb_unwind_row *grown;

	trim(b, r.pc);
	if (b->n && same_rule(&b->rows[b->n - 1], &r))
		return;
	grown = grow_room(b->rows, b->n, &b->cap, 1024, sizeof(*grown));
	if (!grown) {
		b->oom = true;
		return;
	}
	b->rows = grown;
	b->rows[b->n++] = r;
}

static struct pyb_unwind_row row_of_kind(uint64_t pc, enum pyb_cfa_kind kind)
{
	struct pyb_unwind_row r;

	memset(&r, 0, sizeof(r));
	r.pc = (pyb_u32)pc;
	r.kind = (pyb_u8)kind;
	return r;
}

/*
 * The CFA expression of the standard x86-64 PLT entries (16 bytes each,
 * the CFA 8 bytes higher once the entry's push has run):
 *   DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
 *   DW_OP_litN; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * Returns N, or -1 for any other expression.
 */
static int plt_threshold(const uint8_t *e, size_t len)
{
	static const uint8_t head[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a };
	static const uint8_t tail[] = { 0x2a, 0x33, 0x24, 0x22 };

	if (!e || len != sizeof(head) + 1 + sizeof(tail) || memcmp(e, head, sizeof(head)) != 0 ||
	    memcmp(e + sizeof(head) + 1, tail, sizeof(tail)) != 0)
		return -1;
	if (e[sizeof(head)] < 0x30 || e[sizeof(head)] > 0x4f) /* DW_OP_lit0..lit31 */
		return -1;
	return e[sizeof(head)] - 0x30;
}

/* The row for a CFI row, or a PYB_CFA_NONE row where the BPF step could
 * not follow the rules exactly. */
static struct pyb_unwind_row convert(uint64_t loc, const struct cfi_row *cr)
{
	struct pyb_unwind_row r = row_of_kind(loc, PYB_CFA_NONE);
	const struct cfi_rule *ra = &cr->reg[XREG_RIP], *bp = &cr->reg[XREG_RBP];
	int rbp_off;

	if (ra->kind == CFI_RULE_UNDEF)
		return row_of_kind(loc, PYB_CFA_END);
	if (ra->kind != CFI_RULE_OFFSET || ra->value != -8)
		return r;
	if (bp->kind == CFI_RULE_SAME)
		rbp_off = 0;
	else if (bp->kind == CFI_RULE_OFFSET && bp->value != 0 && bp->value % 8 == 0 &&
		 bp->value / 8 >= INT8_MIN && bp->value / 8 <= INT8_MAX)
		rbp_off = (int)(bp->value / 8);
	else
		return r;
	if (cr->cfa_reg == XREG_RSP || cr->cfa_reg == XREG_RBP) {
		if (cr->cfa_off % 8 || cr->cfa_off / 8 < INT16_MIN || cr->cfa_off / 8 > INT16_MAX)
			return r;
		r.kind = cr->cfa_reg == XREG_RSP ? PYB_CFA_RSP : PYB_CFA_RBP;
		r.cfa_off8 = (pyb_s16)(cr->cfa_off / 8);
		r.rbp_off = (pyb_s8)rbp_off;
	} else if (cr->cfa_reg == -1 && rbp_off == 0) {
		/* rbp_off holds the PLT threshold: rbp must keep its value */
		int n = plt_threshold(cr->cfa_expr, cr->cfa_expr_len);

		if (n >= 0) {
			r.kind = PYB_CFA_PLT;
			r.cfa_off8 = 1;
			r.rbp_off = (pyb_s8)n;
		}
	}
	return r;
}

static int on_row(void *ctx, uint64_t loc, const struct cfi_row *cr)
{
	struct builder *b = ctx;

	push(b, convert(loc, cr));
	return b->oom ? -1 : 0;
}

/* The CIE's row, run once per CIE as long as the cache keeps it; NULL if
 * its instructions are garbled. */
static const struct cfi_row *initial_row(struct builder *b, const struct eh_cfi *cfi)
{
	struct cie_row *c = &b->cies[cfi->cie_entry % CIE_CACHE];

	if (c->entry != cfi->cie_entry + 1) {
		c->entry = cfi->cie_entry + 1;
		c->ok = cfi_initial_row(cfi, &c->row);
		b->cfi_bytes += cfi->cie_len;
	}
	return c->ok ? &c->row : NULL;
}

enum fde_outcome { FDE_OK, FDE_GARBLED, FDE_CUT };

/* The rows of one FDE, then a NONE row at its end (the next FDE's first
 * row replaces it if that starts there). */
static enum fde_outcome add_fde(struct builder *b, const uint8_t *data, size_t size, uint64_t vaddr,
				const struct eh_fde *fde)
{
	struct eh_cfi cfi;
	enum fde_outcome how = FDE_OK;
	const struct cfi_row *initial;

	trim(b, fde->start);
	if (eh_frame_cfi(data, size, vaddr, fde, &cfi) < 0) {
		how = FDE_GARBLED;
		push(b, row_of_kind(fde->start, PYB_CFA_NONE));
	} else if (cfi.signal_frame) {
		push(b, row_of_kind(fde->start, PYB_CFA_SIGNAL));
	} else if (cfi.ra_reg != XREG_RIP) {
		push(b, row_of_kind(fde->start, PYB_CFA_NONE));
	} else if (cfi.cie_len > CFI_FDE_BYTES_MAX || cfi.fde_len > CFI_FDE_BYTES_MAX - cfi.cie_len ||
		   b->cfi_bytes > UNWIND_CFI_BYTES_MAX) {
		how = FDE_CUT; /* (the walk stops here rather than cost more) */
		push(b, row_of_kind(fde->start, PYB_CFA_NONE));
	} else {
		size_t mark = b->n;

		initial = initial_row(b, &cfi);
		b->cfi_bytes += cfi.fde_len;
		if ((!initial || cfi_each_row_from(&cfi, initial, on_row, b) < 0) && !b->oom) {
			how = FDE_GARBLED;
			b->n = mark;
			push(b, row_of_kind(fde->start, PYB_CFA_NONE));
		}
	}
	push(b, row_of_kind(fde->end, PYB_CFA_NONE));
	return how;
}

int unwind_table_from_eh_frame(const uint8_t *data, size_t size, uint64_t vaddr,
			       struct unwind_table *t, char *err, size_t errlen)
{
	struct builder *b = calloc(1, sizeof(*b));
	struct eh_fde *fdes;
	size_t nfdes = 0;

	memset(t, 0, sizeof(*t));
	if (errlen)
		err[0] = '\0';
	if (!b) {
		snprintf(err, errlen, "out of memory for the unwind rows");
		return -1;
	}
	fdes = eh_frame_fdes(data, size, vaddr, &nfdes);
	for (size_t i = 0; i < nfdes; i++) {
		if (fdes[i].end > UINT32_MAX) {
			snprintf(err, errlen, "code above 4 GiB (a function at 0x%llx)",
				 (unsigned long long)fdes[i].start);
			free(fdes);
			free(b);
			return -1;
		}
	}
	t->fdes = nfdes;
	for (size_t i = 0; i < nfdes && !b->oom; i++) {
		enum fde_outcome how = add_fde(b, data, size, vaddr, &fdes[i]);

		t->fdes_garbled += how == FDE_GARBLED;
		t->fdes_cut += how == FDE_CUT;
	}
	free(fdes);
	t->cfi_bytes = b->cfi_bytes;
	if (b->oom) {
		free(b->rows);
		free(b);
		memset(t, 0, sizeof(*t));
		snprintf(err, errlen, "out of memory for the unwind rows");
		return -1;
	}
	if (b->n && b->n < b->cap) {
		struct pyb_unwind_row *shrunk = realloc(b->rows, b->n * sizeof(*shrunk));

		if (shrunk)
			b->rows = shrunk;
	}
	if (!b->n) {
		free(b->rows);
		b->rows = NULL;
	}
	t->rows = b->rows;
	t->n = b->n;
	free(b);
	return 0;
}

int unwind_table_build(struct elf_image *img, struct unwind_table *t, char *err, size_t errlen)
{
	uint64_t addr, size;
	uint8_t *data;
	int rc;

	memset(t, 0, sizeof(*t));
	if (elf_image_section(img, ".eh_frame", &addr, &size) < 0 || !size) {
		snprintf(err, errlen, "no .eh_frame section");
		return -1;
	}
	if (size >= EH_FRAME_MAX) {
		snprintf(err, errlen, ".eh_frame too large (%llu bytes)", (unsigned long long)size);
		return -1;
	}
	data = malloc(size);
	if (!data) {
		snprintf(err, errlen, "out of memory for .eh_frame (%llu bytes)",
			 (unsigned long long)size);
		return -1;
	}
	if (elf_image_read_vaddr(img, addr, data, size) < 0) {
		snprintf(err, errlen, "cannot read .eh_frame (%llu bytes at 0x%llx)",
			 (unsigned long long)size, (unsigned long long)addr);
		free(data);
		return -1;
	}
	rc = unwind_table_from_eh_frame(data, size, addr, t, err, errlen);
	free(data);
	return rc;
}

void unwind_table_free(struct unwind_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct pyb_unwind_row *unwind_table_find(const struct unwind_table *t, uint64_t pc)
{
	size_t lo = 0, hi = t->n;

	/* the first row above pc; the one before it holds pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}
