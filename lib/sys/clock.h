/* SPDX-License-Identifier: Apache-2.0 */
/* Time for intervals and deadlines. */
#ifndef PYBPF_SYS_CLOCK_H
#define PYBPF_SYS_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t monotonic_ns(void);

#endif
