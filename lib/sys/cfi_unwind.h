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
