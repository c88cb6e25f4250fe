/* SPDX-License-Identifier: Apache-2.0 */
/* Durations for people: 950 us, 12.3 ms, 4.52 s, 21 min 47 s, 3 h 05 min. */
#ifndef PYBPF_REPORT_UNITS_H
#define PYBPF_REPORT_UNITS_H

#include <stddef.h>
#include <stdint.h>

void report_format_us(uint64_t us, char *buf, size_t len);

#endif
