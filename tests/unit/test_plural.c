// SPDX-License-Identifier: Apache-2.0
/* lib/sys/plural.h: the form that goes with a count. */
#include <stdint.h>
#include <stdio.h>

#include "sys/plural.h"
#include "unit_check.h"

static const char *line(unsigned long long n)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%llu %s", n, plural(n, "switch off CPU", "switches off CPU"));
	return buf;
}

int main(void)
{
	CHECK_STR(plural(1, "run", "runs"), "run");
	CHECK_STR(plural(0, "run", "runs"), "runs");
	CHECK_STR(plural(2, "run", "runs"), "runs");
	CHECK_STR(plural(11, "process", "processes"), "processes");
	CHECK_STR(plural(UINT64_MAX, "was", "were"), "were");
	/* a size_t or int count converts without a cast */
	CHECK_STR(plural((size_t)1, "it", "they"), "it");
	CHECK_STR(plural((int)1, "it", "they"), "it");
	CHECK_STR(line(1), "1 switch off CPU");
	CHECK_STR(line(0), "0 switches off CPU");
	CHECK_STR(line(2178), "2178 switches off CPU");
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
