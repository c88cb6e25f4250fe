/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/cpu_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A CPU number: digits only, at most CPU_LIST_MAX_CPU. */
static int parse_cpu(const char **s)
{
	long v = 0;
	const char *p = *s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > CPU_LIST_MAX_CPU)
			return -1;
	}
	*s = p;
	return (int)v;
}

static int push(int **v, int *n, int *cap, int cpu)
{
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 64;
		int *grown = realloc(*v, (size_t)ncap * sizeof(**v));

		if (!grown)
			return -1;
		*v = grown;
		*cap = ncap;
	}
	(*v)[(*n)++] = cpu;
	return 0;
}

int cpu_list_parse(const char *text, int **cpus)
{
	const char *p = text;
	int *v = NULL, n = 0, cap = 0;

	*cpus = NULL;
	while (*p && *p != '\n') {
		int lo = parse_cpu(&p), hi = lo;

		if (lo >= 0 && *p == '-') {
			p++;
			hi = parse_cpu(&p);
		}
		if (lo < 0 || hi < lo || (*p != ',' && *p != '\n' && *p))
			goto bad;
		for (int c = lo; c <= hi; c++)
			if (push(&v, &n, &cap, c) < 0)
				goto bad;
		if (*p == ',')
			p++;
	}
	*cpus = v;
	return n;
bad:
	free(v);
	return -1;
}

static int read_list(const char *path, int **cpus)
{
	char buf[8192];
	size_t len;
	FILE *f = fopen(path, "re");

	*cpus = NULL;
	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	return cpu_list_parse(buf, cpus);
}

int cpu_list_online(int **cpus)
{
	long conf;
	int n = read_list("/sys/devices/system/cpu/online", cpus);

	if (n > 0)
		return n;
	free(*cpus);
	conf = sysconf(_SC_NPROCESSORS_ONLN);
	if (conf < 1)
		conf = 1;
	*cpus = malloc((size_t)conf * sizeof(**cpus));
	if (!*cpus)
		return 0;
	for (long i = 0; i < conf; i++)
		(*cpus)[i] = (int)i;
	return (int)conf;
}

int cpu_list_possible_count(void)
{
	int *cpus, n = read_list("/sys/devices/system/cpu/possible", &cpus), count = 0;
	long conf;

	for (int i = 0; i < n; i++)
		if (cpus[i] + 1 > count)
			count = cpus[i] + 1;
	free(cpus);
	if (count > 0)
		return count;
	conf = sysconf(_SC_NPROCESSORS_CONF);
	return conf > 0 ? (int)conf : 1;
}
