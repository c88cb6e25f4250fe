/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/proc_maps.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/remote_mem.h"
#include "sys/grow.h"

static int errno_for_proc(void)
{
	return errno == ENOENT ? -ESRCH : -errno;
}

int proc_maps_read(pid_t pid, struct proc_maps *maps)
{
	char path[64], *line = NULL;
	size_t cap = 0, alloc = 0;
	FILE *f;

	if (remote_image_of(pid))
		return remote_image_of(pid)->maps(remote_image_of(pid)->ctx, maps);

	maps->v = NULL;
	maps->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno_for_proc();
	while (getline(&line, &cap, f) > 0) {
		struct proc_map m = { 0 }, *v;
		int name_at = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &m.start, &m.end, m.perms, &m.offset, &m.dev_major, &m.dev_minor,
			   &m.inode, &name_at) < 7 ||
		    m.start >= m.end)
			continue; /* not a mapping the kernel would print */
		line[strcspn(line, "\n")] = '\0';
		m.path = strdup(name_at > 0 ? line + name_at : "");
		if (!m.path)
			break;
		v = grow_room(maps->v, maps->n, &alloc, 64, sizeof(*v));
		if (!v) {
			free(m.path);
			break;
		}
		maps->v = v;
		maps->v[maps->n++] = m;
	}
	free(line);
	fclose(f);
	if (maps->n == 0)
		return -ESRCH; /* a live process always has mappings */
	return 0;
}

void proc_maps_free(struct proc_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		free(maps->v[i].path);
	free(maps->v);
	maps->v = NULL;
	maps->n = 0;
}

const char *proc_map_basename(const struct proc_map *m)
{
	const char *slash = strrchr(m->path, '/');

	return slash ? slash + 1 : m->path;
}

/*
 * A pid or tid as /proc prints it: decimal digits only, at most the
 * kernel's PID_MAX_LIMIT (2^22), never 0. A longer or larger number is
 * not a pid (a long would wrap into a non-positive pid_t). Returns the
 * value and sets *end past the digits, or -1.
 */
#define PROC_PID_MAX (1L << 22)

static long parse_pid(const char *s, const char **end)
{
	long v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	*end = s;
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > PROC_PID_MAX)
			return -1;
	}
	*end = s;
	return v > 0 ? v : -1;
}

/* Reads the last number of the "NSpid:" line of a status file. */
static int read_nspid(const char *status_path, pid_t *out)
{
	char line[256];
	int found = -ESRCH;
	FILE *f = fopen(status_path, "re");

	if (!f)
		return errno_for_proc();
	while (fgets(line, sizeof(line), f)) {
		const char *p = line + 6, *end;
		long v = -1;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		/* one pid per namespace level, innermost last; all must be pids */
		do {
			v = parse_pid(p, &end);
			p = end;
		} while (v > 0 && *p != '\n' && *p != '\0');
		if (v > 0) {
			*out = (pid_t)v;
			found = 0;
		}
		break;
	}
	fclose(f);
	return found;
}

int proc_ns_pid(pid_t pid, pid_t *ns_pid)
{
	char path[64];

	if (remote_image_of(pid)) {
		*ns_pid = remote_image_of(pid)->pid;
		return 0;
	}

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return read_nspid(path, ns_pid);
}

static int cmp_tid(const void *a, const void *b)
{
	const struct proc_thread_id *x = a, *y = b;

	return (x->host_tid > y->host_tid) - (x->host_tid < y->host_tid);
}

int proc_list_threads(pid_t pid, struct proc_thread_id *out, size_t max)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (remote_image_of(pid))
		return remote_image_of(pid)->threads(remote_image_of(pid)->ctx, out, max);

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno_for_proc();
	while ((de = readdir(d)) && n < max) {
		char status[96];
		const char *end;
		long tid = parse_pid(de->d_name, &end);

		if (tid <= 0 || *end)
			continue;
		snprintf(status, sizeof(status), "/proc/%d/task/%ld/status", (int)pid, tid);
		out[n].host_tid = (pid_t)tid;
		if (read_nspid(status, &out[n].ns_tid) < 0)
			out[n].ns_tid = (pid_t)tid; /* thread just exited, or no NSpid */
		n++;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), cmp_tid);
	return (int)n;
}

