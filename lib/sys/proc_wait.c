/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/proc_wait.h"

#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sys/proc_fds.h"
#include "sys/remote_mem.h"

#define NS_PER_SEC 1000000000LL

/* System calls a thread may be found blocked in (x86-64 numbers). */
static const struct {
	short nr;
	const char *name;
} syscalls[] = {
	{ 0, "read" }, { 1, "write" }, { 2, "open" }, { 3, "close" }, { 4, "stat" },
	{ 5, "fstat" }, { 6, "lstat" }, { 7, "poll" }, { 8, "lseek" }, { 9, "mmap" },
	{ 10, "mprotect" }, { 11, "munmap" }, { 12, "brk" }, { 16, "ioctl" }, { 17, "pread64" },
	{ 18, "pwrite64" }, { 19, "readv" }, { 20, "writev" }, { 21, "access" }, { 23, "select" },
	{ 24, "sched_yield" }, { 26, "msync" }, { 28, "madvise" }, { 34, "pause" },
	{ 35, "nanosleep" }, { 40, "sendfile" }, { 42, "connect" }, { 43, "accept" },
	{ 44, "sendto" }, { 45, "recvfrom" }, { 46, "sendmsg" }, { 47, "recvmsg" },
	{ 48, "shutdown" }, { 56, "clone" }, { 57, "fork" }, { 58, "vfork" }, { 59, "execve" },
	{ 61, "wait4" }, { 62, "kill" }, { 64, "semget" }, { 65, "semop" }, { 69, "msgsnd" },
	{ 70, "msgrcv" }, { 72, "fcntl" }, { 73, "flock" }, { 74, "fsync" }, { 75, "fdatasync" },
	{ 76, "truncate" }, { 77, "ftruncate" }, { 78, "getdents" }, { 82, "rename" },
	{ 83, "mkdir" }, { 84, "rmdir" }, { 87, "unlink" }, { 89, "readlink" }, { 101, "ptrace" },
	{ 128, "rt_sigtimedwait" }, { 130, "rt_sigsuspend" }, { 162, "sync" }, { 165, "mount" },
	{ 202, "futex" }, { 208, "io_getevents" }, { 217, "getdents64" }, { 220, "semtimedop" },
	{ 230, "clock_nanosleep" }, { 232, "epoll_wait" }, { 242, "mq_timedsend" },
	{ 243, "mq_timedreceive" }, { 247, "waitid" }, { 257, "openat" }, { 262, "newfstatat" },
	{ 263, "unlinkat" }, { 270, "pselect6" }, { 271, "ppoll" }, { 275, "splice" },
	{ 277, "sync_file_range" }, { 281, "epoll_pwait" }, { 288, "accept4" }, { 295, "preadv" },
	{ 296, "pwritev" }, { 299, "recvmmsg" }, { 306, "syncfs" }, { 307, "sendmmsg" },
	{ 318, "getrandom" }, { 326, "copy_file_range" }, { 327, "preadv2" }, { 328, "pwritev2" },
	{ 332, "statx" }, { 333, "io_pgetevents" }, { 426, "io_uring_enter" },
	{ 441, "epoll_pwait2" }, { 449, "futex_waitv" },
};

const char *proc_syscall_name(long nr)
{
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return NULL;
}

const char *proc_wait_state_name(char state)
{
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'T': return "stopped";
	case 't': return "tracing stop";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	case 'P': return "parked";
	case 'W': return "waking";
	default: return "unknown";
	}
}

static int read_small_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

/* stat: state, utime and stime (fields 3, 14 and 15; comm may hold ')'). */
static int read_stat(const char *dir, struct proc_wait *w)
{
	char path[96], buf[1024], *p;
	unsigned long long utime, stime;
	long tick = sysconf(_SC_CLK_TCK);
	int rc, cpu;

	snprintf(path, sizeof(path), "%s/stat", dir);
	rc = read_small_file(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &w->state,
			 &utime, &stime) != 3)
		return -EINVAL;
	if (tick > 0) {
		w->user_ns = (int64_t)(utime * (NS_PER_SEC / tick));
		w->system_ns = (int64_t)(stime * (NS_PER_SEC / tick));
	}
	/* processor is field 39: 36 fields after state */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
			  "%*d %*u %*u %*d %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*d %d",
		   &cpu) == 1)
		w->cpu = cpu;
	return 0;
}

