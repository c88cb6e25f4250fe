/* SPDX-License-Identifier: Apache-2.0 */
#include "cli_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pybpf_version.h"

int cli_parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > (1L << 22))
		return -1;
	*pid = (pid_t)v;
	return 0;
}

int cli_parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

void cli_print_version(const char *tool)
{
	printf("%s (pybpf-tools) %s\n", tool, PYBPF_VERSION);
}
