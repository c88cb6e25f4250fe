/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pyprofile: on-CPU sampling (sample.bpf.h). On each perf-event sample of a registered
 * Python process: walk its Python stack, take kernel and native user stack
 * ids, and count the combination in a hash map (aggregated in kernel).
 * Also reports exec and fork so user space can register new processes.
 *
 * Compile-time parameters (-D): PYSTACKS_SIZE, COUNTS_SIZE,
 * STACK_STORAGE_SIZE, USER_STACKS, KERNEL_STACKS, PYB_ASYNC (--async).
 */
#include <uapi/linux/ptrace.h>

#include "pystacks.bpf.h"

BPF_STACK_TRACE(stack_traces, STACK_STORAGE_SIZE);

#include "sample.bpf.h"