/*
 * The kernel cuts comm at 15 bytes, possibly inside a UTF-8 sequence
 * (Python 3.14 names threads after their target): drop such a tail.
 */
static void trim_partial_utf8(char *s)
{
	size_t n = strlen(s), start = n;

	while (start > 0 && ((unsigned char)s[start - 1] & 0xc0) == 0x80 && n - start < 3)
		start--;
	if (start > 0 && ((unsigned char)s[start - 1] & 0x80)) {
		unsigned char lead = (unsigned char)s[start - 1];
		size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;

		if (n - (start - 1) < need)
			s[start - 1] = '\0';
	}
}

int proc_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[96];
	size_t n;
	FILE *f;

	if (remote_image_of(pid))
		return remote_image_of(pid)->comm(remote_image_of(pid)->ctx, tid, buf, len);

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno_for_proc();
	/* the name and a '\n'; the name itself may hold '\n' (prctl) */
	n = len ? fread(buf, 1, len - 1, f) : 0;
	fclose(f);
	if (!len)
		return 0;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	trim_partial_utf8(buf);
	return 0;
}

const char *proc_stat_after_comm(pid_t pid, char *buf, size_t len)
{
	char path[32];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n ? strrchr(buf, ')') : NULL;
}

bool proc_alive(pid_t pid)
{
	char buf[512];
	const char *close;

	if (remote_image_of(pid))
		return true;
	close = proc_stat_after_comm(pid, buf, sizeof(buf));
	return close && close[1] == ' ' && close[2] != 'Z' && close[2] != 'X';
}

bool proc_is_kernel_thread(pid_t pid)
{
	char buf[512];
	const char *close;
	unsigned long flags = 0;

	if (remote_image_of(pid))
		return false;
	/* " S ppid pgrp session tty_nr tpgid flags ..." */
	close = proc_stat_after_comm(pid, buf, sizeof(buf));
	return close && sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
	       (flags & 0x00200000UL) != 0; /* PF_KTHREAD */
}

int proc_tgid(pid_t tid, pid_t *tgid)
{
	char path[32], line[128];
	int rc = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return errno_for_proc();
	while (fgets(line, sizeof(line), f)) {
		const char *end;
		long v;

		if (strncmp(line, "Tgid:", 5) != 0)
			continue;
		v = parse_pid(line + 5, &end);
		if (v > 0) {
			*tgid = (pid_t)v;
			rc = 0;
		}
		break;
	}
	fclose(f);
	return rc;
}

bool proc_exists(pid_t pid)
{
	char path[32];

	if (remote_image_of(pid))
		return true;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return access(path, F_OK) == 0;
}

