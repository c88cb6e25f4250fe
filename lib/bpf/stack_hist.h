/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Log2 histograms of durations per Python stack, for the stacks with the
 * most time (pyoffcpu -H: blocked durations; the same shape serves any
 * tool that times waits by Python stack).
 */
#ifndef PYBPF_STACK_HIST_H
#define PYBPF_STACK_HIST_H

#include <stdint.h>
#include <stdio.h>

#include "bpf/registry.h"
#include "bpf/stack_collector.h"

struct stack_hist_maps {
	int hists_fd;    /* struct pyb_hist_key -> u64 count */
	int counts_fd;   /* struct pyb_count_key -> u64 time: ranks the stacks */
	int pystacks_fd; /* names them */
};

/*
 * Prints, for the top stacks by time of the given kind (PYB_KIND_*), a
 * header and the histogram. Returns the number of stacks printed, or -1.
 */
int stack_hist_print(struct stack_collector *col, struct py_registry *reg,
		     const struct stack_hist_maps *maps, unsigned int kind, int top,
		     const char *unit, FILE *out);

#endif
