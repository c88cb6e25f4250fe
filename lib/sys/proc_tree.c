/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/proc_tree.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/proc_maps.h"

int proc_ppid(pid_t pid, pid_t *ppid)
{
	char buf[512];
	const char *close = proc_stat_after_comm(pid, buf, sizeof(buf));
	int v;

	if (!close || sscanf(close + 1, " %*c %d", &v) != 1)
		return -ENOENT;
	*ppid = (pid_t)v;
	return 0;
}

struct link {
	pid_t pid, ppid;
	bool in; /* a descendant of a root, or a root */
};

static int by_pid(const void *a, const void *b)
{
	const struct link *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static struct link *find(struct link *links, size_t n, pid_t pid)
{
	struct link key = { .pid = pid };

	return bsearch(&key, links, n, sizeof(*links), by_pid);
}

/* Every process with its parent, sorted by pid. */
static int read_links(struct link **links, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t cap = 0;

	*links = NULL;
	*n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		pid_t ppid;

		if (*end || pid <= 0 || proc_ppid((pid_t)pid, &ppid) < 0)
			continue;
		if (*n == cap) {
			struct link *v = realloc(*links, (cap = cap ? cap * 2 : 512) * sizeof(*v));

			if (!v) {
				closedir(d);
				return -1;
			}
			*links = v;
		}
		(*links)[(*n)++] = (struct link){ (pid_t)pid, ppid, false };
	}
	closedir(d);
	qsort(*links, *n, sizeof(**links), by_pid);
	return 0;
}

int proc_descendants(const pid_t *roots, size_t nroots, pid_t **out, size_t *n)
{
	struct link *links, *l;
	size_t nlinks, cap = 0;
	bool grew = true;

	*out = NULL;
	*n = 0;
	if (read_links(&links, &nlinks) < 0) {
		free(links);
		return -1;
	}
	for (size_t i = 0; i < nroots; i++)
		if ((l = find(links, nlinks, roots[i])))
			l->in = true;
	/* a pass per generation: few, since process trees are shallow */
	while (grew) {
		grew = false;
		for (size_t i = 0; i < nlinks; i++) {
			if (links[i].in || !(l = find(links, nlinks, links[i].ppid)) || !l->in)
				continue;
			if (*n == cap) {
				pid_t *v = realloc(*out, (cap = cap ? cap * 2 : 64) * sizeof(*v));

				if (!v) {
					free(links);
					return -1;
				}
				*out = v;
			}
			links[i].in = true;
			(*out)[(*n)++] = links[i].pid;
			grew = true;
		}
	}
	free(links);
	return 0;
}

/* Adds the pids of one children file to out, once each. */
static size_t add_children(FILE *f, pid_t *out, size_t n, size_t max)
{
	long v;

	while (n < max && fscanf(f, "%ld", &v) == 1) {
		bool seen = false;

		for (size_t i = 0; i < n && !seen; i++)
			seen = out[i] == (pid_t)v;
		if (v > 0 && !seen)
			out[n++] = (pid_t)v;
	}
	return n;
}

size_t proc_children(pid_t pid, pid_t *out, size_t max)
{
	char path[64];
	struct dirent *de;
	size_t n = 0, tasks = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (n < max && tasks < PROC_CHILDREN_TASKS && (de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		FILE *f;

		if (*end || tid <= 0)
			continue;
		tasks++;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/children", (int)pid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = add_children(f, out, n, max);
		fclose(f);
	}
	closedir(d);
	return n;
}
