/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DWARF call frame instructions (DWARF 4, section 6.4.2, and the LSB's
 * .eh_frame additions), run up to a pc to get the rule for the CFA and for
 * each register x86-64 numbers 0..16 (16 is the return address column).
 */
#include "sys/cfi_unwind.h"

#include <string.h>

#define STATE_STACK 8

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint8_t u8(struct cursor *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

static uint64_t fixed(struct cursor *c, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)u8(c) << (8 * i);
	return v;
}

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !c->bad; shift += 7) {
		uint8_t b = u8(c);

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t sleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	do {
		b = u8(c);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A factored offset; garbage may overflow, so in defined (wrapping) arithmetic. */
static int64_t factor(int64_t v, int64_t f)
{
	return (int64_t)((uint64_t)v * (uint64_t)f);
}

/* Skips a block (a DWARF expression) and returns where it starts; its length in *len. */
static const uint8_t *skip_block(struct cursor *c, size_t *len)
{
	uint64_t n = uleb(c);
	const uint8_t *at = c->p;

	*len = 0;
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	*len = (size_t)n;
	return at;
}

static void set_rule(struct cfi_row *r, uint64_t reg, enum cfi_rule_kind kind, int64_t value)
{
	if (reg < XREG_COUNT) {
		r->reg[reg].kind = kind;
		r->reg[reg].value = value;
	}
}

/*
 * Runs instructions while the location stays at or below pc. initial is
 * the row after the CIE's instructions (DW_CFA_restore goes back to it);
 * NULL while running those. With fn, calls it with each row and the
 * location it holds from: before every advance by more than 0, and at the
 * location where the run stops. Returns false on garbage (or when fn
 * returns non-zero).
 */
static bool run(const struct eh_cfi *cfi, const uint8_t *insns, size_t len, uint64_t pc,
		struct cfi_row *row, const struct cfi_row *initial, cfi_row_fn fn, void *ctx)
{
	struct cursor c = { insns, insns + len, false };
	struct cfi_row stack[STATE_STACK];
	int depth = 0;
	uint64_t loc = cfi->start;
	size_t n;

	while (c.p < c.end && !c.bad) {
		uint8_t op = u8(&c);
		uint64_t reg, delta = 0;

		switch (op >> 6) {
		case 1:
			delta = (uint64_t)(op & 0x3f) * cfi->code_align;
			goto advance;
		case 2:
			set_rule(row, op & 0x3f, CFI_RULE_OFFSET, factor((int64_t)uleb(&c), cfi->data_align));
			continue;
		case 3:
			if (initial && (op & 0x3f) < XREG_COUNT)
				row->reg[op & 0x3f] = initial->reg[op & 0x3f];
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x02: delta = fixed(&c, 1) * cfi->code_align; goto advance;
		case 0x03: delta = fixed(&c, 2) * cfi->code_align; goto advance;
		case 0x04: delta = fixed(&c, 4) * cfi->code_align; goto advance;
		case 0x05: /* offset_extended */
			reg = uleb(&c);
			set_rule(row, reg, CFI_RULE_OFFSET, factor((int64_t)uleb(&c), cfi->data_align));
			break;
		case 0x06: /* restore_extended */
			reg = uleb(&c);
			if (initial && reg < XREG_COUNT)
				row->reg[reg] = initial->reg[reg];
			break;
		case 0x07: set_rule(row, uleb(&c), CFI_RULE_UNDEF, 0); break;
		case 0x08: set_rule(row, uleb(&c), CFI_RULE_SAME, 0); break;
		case 0x09: /* register */
			reg = uleb(&c);
			set_rule(row, reg, CFI_RULE_REG, (int64_t)uleb(&c));
			break;
		case 0x0a: /* remember_state */
			if (depth == STATE_STACK)
				return false;
			stack[depth++] = *row;
			break;
		case 0x0b: /* restore_state, CFA rule included (as GCC's epilogues expect) */
			if (depth == 0)
				return false;
			*row = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			row->cfa_reg = (int)uleb(&c);
			row->cfa_off = (int64_t)uleb(&c);
			break;
		case 0x0d: row->cfa_reg = (int)uleb(&c); break;
		case 0x0e: row->cfa_off = (int64_t)uleb(&c); break;
		case 0x0f: /* def_cfa_expression */
			row->cfa_expr = skip_block(&c, &n);
			row->cfa_expr_len = n;
			row->cfa_reg = -1;
			break;
		case 0x10: /* expression */
			reg = uleb(&c);
			(void)skip_block(&c, &n);
			set_rule(row, reg, CFI_RULE_EXPR, 0);
			break;
		case 0x11: /* offset_extended_sf */
			reg = uleb(&c);
			set_rule(row, reg, CFI_RULE_OFFSET, factor(sleb(&c), cfi->data_align));
			break;
		case 0x12: /* def_cfa_sf */
			row->cfa_reg = (int)uleb(&c);
			row->cfa_off = factor(sleb(&c), cfi->data_align);
			break;
		case 0x13: row->cfa_off = factor(sleb(&c), cfi->data_align); break;
		case 0x14: /* val_offset */
			reg = uleb(&c);
			set_rule(row, reg, CFI_RULE_VAL_OFFSET, factor((int64_t)uleb(&c), cfi->data_align));
			break;
		case 0x15:
			reg = uleb(&c);
			set_rule(row, reg, CFI_RULE_VAL_OFFSET, factor(sleb(&c), cfi->data_align));
			break;
		case 0x16: /* val_expression */
			reg = uleb(&c);
			(void)skip_block(&c, &n);
			set_rule(row, reg, CFI_RULE_EXPR, 0);
			break;
		case 0x2e: /* GNU_args_size */
			(void)uleb(&c);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = uleb(&c);
			set_rule(row, reg, CFI_RULE_OFFSET,
				 (int64_t)(0 - (uint64_t)factor((int64_t)uleb(&c), cfi->data_align)));
			break;
		default: /* set_loc and vendor extensions */
			return false;
		}
		continue;
advance:
		/* (with fn, pc is the range's last byte: an advance that wraps
		 * around goes past it too) */
		if (loc + delta > pc || (fn && loc + delta < loc))
			break;
		if (fn && delta && !c.bad && fn(ctx, loc, row) != 0)
			return false;
		loc += delta;
	}
	if (c.bad)
		return false;
	return !fn || fn(ctx, loc, row) == 0;
}

static bool within_budget(const struct eh_cfi *cfi)
{
	return cfi->cie_len <= CFI_FDE_BYTES_MAX && cfi->fde_len <= CFI_FDE_BYTES_MAX - cfi->cie_len;
}

/* (it does not depend on the FDE: advances in a CIE move no row, since
 * nothing is called and pc is the highest address) */
bool cfi_initial_row(const struct eh_cfi *cfi, struct cfi_row *initial)
{
	memset(initial, 0, sizeof(*initial)); /* CFI_RULE_SAME everywhere */
	initial->cfa_reg = XREG_RSP;
	return within_budget(cfi) &&
	       run(cfi, cfi->cie_insns, cfi->cie_len, UINT64_MAX, initial, NULL, NULL, NULL);
}

int cfi_each_row_from(const struct eh_cfi *cfi, const struct cfi_row *initial, cfi_row_fn fn,
		      void *ctx)
{
	struct cfi_row row = *initial;

	if (cfi->end <= cfi->start || !within_budget(cfi))
		return -1;
	return run(cfi, cfi->fde_insns, cfi->fde_len, cfi->end - 1, &row, initial, fn, ctx) ? 0 : -1;
}

int cfi_each_row(const struct eh_cfi *cfi, cfi_row_fn fn, void *ctx)
{
	struct cfi_row initial;

	if (cfi->end <= cfi->start || !cfi_initial_row(cfi, &initial))
		return -1;
	return cfi_each_row_from(cfi, &initial, fn, ctx);
}

enum cfi_step_result cfi_unwind_step(const struct eh_cfi *cfi, uint64_t pc, struct proc_regs *regs,
				     cfi_read_fn read, void *ctx)
{
	struct cfi_row initial, row;
	struct proc_regs out;
	uint64_t cfa;

	if (cfi->ra_reg != XREG_RIP)
		return CFI_STEP_FAILED;
	if (!cfi_initial_row(cfi, &initial))
		return CFI_STEP_FAILED;
	row = initial;
	if (!run(cfi, cfi->fde_insns, cfi->fde_len, pc, &row, &initial, NULL, NULL))
		return CFI_STEP_FAILED;
	if (row.cfa_reg < 0 || row.cfa_reg >= XREG_COUNT)
		return CFI_STEP_FAILED;
	if (!proc_regs_has(regs, row.cfa_reg))
		return CFI_STEP_NO_REG;
	cfa = regs->r[row.cfa_reg] + (uint64_t)row.cfa_off;
	memset(&out, 0, sizeof(out));
	out.syscall_nr = -1;
	out.fs_base = regs->fs_base;
	for (int i = 0; i < XREG_COUNT; i++) {
		const struct cfi_rule *r = &row.reg[i];
		uint64_t v;

		switch (r->kind) {
		case CFI_RULE_SAME:
			/* callee-saved registers keep their values; others are lost */
			if (proc_regs_has(regs, i) &&
			    (i == XREG_RBX || i == XREG_RBP || (i >= XREG_R12 && i <= XREG_R15)))
				proc_regs_set(&out, i, regs->r[i]);
			break;
		case CFI_RULE_OFFSET:
			if (read(ctx, cfa + (uint64_t)r->value, &v) < 0)
				return CFI_STEP_FAILED;
			proc_regs_set(&out, i, v);
			break;
		case CFI_RULE_VAL_OFFSET:
			proc_regs_set(&out, i, cfa + (uint64_t)r->value);
			break;
		case CFI_RULE_REG:
			if (r->value >= 0 && r->value < XREG_COUNT && proc_regs_has(regs, r->value))
				proc_regs_set(&out, i, regs->r[r->value]);
			break;
		case CFI_RULE_UNDEF:
			if (i == XREG_RIP)
				return CFI_STEP_END;
			break;
		case CFI_RULE_EXPR:
			if (i == XREG_RIP)
				return CFI_STEP_FAILED;
			break;
		}
	}
	if (!proc_regs_has(&out, XREG_RIP))
		return CFI_STEP_FAILED;
	if (out.r[XREG_RIP] == 0)
		return CFI_STEP_END;
	proc_regs_set(&out, XREG_RSP, cfa);
	*regs = out;
	return CFI_STEP_OK;
}

enum cfi_step_result cfi_unwind_fp(struct proc_regs *regs, cfi_read_fn read, void *ctx)
{
	uint64_t bp, ra, next_bp;

	if (!proc_regs_has(regs, XREG_RBP) || !proc_regs_has(regs, XREG_RSP))
		return CFI_STEP_NO_REG;
	bp = regs->r[XREG_RBP];
	/* the chain goes up the stack, 16-byte aligned frames or at least 8 */
	if (bp < regs->r[XREG_RSP] || (bp & 7) || read(ctx, bp, &next_bp) < 0 ||
	    read(ctx, bp + 8, &ra) < 0)
		return CFI_STEP_FAILED;
	if (!ra)
		return CFI_STEP_END;
	regs->known = 0;
	proc_regs_set(regs, XREG_RBP, next_bp);
	proc_regs_set(regs, XREG_RSP, bp + 16);
	proc_regs_set(regs, XREG_RIP, ra);
	return CFI_STEP_OK;
}
