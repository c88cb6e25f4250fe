/* SPDX-License-Identifier: Apache-2.0 */
/* Durations for people: 950 us, 12.3 ms, 4.52 s, 21 min 47 s, 3 h 05 min;
 * sizes. */
#ifndef PYBPF_REPORT_UNITS_H
#define PYBPF_REPORT_UNITS_H

#include <stddef.h>
#include <stdint.h>

void report_format_us(uint64_t us, char *buf, size_t len);

/* Sizes for people, in powers of 1024: 512 B, 4.0 KiB, 200.3 MiB, 1.50 GiB. */
void report_format_bytes(uint64_t bytes, char *buf, size_t len);

#endif
