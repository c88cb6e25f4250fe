/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU lists as the kernel prints them (/sys/devices/system/cpu/{online,
 * possible}: "0-3,8,10-11"). Sized at run time: a machine may have any
 * number of CPUs, and per-CPU BPF values come one per possible CPU.
 */
#ifndef PYBPF_SYS_CPU_LIST_H
#define PYBPF_SYS_CPU_LIST_H

#include <stddef.h>

/* Highest CPU number the kernel accepts (its NR_CPUS is at most 8192). */
#define CPU_LIST_MAX_CPU 65535

/*
 * Parses a CPU list into a malloc'ed array of CPU numbers (ascending as
 * written). Returns the count (*cpus set, NULL for 0), or -1 if the text
 * is not a CPU list (*cpus NULL).
 */
int cpu_list_parse(const char *text, int **cpus);

/* The CPUs that are online now: malloc'ed array and count (>= 1 unless
 * out of memory: falls back to 0..sysconf-1). */
int cpu_list_online(int **cpus);

/* Number of possible CPUs: the size of a per-CPU BPF value array (the
 * highest possible CPU number + 1). */
int cpu_list_possible_count(void);

#endif
