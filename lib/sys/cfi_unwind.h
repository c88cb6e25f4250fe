/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One step of a user-space native unwind on x86-64: from a function's
 * registers to its caller's, by the call frame instructions of its FDE
 * (sys/eh_frame.h), or by the frame-pointer chain where a function has no
 * unwind information. Memory is read through a callback, so the same code
 * unwinds a live process and a core file. Expressions (DW_CFA_expression
 * and friends, as in PLT stubs) are not evaluated: the step fails.
 */
#ifndef PYBPF_SYS_CFI_UNWIND_H
#define PYBPF_SYS_CFI_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/eh_frame.h"
#include "sys/regs.h"

typedef int (*cfi_read_fn)(void *ctx, uint64_t addr, uint64_t *value);

enum cfi_step_result {
	CFI_STEP_OK = 0,
	CFI_STEP_END = 1,      /* the outermost frame: no return address */
	CFI_STEP_FAILED = -1,  /* rules we do not follow, or memory we cannot read */
	CFI_STEP_NO_REG = -2,  /* the frame is found from a register we do not know (rbp) */
};

/* The rule for one register in a row of the CFI table (DWARF 4, 6.4.1). */
enum cfi_rule_kind {
	CFI_RULE_SAME = 0,   /* same value, or no rule given (callee-saved keep theirs) */
	CFI_RULE_UNDEF,      /* undefined: for the return address, the outermost frame */
	CFI_RULE_OFFSET,     /* saved at CFA + value */
	CFI_RULE_VAL_OFFSET, /* the value is CFA + value */
	CFI_RULE_REG,        /* in register number value */
	CFI_RULE_EXPR,       /* by a DWARF expression (not kept) */
};

struct cfi_rule {
	enum cfi_rule_kind kind;
	int64_t value; /* offset from the CFA, or a register number */
};

/* The rules at one address: how the CFA is found and where each of the
 * registers 0..16 (16 the return address) was saved. */
struct cfi_row {
	int cfa_reg;      /* CFA = r[cfa_reg] + cfa_off; -1: by an expression */
	int64_t cfa_off;
	const uint8_t *cfa_expr; /* the expression when cfa_reg is -1, in the */
	size_t cfa_expr_len;     /* section's data (as eh_cfi points into it) */
	struct cfi_rule reg[XREG_COUNT];
};

/* Called with the row that holds from loc up to the next call's loc (or the
 * end of the FDE's range). Returns 0 to go on. */
typedef int (*cfi_row_fn)(void *ctx, uint64_t loc, const struct cfi_row *row);

/* The most bytes of instructions (the CIE's and the FDE's together) run
 * for one FDE; real ones are a few hundred at most. An FDE with more is
 * not followed (cfi_each_row, cfi_unwind_step fail on it). */
#define CFI_FDE_BYTES_MAX (64u << 10)

/* The row the CIE's instructions set up, before the FDE's: the same for
 * every FDE of the CIE (cfi->cie_entry). Returns false if garbled. */
bool cfi_initial_row(const struct eh_cfi *cfi, struct cfi_row *initial);

/*
 * Runs the CIE's and the FDE's instructions over the FDE's whole range:
 * fn at cfi->start, then at each location the instructions advance to,
 * increasing and below cfi->end (an advance by 0 calls nothing; rows may
 * repeat). Returns 0, or -1 if the instructions are garbled or fn stopped
 * the run (fn may have been called before).
 */
int cfi_each_row(const struct eh_cfi *cfi, cfi_row_fn fn, void *ctx);

/* The same from the CIE's row, as cfi_initial_row() gave it: the CIE's
 * instructions run once for all its FDEs. */
int cfi_each_row_from(const struct eh_cfi *cfi, const struct cfi_row *initial, cfi_row_fn fn,
		      void *ctx);

/*
 * Replaces *regs (a frame whose code cfi describes) with its caller's. pc
 * is where the frame is, as linked (the file's address, without the load
 * bias): for a caller frame its return address minus one, which is still
 * inside the call.
 */
enum cfi_step_result cfi_unwind_step(const struct eh_cfi *cfi, uint64_t pc, struct proc_regs *regs,
				     cfi_read_fn read, void *ctx);

/* The same by the frame-pointer chain: [rbp] the caller's rbp, [rbp+8] the
 * return address. */
enum cfi_step_result cfi_unwind_fp(struct proc_regs *regs, cfi_read_fn read, void *ctx);

#endif
