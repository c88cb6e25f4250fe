/* SPDX-License-Identifier: Apache-2.0 */
/* What the kernel lets perf events do, as its sysctls say. */
#ifndef PYBPF_SYS_PERF_LIMITS_H
#define PYBPF_SYS_PERF_LIMITS_H

/* A cpu-clock event's timer fires every 10 us at most, whatever is asked. */
#define PERF_CPU_CLOCK_MAX_HZ 100000

/*
 * kernel.perf_event_max_sample_rate: the highest frequency perf_event_open
 * accepts (the kernel lowers it by itself when sampling takes too long).
 * Returns it, or -1 if it cannot be read.
 */
int perf_max_sample_rate(void);

#endif
