/* SPDX-License-Identifier: Apache-2.0 */
#include "cli_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cli_parse_pid_list(const char *list, pid_t *pids, size_t max, size_t *n)
{
	char *copy = strdup(list), *save = NULL;
	int rc = 0;

	if (!copy)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == max || cli_parse_pid(tok, &pids[*n]) < 0) {
			rc = -1;
			break;
		}
		(*n)++;
	}
	free(copy);
	return *n ? rc : -1;
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

int cli_parse_small_int(const char *s, int min, int max, int *out)
{
	long long v;

	if (cli_parse_int(s, min, max, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

void cli_print_version(const char *tool)
{
	printf("%s (pybpf-tools) %s\n", tool, PYBPF_VERSION);
}
