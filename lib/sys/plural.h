/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The noun or verb that goes with a count in a message, so that no line
 * says "1 runs" or "1 threads were":
 *
 *	fprintf(stderr, "%llu %s skipped\n", n, plural(n, "run", "runs"));
 *
 * English takes the plural for every count but one, zero included
 * ("0 samples"). Both forms are spelled out, as English plurals are not
 * one suffix (process/processes, switch off CPU/switches off CPU).
 */
#ifndef PYBPF_SYS_PLURAL_H
#define PYBPF_SYS_PLURAL_H

static inline const char *plural(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

#endif