/* "nr a0..a5 sp pc" while blocked in a call, "-1 sp pc" while blocked
 * elsewhere (a page fault), "running" on a CPU. */
static void read_syscall(const char *dir, struct proc_wait *w)
{
	char path[96], buf[512];
	unsigned long long v[9];
	long long nr;
	int n;

	snprintf(path, sizeof(path), "%s/syscall", dir);
	if (read_small_file(path, buf, sizeof(buf)) < 0)
		return;
	if (strncmp(buf, "running", 7) == 0) {
		w->running = true;
		return;
	}
	n = sscanf(buf, "%lld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n == 3 && nr == -1) {
		proc_regs_set(&w->regs, XREG_RSP, v[0]);
		proc_regs_set(&w->regs, XREG_RIP, v[1]);
	} else if (n == 9 && nr >= 0) {
		w->in_syscall = true;
		w->regs.syscall_nr = nr;
		for (int i = 0; i < 6; i++)
			w->regs.args[i] = v[i];
		proc_regs_set(&w->regs, XREG_RSP, v[6]);
		proc_regs_set(&w->regs, XREG_RIP, v[7]);
	}
}

/* se.exec_start of a sched file, in ns of the scheduler's task clock. */
static int64_t exec_start_ns(const char *path)
{
	char line[256];
	int64_t v = PROC_WAIT_UNKNOWN;
	FILE *f = fopen(path, "re");

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long ms, frac;

		if (sscanf(line, "se.exec_start : %llu.%llu", &ms, &frac) == 2) {
			v = (int64_t)(ms * 1000000 + frac);
			break;
		}
	}
	fclose(f);
	return v;
}

/*
 * The scheduler's task clock of one CPU, now: our own se.exec_start read
 * while we run on that CPU (it is within a tick of now). Each CPU's clock
 * is its own (they drift apart by the time a hypervisor stole from each),
 * so a thread's exec_start is only compared with its own CPU's. Cached
 * for 20 ms per CPU: a stale "now" makes off-CPU times shorter, never
 * longer.
 */
#define CLOCK_CACHE_NS 20000000LL
#define CLOCK_CPUS 1024

