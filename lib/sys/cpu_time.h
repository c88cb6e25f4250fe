/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU time the whole machine spent busy (running tasks or interrupts, not
 * idle, not waiting for I/O, not stolen by a hypervisor), from /proc/stat.
 * A CPU clock event that samples every CPU fires only where one is busy on
 * some kernels and also in idle on others, so a rate is counted against
 * busy time with the idle task's samples left out.
 */
#ifndef PYBPF_SYS_CPU_TIME_H
#define PYBPF_SYS_CPU_TIME_H

#include <stdint.h>

/*
 * Busy time of the "cpu " (all CPUs) line of /proc/stat, in clock ticks.
 * Returns 0 and sets *ticks, or -1 if the text has no such line.
 */
int cpu_time_parse_busy(const char *proc_stat, uint64_t *ticks);

/* Busy time of all CPUs so far, in nanoseconds; 0 if it cannot be read. */
uint64_t cpu_time_busy_ns(void);

#endif
