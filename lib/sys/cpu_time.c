/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/cpu_time.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cpu_time_parse_busy(const char *proc_stat, uint64_t *ticks)
{
	/* cpu  user nice system idle iowait irq softirq steal guest guest_nice;
	 * guest time is counted in user already */
	unsigned long long v[7] = { 0 };
	const char *line = proc_stat;

	while (line && strncmp(line, "cpu ", 4) != 0) {
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (!line || sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			    &v[3], &v[4], &v[5], &v[6]) != 7)
		return -1;
	*ticks = (uint64_t)v[0] + v[1] + v[2] + v[5] + v[6];
	return 0;
}

uint64_t cpu_time_busy_ns(void)
{
	char buf[512];
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t ticks;
	size_t n;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f); /* the "cpu " line comes first */
	fclose(f);
	buf[n] = '\0';
	if (hz <= 0 || cpu_time_parse_busy(buf, &ticks) < 0)
		return 0;
	return ticks * (1000000000ull / (uint64_t)hz);
}
