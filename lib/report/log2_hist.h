/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Power-of-two histograms printed in the layout of bcc's print_log2_hist,
 * which users already read at a glance. Slot i holds values v with
 * floor(log2(v)) + 1 == i (BPF's bpf_log2l); slot 1 also holds 0.
 */
#ifndef PYBPF_LOG2_HIST_H
#define PYBPF_LOG2_HIST_H

#include <stdint.h>
#include <stdio.h>

#define LOG2_HIST_SLOTS 65

struct log2_hist {
	uint64_t slots[LOG2_HIST_SLOTS];
};

/* The slot a value falls in (same as bpf_log2l in BPF). */
unsigned int log2_hist_slot(uint64_t value);

void log2_hist_add(struct log2_hist *h, uint64_t value, uint64_t count);

/* Prints "     usecs               : count     distribution" and one row per
 * slot up to the last non-empty one. Prints nothing for an empty one. */
void log2_hist_print(const struct log2_hist *h, const char *unit, FILE *out);

#endif
