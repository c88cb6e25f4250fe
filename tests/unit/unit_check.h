/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every unit test program counts with: CHECK(cond) and
 * CHECK_STR(got, want) count a pass or print the failure and count it.
 * One test program per file includes it (the counters are its own).
 */
#ifndef PYBPF_UNIT_CHECK_H
#define PYBPF_UNIT_CHECK_H

#include <stdio.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (cond) {                                                            \
			passed++;                                                      \
		} else {                                                               \
			failed++;                                                      \
			fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                      \
	} while (0)

#define CHECK_STR(got, want)                                                           \
	do {                                                                           \
		if (strcmp((got), (want)) == 0) {                                      \
			passed++;                                                      \
		} else {                                                               \
			failed++;                                                      \
			fprintf(stderr, "%s:%d: FAILED:\n--- got\n%s--- want\n%s---\n",     \
				__FILE__, __LINE__, (got), (want));                    \
		}                                                                      \
	} while (0)

#endif
