/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/perf_limits.h"

#include <stdio.h>

int perf_max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1 || v <= 0)
		v = -1;
	fclose(f);
	return v;
}
