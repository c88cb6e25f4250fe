/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loops the kernel bounds (may_goto, Linux 6.9+), shared by both halves.
 *
 * A bounded loop whose index the verifier knows is verified once per
 * turn: the Python walk's 192 turns were most of a tool's start-up. Where
 * the kernel has may_goto, the BPF side writes each such loop without a
 * counter the verifier can see (its count is kept in map memory and
 * checked there) and puts a guard at its head: the compiler emits it as
 * "if r0 == PYB_LOOP_GUARD_IMM goto <after the loop>", and user space
 * rewrites every such jump into may_goto before loading (clang 14, which
 * libbcc 0.26 uses, has no may_goto). The verifier then checks the body
 * until its states repeat, a few turns, and the kernel ends the loop
 * after millions of turns if the count in map memory never did.
 */
#ifndef PYBPF_LOOP_ABI_H
#define PYBPF_LOOP_ABI_H

#define PYB_LOOP_GUARD_IMM 0x7ffe0f0b

#endif