static int64_t cpu_task_clock(int cpu)
{
	static struct {
		int64_t value, at;
	} cache[CLOCK_CPUS];
	struct timespec ts;
	cpu_set_t saved, one;
	int64_t now_mono, v;

	if (cpu < 0 || cpu >= CLOCK_CPUS || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return PROC_WAIT_UNKNOWN;
	now_mono = (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
	if (cache[cpu].at && now_mono - cache[cpu].at < CLOCK_CACHE_NS)
		return cache[cpu].value;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_getaffinity(0, sizeof(saved), &saved) != 0 ||
	    sched_setaffinity(0, sizeof(one), &one) != 0)
		return PROC_WAIT_UNKNOWN;
	/* the kernel moved us before the call returned: we run on cpu now */
	v = sched_getcpu() == cpu ? exec_start_ns("/proc/thread-self/sched") : PROC_WAIT_UNKNOWN;
	sched_setaffinity(0, sizeof(saved), &saved);
	if (v != PROC_WAIT_UNKNOWN) {
		cache[cpu].value = v;
		cache[cpu].at = now_mono;
	}
	return v;
}

/* How long ago the thread last left its CPU, by that CPU's task clock,
 * which leaves out time stolen by a hypervisor: never more than the real
 * time, a little less on a busy VM. */
static void read_off_cpu(const char *dir, struct proc_wait *w)
{
	char path[96];
	int64_t then, now;

	snprintf(path, sizeof(path), "%s/sched", dir);
	then = exec_start_ns(path);
	now = cpu_task_clock(w->cpu);
	if (then != PROC_WAIT_UNKNOWN && now != PROC_WAIT_UNKNOWN)
		w->off_cpu_ns = now > then ? now - then : 0;
}

static void read_schedstat(const char *dir, struct proc_wait *w)
{
	char path[96], buf[128];
	unsigned long long run;

	snprintf(path, sizeof(path), "%s/schedstat", dir);
	if (read_small_file(path, buf, sizeof(buf)) == 0 && sscanf(buf, "%llu", &run) == 1)
		w->cpu_ns = (int64_t)run;
}

static int64_t timespec_ns(pid_t pid, uint64_t addr)
{
	int64_t ts[2];

	if (!addr || remote_read(pid, addr, ts, sizeof(ts)) < 0 || ts[0] < 0 || ts[1] < 0 ||
	    ts[1] >= NS_PER_SEC || ts[0] > INT64_MAX / NS_PER_SEC - 1)
		return PROC_WAIT_UNKNOWN;
	return ts[0] * NS_PER_SEC + ts[1];
}

static int64_t timeval_ns(pid_t pid, uint64_t addr)
{
	int64_t tv[2];

	if (!addr || remote_read(pid, addr, tv, sizeof(tv)) < 0 || tv[0] < 0 || tv[1] < 0 ||
	    tv[1] >= 1000000 || tv[0] > INT64_MAX / NS_PER_SEC - 1)
		return PROC_WAIT_UNKNOWN;
	return tv[0] * NS_PER_SEC + tv[1] * 1000;
}

/* A relative timeout: what is left, judged by how long the thread has
 * been off CPU (it may have woken and gone back to sleep since the call). */
static void relative_timeout(struct proc_wait *w, int64_t timeout)
{
	w->timeout_ns = timeout;
	if (timeout >= 0 && w->off_cpu_ns != PROC_WAIT_UNKNOWN) {
		w->left_ns = timeout > w->off_cpu_ns ? timeout - w->off_cpu_ns : 0;
		w->left_estimated = true;
	}
}

/* An absolute deadline on CLOCK: exactly what is left. */
static void absolute_timeout(struct proc_wait *w, clockid_t clock, int64_t deadline)
{
	struct timespec now;
	int64_t now_ns;

	if (deadline == PROC_WAIT_UNKNOWN || w->from_image || clock_gettime(clock, &now) != 0)
		return;
	now_ns = (int64_t)now.tv_sec * NS_PER_SEC + now.tv_nsec;
	w->left_ns = deadline > now_ns ? deadline - now_ns : 0;
}

static void ms_timeout(struct proc_wait *w, uint64_t arg)
{
	int32_t ms = (int32_t)arg;

	if (ms < 0)
		w->timeout_ns = -1;
	else
		relative_timeout(w, (int64_t)ms * 1000000);
}

static void describe_fd(pid_t pid, struct proc_wait *w, uint64_t arg)
{
	w->fd = (int)arg;
	if ((int64_t)arg < 0 || arg > INT32_MAX ||
	    proc_fd_describe(pid, w->fd, w->fd_desc, sizeof(w->fd_desc)) < 0)
		w->fd_desc[0] = '\0';
}

static void read_path_arg(pid_t pid, struct proc_wait *w, uint64_t addr)
{
	size_t n = 0;

	/* byte by byte up to the page end is slow: read in small chunks */
	while (n + 1 < sizeof(w->path)) {
		size_t chunk = 32 < sizeof(w->path) - 1 - n ? 32 : sizeof(w->path) - 1 - n;

		if (remote_read(pid, addr + n, w->path + n, chunk) < 0)
			break;
		if (memchr(w->path + n, '\0', chunk))
			return;
		n += chunk;
	}
	w->path[n] = '\0';
}

#define FUTEX_CMD(op) ((op) & ~(128 | 256)) /* without PRIVATE and CLOCK_REALTIME */

static void decode_futex(pid_t pid, struct proc_wait *w)
{
	const uint64_t *a = w->regs.args;
	int op = (int)a[1], cmd = FUTEX_CMD(op);

	w->futex = a[0];
	/* WAIT (relative timeout), WAIT_BITSET (absolute), LOCK_PI, LOCK_PI2,
	 * WAIT_REQUEUE_PI (absolute) */
	w->futex_wait = cmd == 0 || cmd == 9 || cmd == 6 || cmd == 13 || cmd == 11;
	if (!w->futex_wait)
		return;
	if (!a[3]) {
		w->timeout_ns = -1;
	} else if (cmd == 0) {
		relative_timeout(w, timespec_ns(pid, a[3]));
	} else {
		int64_t deadline = timespec_ns(pid, a[3]);

		absolute_timeout(w, (op & 256) || cmd == 6 ? CLOCK_REALTIME : CLOCK_MONOTONIC,
				 deadline);
	}
}

static void decode(pid_t pid, struct proc_wait *w)
{
	const uint64_t *a = w->regs.args;
	long nr = (long)w->regs.syscall_nr;

	w->syscall = proc_syscall_name(nr);
	switch (nr) {
	case 0: case 1: case 17: case 18: case 19: case 20: case 42: case 43: case 44: case 45:
	case 46: case 47: case 48: case 72: case 73: case 74: case 75: case 77: case 288:
	case 295: case 296: case 299: case 307: case 327: case 328: case 426: case 5: case 8:
	case 16: case 217: case 277:
		describe_fd(pid, w, a[0]);
		break;
	case 7: /* poll(fds, nfds, ms) */
		w->nfds = (int)a[1];
		ms_timeout(w, a[2]);
		break;
	case 271: /* ppoll(fds, nfds, tsp, sigmask) */
		w->nfds = (int)a[1];
		if (a[2])
			relative_timeout(w, timespec_ns(pid, a[2]));
		else
			w->timeout_ns = -1;
		break;
	case 23: /* select(nfds, r, w, e, timeval) */
	case 270: /* pselect6(nfds, r, w, e, timespec, sig) */
		w->nfds = (int)a[0];
		if (!a[4])
			w->timeout_ns = -1;
		else
			relative_timeout(w, nr == 23 ? timeval_ns(pid, a[4]) : timespec_ns(pid, a[4]));
		break;
	case 232: case 281: case 441: /* epoll_wait(epfd, events, max, timeout) */
		describe_fd(pid, w, a[0]);
		w->nfds = proc_epoll_count(pid, w->fd);
		if (w->nfds < 0)
			w->nfds = -1;
		if (nr != 441)
			ms_timeout(w, a[3]);
		else if (!a[4])
			w->timeout_ns = -1;
		else
			relative_timeout(w, timespec_ns(pid, a[4]));
		break;
	case 35: /* nanosleep(req, rem) */
		relative_timeout(w, timespec_ns(pid, a[0]));
		break;
	case 230: /* clock_nanosleep(clock, flags, req, rem) */
		if (a[1] & 1) /* TIMER_ABSTIME: the deadline, not the length */
			absolute_timeout(w, (clockid_t)a[0], timespec_ns(pid, a[2]));
		else
			relative_timeout(w, timespec_ns(pid, a[2]));
		break;
	case 202:
		decode_futex(pid, w);
		break;
	case 61: case 247: /* wait4(pid, ...), waitid(idtype, id, ...) */
		w->child = nr == 61 ? (pid_t)a[0] : a[0] == 1 ? (pid_t)a[1] : 0;
		if (w->child < 0)
			w->child = 0;
		break;
	case 2: case 4: case 6: case 21: case 76: case 82: case 83: case 84: case 87: case 89:
		read_path_arg(pid, w, a[0]);
		break;
	case 257: case 262: case 263: case 332: /* openat(dirfd, path, ...) */
		read_path_arg(pid, w, a[1]);
		break;
	}
}

static void read_wchan(const char *dir, struct proc_wait *w)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/wchan", dir);
	if (read_small_file(path, w->wchan, sizeof(w->wchan)) < 0 || strcmp(w->wchan, "0") == 0)
		w->wchan[0] = '\0';
}

