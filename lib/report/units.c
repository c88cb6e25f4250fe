/* SPDX-License-Identifier: Apache-2.0 */
#include "report/units.h"

#include <stdio.h>

void report_format_us(uint64_t us, char *buf, size_t len)
{
	unsigned long long s = us / 1000000;

	if (us < 1000)
		snprintf(buf, len, "%llu us", (unsigned long long)us);
	else if (us < 1000000)
		snprintf(buf, len, "%.1f ms", (double)us / 1e3);
	else if (us < 60000000)
		snprintf(buf, len, "%.2f s", (double)us / 1e6);
	else if (s < 3600)
		snprintf(buf, len, "%llu min %02llu s", s / 60, s % 60);
	else
		snprintf(buf, len, "%llu h %02llu min", s / 3600, s / 60 % 60);
}

void report_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	double v = (double)bytes;

	if (bytes < 1024)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else if (bytes < (1ull << 20))
		snprintf(buf, len, "%.1f KiB", v / 1024);
	else if (bytes < (1ull << 30))
		snprintf(buf, len, "%.1f MiB", v / (1 << 20));
	else
		snprintf(buf, len, "%.2f GiB", v / (1ull << 30));
}
