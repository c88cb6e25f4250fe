/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loops the kernel bounds (lib/abi/loop_abi.h): whether this kernel has
 * may_goto, and the rewrite of the BPF side's loop guards into it.
 */
#ifndef PYBPF_BPF_LOOP_GUARD_H
#define PYBPF_BPF_LOOP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_insn;

/* Whether programs may use may_goto: the kernel loads one that does (asked
 * once), and PYBPF_NO_MAY_GOTO is not set (the tests' way to run the
 * plain bounded loops this kernel would not need). */
bool loop_guard_available(void);

/* Rewrites every loop guard of insns into may_goto; the count rewritten,
 * or -1 (err) if a guard's jump does not go forward inside the program. */
int loop_guard_patch(struct bpf_insn *insns, uint32_t ninsns, char *err, size_t errlen);

#endif