static void init(struct proc_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->state = '?';
	w->regs.syscall_nr = -1;
	w->user_ns = w->system_ns = w->cpu_ns = w->off_cpu_ns = PROC_WAIT_UNKNOWN;
	w->timeout_ns = w->left_ns = PROC_WAIT_UNKNOWN;
	w->fd = w->nfds = w->cpu = -1;
}

int proc_wait_read(pid_t pid, pid_t tid, struct proc_wait *w)
{
	const struct remote_image *img = remote_image_of(pid);
	char dir[64];
	int rc;

	init(w);
	if (img) {
		w->from_image = true;
		if (!img->regs || img->regs(img->ctx, tid, &w->regs) < 0)
			return -ESRCH;
		if (img->times)
			img->times(img->ctx, tid, &w->user_ns, &w->system_ns);
		w->in_syscall = w->regs.syscall_nr >= 0;
		if (w->in_syscall)
			decode(pid, w);
		return 0;
	}
	snprintf(dir, sizeof(dir), "/proc/%d/task/%d", (int)pid, (int)tid);
	rc = read_stat(dir, w);
	if (rc < 0)
		return rc;
	read_schedstat(dir, w);
	read_syscall(dir, w);
	if (w->state != 'R' && !w->running)
		read_off_cpu(dir, w);
	if (w->in_syscall)
		decode(pid, w);
	read_wchan(dir, w);
	return 0;
}