bool proc_thread_exists(pid_t pid, pid_t tid)
{
	char path[48];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

int proc_exe_path(pid_t pid, char *path, size_t len)
{
	const struct remote_image *img = remote_image_of(pid);

	if (img)
		return img->exe(img->ctx, path, len);
	snprintf(path, len, "/proc/%d/exe", (int)pid);
	return 0;
}

bool proc_self_in_host_pid_ns(void)
{
	struct stat st;

	/* the kernel's initial PID namespace has a fixed inode number
	 * (PROC_PID_INIT_INO); if /proc cannot say, assume the host's */
	if (stat("/proc/self/ns/pid", &st) < 0)
		return true;
	return st.st_ino == 0xEFFFFFFCu;
}

static void task_path(char *buf, size_t len, pid_t pid, pid_t tid, const char *file)
{
	if (tid)
		snprintf(buf, len, "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
	else
		snprintf(buf, len, "/proc/%d/%s", (int)pid, file);
}

/* A decimal counter of /proc: digits only, no wrap-around. */
static bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

/* Context switches from status: for kernels without schedstat. */
static void read_switches(pid_t pid, pid_t tid, uint64_t *switches)
{
	char path[96], line[256];
	FILE *f;

	task_path(path, sizeof(path), pid, tid, "status");
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		uint64_t v;

		if ((strncmp(line, "voluntary_ctxt_switches:", 24) == 0 &&
		     parse_u64(line + 24, &v)) ||
		    (strncmp(line, "nonvoluntary_ctxt_switches:", 27) == 0 &&
		     parse_u64(line + 27, &v)))
			*switches += v;
	}
	fclose(f);
}

int proc_thread_sched(pid_t pid, pid_t tid, struct proc_sched *out)
{
	char path[96], buf[512], *close, *p;
	uint64_t wait_ns;
	size_t n;
	FILE *f;

	memset(out, 0, sizeof(*out));
	task_path(path, sizeof(path), pid, tid, "stat");
	f = fopen(path, "re");
	if (!f)
		return errno_for_proc();
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold ") " itself, so the last ')' */
	close = strrchr(buf, ')');
	if (!close || close[1] != ' ' || !close[2] || close[2] == '\n')
		return -EINVAL;
	out->state = close[2];
	/* schedstat: "run_ns wait_ns timeslices": the last counts every
	 * time the thread was given a CPU */
	task_path(path, sizeof(path), pid, tid, "schedstat");
	f = fopen(path, "re");
	if (f) {
		bool ok = fgets(buf, sizeof(buf), f) && parse_u64(buf, &out->run_ns) &&
			  (p = strchr(buf, ' ')) && parse_u64(p, &wait_ns) &&
			  (p = strchr(p + 1, ' ')) && parse_u64(p, &out->switches);

		fclose(f);
		if (ok)
			return 0;
		out->run_ns = out->switches = 0;
	}
	read_switches(pid, tid, &out->switches);
	return 0;
}

/* "VmRSS:\t  123 kB" after its name: bytes. */
static bool parse_kb(const char *s, uint64_t *out)
{
	uint64_t kb;

	if (!parse_u64(s, &kb) || kb > UINT64_MAX / 1024)
		return false;
	*out = kb * 1024;
	return true;
}

int proc_memory_read(pid_t pid, struct proc_memory *out)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
		{ "VmRSS:", offsetof(struct proc_memory, rss) },
		{ "RssAnon:", offsetof(struct proc_memory, anon) },
		{ "RssFile:", offsetof(struct proc_memory, file) },
		{ "RssShmem:", offsetof(struct proc_memory, shmem) },
	};
	char path[64], line[256];
	unsigned found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno_for_proc();
	memset(out, 0, sizeof(*out));
	/* the kernel's lines; a bounded file (the name on its first line is
	 * escaped by the kernel, and fgets splits a long one harmlessly) */
	for (int n = 0; n < 200 && fgets(line, sizeof(line), f); n++) {
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			size_t len = strlen(fields[i].name);

			if (strncmp(line, fields[i].name, len) == 0 &&
			    parse_kb(line + len, (uint64_t *)((char *)out + fields[i].off)))
				found |= 1u << i;
		}
	}
	fclose(f);
	return found & 1 ? 0 : -ENOENT;
}

uint64_t proc_heap_end(pid_t pid)
{
	struct proc_maps maps = { 0 };
	uint64_t end = 0;

	if (proc_maps_read(pid, &maps) < 0)
		return 0;
	for (size_t i = 0; i < maps.n; i++) {
		/* only the kernel names a mapping so: a file's path starts
		 * with '/', a named anonymous one is "[anon:...]" */
		if (strcmp(maps.v[i].path, "[heap]") == 0) {
			end = maps.v[i].end;
			break;
		}
	}
	proc_maps_free(&maps);
	return end;
}
