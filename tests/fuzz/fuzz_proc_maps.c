// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/proc_maps.c: /proc/PID/{maps,status,comm,stat} of a process that
 * may name its mappings and itself anything. The readers build those paths
 * from a pid, so this target forks a child that only waits, and in a
 * private mount namespace (needs root, like the tools) bind-mounts files
 * over the child's /proc entries; each input is written to those files and
 * read through the real paths. Input: the five files' contents (maps,
 * status, comm, stat, schedstat), separated by "\0|\0". Seeds: real /proc
 * files of live processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "sys/proc_maps.h"

#define NFILES 5
static const char *const names[NFILES] = { "maps", "status", "comm", "stat", "schedstat" };
static int fds[NFILES];
static pid_t child;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_proc_maps: %s: %s (needs root: a private mount namespace)\n",
		what, strerror(errno));
	exit(1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/pybpf-fuzz-proc-XXXXXX";

	(void)argc;
	(void)argv;
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	if (unshare(CLONE_NEWNS) != 0)
		die("unshare(CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		die("mount --make-rprivate /");
	if (!mkdtemp(dir))
		die("mkdtemp");
	for (int i = 0; i < NFILES; i++) {
		char src[128], dst[64];

		snprintf(src, sizeof(src), "%s/%s", dir, names[i]);
		snprintf(dst, sizeof(dst), "/proc/%d/%s", (int)child, names[i]);
		fds[i] = open(src, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fds[i] < 0)
			die(src);
		if (mount(src, dst, NULL, MS_BIND, NULL) != 0)
			die(dst);
		unlink(src); /* the mount keeps it; nothing to clean up */
	}
	rmdir(dir);
	return 0;
}

static void set_file(int i, const uint8_t *p, size_t n)
{
	if (ftruncate(fds[i], 0) != 0 || (n && pwrite(fds[i], p, n, 0) != (ssize_t)n))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct proc_maps maps;
	char comm[32], comm16[16], tiny[2];
	struct proc_sched sched;
	pid_t pid = 0;

	for (int i = 0; i < NFILES; i++) {
		const uint8_t *sep = p < end ? memmem(p, (size_t)(end - p), "\0|\0", 3) : NULL;
		size_t n = sep ? (size_t)(sep - p) : (size_t)(end - p);

		set_file(i, p, n);
		p = sep ? sep + 3 : end;
	}
	if (proc_maps_read(child, &maps) == 0) {
		for (size_t i = 0; i < maps.n; i++) {
			const char *base = proc_map_basename(&maps.v[i]);

			FUZZ_CHECK(maps.v[i].path && !strchr(maps.v[i].path, '\n'));
			FUZZ_CHECK(base >= maps.v[i].path && !strchr(base, '/'));
			FUZZ_CHECK(strlen(maps.v[i].perms) < sizeof(maps.v[i].perms));
			FUZZ_CHECK(maps.v[i].start < maps.v[i].end);
		}
		proc_maps_free(&maps);
	}
	if (proc_ns_pid(child, &pid) == 0)
		FUZZ_CHECK(pid > 0);
	if (proc_comm(child, 0, comm, sizeof(comm)) == 0)
		FUZZ_CHECK(strlen(comm) < sizeof(comm)); /* a '\n' of the name's own is kept */
	if (proc_comm(child, 0, comm16, sizeof(comm16)) == 0)
		FUZZ_CHECK(strlen(comm16) < sizeof(comm16));
	if (proc_comm(child, 0, tiny, sizeof(tiny)) == 0)
		FUZZ_CHECK(strlen(tiny) < sizeof(tiny));
	(void)proc_alive(child);
	if (proc_thread_sched(child, 0, &sched) == 0)
		FUZZ_CHECK(sched.state && sched.state != '\n');
	pid = 0;
	if (proc_tgid(child, &pid) == 0)
		FUZZ_CHECK(pid > 0);
	return 0;
}
