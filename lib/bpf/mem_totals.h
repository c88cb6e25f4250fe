/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pymem's growth mode, the user-space half of bpf_c/pymem.bpf.c's maps:
 * each process's totals (faults counted and not, bytes mapped and
 * unmapped), and the bytes by stack split by whether a Python stack was
 * found.
 */
#ifndef PYBPF_BPF_MEM_TOTALS_H
#define PYBPF_BPF_MEM_TOTALS_H

#include <stdint.h>
#include <sys/types.h>

#include "abi/mem_abi.h"

/* Gives BPF the process's program break before it sees a brk call (the
 * first change is then known). Nothing if BPF has an entry already. */
void mem_totals_seed_brk(int totals_fd, pid_t pid, uint64_t brk);

/* The process's totals; zeros if BPF has none. */
void mem_totals_read(int totals_fd, pid_t pid, struct pyb_mem_totals *out);

/* Bytes made resident so far, as counted by stack (the counts map), per
 * process: with a Python stack, and without (a thread with no Python
 * frame, or none readable). */
struct mem_split {
	uint64_t python, other;
};

/* Adds pid's counts (0: every process's) into *out. */
void mem_counts_split(int counts_fd, pid_t pid, struct mem_split *out);

#endif
