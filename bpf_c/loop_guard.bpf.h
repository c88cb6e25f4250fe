/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loops for the verifier (lib/abi/loop_abi.h):
 *
 *	u32 n;
 *	PYB_FOR(n, MAX, s->count, done) {   (s->count: map memory)
 *		...                          (break and continue as in any loop)
 *	}
 *	done: __attribute__((unused));
 *	PYB_FOR_END(s->count, n);          (s->count is now the turns taken;
 *	                                     only where it is wanted: in the
 *	                                     counted loop, a use of n after it
 *	                                     makes the verifier check what
 *	                                     follows once per way out)
 *
 * With PYB_MAY_GOTO (the kernel has may_goto), the count lives in map
 * memory, which the verifier does not follow, and the head of each turn
 * carries a guard user space turns into may_goto: the body is checked
 * until its states repeat. Without, the plain counted loop (the code
 * before may_goto existed, instruction for instruction: the sampling
 * program with --async is near the verifier's limit there), checked once
 * per turn.
 */
#ifndef PYBPF_LOOP_GUARD_BPF_H
#define PYBPF_LOOP_GUARD_BPF_H

#include "../lib/abi/loop_abi.h"

#define PYB_STRINGIFY_(x) #x
#define PYB_STRINGIFY(x) PYB_STRINGIFY_(x)

#ifdef PYB_MAY_GOTO
/* The count is stored to and read back from map memory at each turn
 * (volatile), never carried in a register the verifier would know; no
 * "memory" clobber, which would make every other field the loop reads
 * (the layout's offsets, the scratch's pointers) be loaded again each
 * turn as well. */
#define PYB_LOOP_GUARD(out)                                                                  \
	asm goto("if r0 == " PYB_STRINGIFY(PYB_LOOP_GUARD_IMM) " goto %l[" #out "]"         \
		 : : : : out)
#define PYB_IN_MEMORY(x) (*(volatile __typeof__(x) *)&(x))
#define PYB_FOR(n, max, kept, out)                                                           \
	for (PYB_IN_MEMORY(kept) = 0;; PYB_IN_MEMORY(kept) = (n) + 1)                        \
		if (({ PYB_LOOP_GUARD(out); (n) = PYB_IN_MEMORY(kept); (n) >= (max); }))     \
			break;                                                               \
		else
#define PYB_FOR_END(kept, n)
#else
#define PYB_FOR(n, max, kept, out) for ((n) = 0; (n) < (max); (n)++)
#define PYB_FOR_END(kept, n) ((kept) = (n))
#endif

#endif
