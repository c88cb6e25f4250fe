/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pyoffcpu's intervals open at the edges of a run. A thread blocked for
 * the whole run (a deadlock, a lock held elsewhere, an idle socket) makes
 * no context switch for BPF to see, and one still off CPU at the end was
 * never switched back in: both would show nothing.
 *
 * At the start, every thread of the targets that is off CPU is given an
 * entry in BPF's `start` map ("seeded"), with its Python stack read from
 * outside, so BPF charges it when it wakes. At the end, every entry still
 * in `start` is charged up to the end of the run and flagged
 * PYB_COUNT_OPEN (the report marks it "[still blocked]").
 */
#ifndef PYBPF_BPF_OPEN_INTERVALS_H
#define PYBPF_BPF_OPEN_INTERVALS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/registry.h"

struct open_seed; /* a seeded thread, as the scheduler counted it then */

struct open_intervals {
	int start_fd, counts_fd, pystacks_fd;
	pid_t only_tid;          /* -t: this thread only; 0: all */
	uint64_t min_us, max_us; /* -m/-M, applied to the part seen */
	uint64_t start_ns;       /* the run's start: where seeded intervals start */
	struct open_seed *seeds;
	size_t nseeds, cap;
	/* for the summary */
	size_t open_threads, open_since_start; /* still off CPU at the end */
	uint64_t open_us;                      /* time charged for them */
	size_t counts_lost;                    /* counts map full */
};

void open_intervals_init(struct open_intervals *oi, int start_fd, int counts_fd,
			 int pystacks_fd);
void open_intervals_free(struct open_intervals *oi);

/*
 * Seeds BPF's `start` map with the threads of the active targets that are
 * off CPU and have not switched out since BPF was attached (it has no
 * entry of theirs: its own entries take precedence): off CPU since before
 * start_ns, the start of the run (taken after attaching, before this
 * call), where their intervals start. Returns the number seeded.
 */
size_t open_intervals_seed(struct open_intervals *oi, struct py_registry *reg, uint64_t start_ns);

/*
 * After BPF is detached: charges every interval still open, from its start
 * to end_ns (CLOCK_MONOTONIC, BPF's clock), to BPF's counts map, flagged
 * PYB_COUNT_OPEN while the thread is still blocked (a woken one's blocked
 * part ended: only its wait for a CPU runs to the end).
 */
void open_intervals_charge(struct open_intervals *oi, uint64_t end_ns);

#endif
