// SPDX-License-Identifier: Apache-2.0
/*
 * sys/native_symbols.h on real processes (root: they run in chroots):
 *  A  a program in a chroot with sid's libc, not the host's: libc's getpid
 *     and the program's own static function are named exactly, also with
 *     /proc/PID/map_files closed to us (no CAP_SYS_ADMIN); the host's file
 *     at that path would have named something else.
 *  B  a stripped static-pie program in a chroot: named only through its
 *     debug file, found by build-id, by .gnu_debuglink in DIR, DIR/.debug
 *     and /usr/lib/debug/DIR; a debug file of another build is refused.
 *  C  this process's libc through libc6-dbg: a static libc function.
 *  D  the stripped program through a local debuginfod server, asked once
 *     per build-id.
 *  E  garbage and truncated files mapped executable: no names, no crash.
 * Parts whose inputs are missing print why and are skipped; all skipped
 * exits 77.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit_check.h"

#include "sys/elf_image.h"
#include "sys/elf_symbols.h"
#include "sys/native_symbols.h"
#include "sys/proc_maps.h"

static char tmp[64];
static int parts_run;

static const char target_src[] =
	"#include <unistd.h>\n"
	"static volatile int spins;\n"
	"__attribute__((noinline, used)) static void natsym_static_spin(int n)\n"
	"{\n"
	"	for (int i = 0; i < n; i++)\n"
	"		spins += VARIANT;\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	natsym_static_spin(1);\n"
	"	pause();\n"
	"	return 0;\n"
	"}\n";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* The lowest mapping of a file whose path ends with tail (0 if none). */
static int find_mapping(pid_t pid, const char *tail, struct proc_map *out)
{
	struct proc_maps maps;
	int found = -1;

	if (proc_maps_read(pid, &maps) < 0)
		return -1;
	for (size_t i = 0; i < maps.n && found < 0; i++) {
		size_t n = strlen(maps.v[i].path), t = strlen(tail);

		if (n >= t && strcmp(maps.v[i].path + n - t, tail) == 0) {
			*out = maps.v[i];
			out->path = NULL;
			found = 0;
		}
	}
	proc_maps_free(&maps);
	return found;
}

/* Runs exe inside root (chroot) and waits until it sleeps in pause(). */
static pid_t start_in(const char *root, const char *exe)
{
	char tail[256];
	struct proc_map m;
	struct proc_sched sched;
	pid_t pid;

	/* the kernel prints a chrooted process's paths with the chroot in
	 * front (we are outside it): this is the exec'd program, not the
	 * fork of this test before the exec */
	snprintf(tail, sizeof(tail), "%s%s", root, exe);
	fflush(stdout);
	pid = fork();

	if (pid == 0) {
		if (chroot(root) == 0 && chdir("/") == 0)
			execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; pid > 0 && i < 500; i++) {
		if (find_mapping(pid, tail, &m) == 0 && proc_thread_sched(pid, 0, &sched) == 0 &&
		    sched.state == 'S')
			return pid;
		sleep_ms(10);
	}
	fprintf(stderr, "%s in %s did not start\n", exe, root);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Address of symbol name of file (as found by this test, through the
 * ELF and the file's lowest mapping) in process pid. */
static int address_of(pid_t pid, const char *file, const char *tail, const char *name,
		      uint64_t *addr)
{
	struct elf_image img;
	struct proc_map m;
	uint64_t value, size;
	int rc = -1;

	if (find_mapping(pid, tail, &m) < 0 || elf_image_open(&img, file) < 0)
		return -1;
	if (elf_image_symbol(&img, name, &value, &size) == 0) {
		*addr = elf_image_load_bias(&img, m.start, m.offset) + value;
		rc = 0;
	}
	elf_image_close(&img);
	return rc;
}

static int build_id_of(const char *file, char *hex, size_t len)
{
	struct elf_image img;
	int rc;

	if (elf_image_open(&img, file) < 0)
		return -1;
	rc = elf_image_build_id(&img, hex, len);
	elf_image_close(&img);
	return rc;
}

/* What the name of addr (in pid) is, printed and returned as "name+0xoff". */
static const char *name_of(struct native_symbols *ns, pid_t pid, uint64_t addr, char *buf,
			   size_t len)
{
	uint64_t off = 0;
	const char *name = native_symbols_name(ns, pid, NATIVE_GEN_LATEST, addr, &off);

	if (name)
		snprintf(buf, len, "%s+0x%llx", name, (unsigned long long)off);
	else
		snprintf(buf, len, "(none)");
	return buf;
}

/* Drops CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE: /proc/PID/map_files
 * closes, the files must come through /proc/PID/root. */
static int drop_map_files_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -1;
	data[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	data[40 / 32].effective &= ~(1u << (40 % 32)); /* CAP_CHECKPOINT_RESTORE */
	return (int)syscall(SYS_capset, &hdr, data);
}

static void part_a(void)
{
	const char *cache = getenv("PYBPF_CACHE") ? getenv("PYBPF_CACHE") : "/var/cache/pybpf-tools";
	char sid[200], root[128], libc[256], exe[256], id_sid[129], id_host[129], buf[256];
	uint64_t getpid_addr, spin_addr, off;
	struct native_symbols_stats st;
	struct native_symbols *ns;
	pid_t pid;

	snprintf(sid, sizeof(sid), "%s/chroots/sid/usr/lib/x86_64-linux-gnu", cache);
	snprintf(libc, sizeof(libc), "%s/libc.so.6", sid);
	if (access(libc, R_OK) != 0) {
		printf("A skipped: no sid chroot (%s; sudo ./setup.sh chroots)\n", libc);
		return;
	}
	snprintf(root, sizeof(root), "%s/a", tmp);
	if (sh("mkdir -p %s/bin %s/lib64 %s/lib/x86_64-linux-gnu && "
	       "cp %s/libc.so.6 %s/lib/x86_64-linux-gnu/ && "
	       "cp %s/ld-linux-x86-64.so.2 %s/lib64/ && "
	       "gcc -O1 -DVARIANT=1 -o %s/bin/target %s/target.c",
	       root, root, root, sid, root, sid, root, root, tmp) != 0)
		return;
	parts_run++;
	pid = start_in(root, "/bin/target");
	if (pid < 0) {
		CHECK(!"A: target started");
		return;
	}
	snprintf(libc, sizeof(libc), "%s/lib/x86_64-linux-gnu/libc.so.6", root);
	snprintf(exe, sizeof(exe), "%s/bin/target", root);
	CHECK(address_of(pid, libc, "/libc.so.6", "getpid", &getpid_addr) == 0);
	CHECK(address_of(pid, exe, "/bin/target", "natsym_static_spin", &spin_addr) == 0);

	ns = native_symbols_new();
	printf("A: getpid in the chroot's libc: %s\n", name_of(ns, pid, getpid_addr, buf, sizeof(buf)));
	CHECK_STR(buf, "getpid+0x0");
	CHECK_STR(name_of(ns, pid, getpid_addr + 2, buf, sizeof(buf)), "getpid+0x2");
	printf("A: static function of the program: %s\n",
	       name_of(ns, pid, spin_addr + 1, buf, sizeof(buf)));
	CHECK_STR(buf, "natsym_static_spin+0x1");
	CHECK(native_symbols_name(ns, pid, NATIVE_GEN_LATEST, 0x1000, &off) == NULL); /* no mapping */
	native_symbols_forget(ns, pid);
	CHECK_STR(name_of(ns, pid, getpid_addr, buf, sizeof(buf)), "getpid+0x0");
	native_symbols_stats(ns, &st);
	printf("A: files %zu, with .symtab %zu, failed %zu\n", st.files, st.with_symtab, st.failed);
	CHECK(st.files == 2 && st.with_symtab == 1 && st.failed == 0);
	native_symbols_free(ns);

	/* The host's file at the path the process names: another libc, in
	 * which the address is not getpid. */
	if (build_id_of(libc, id_sid, sizeof(id_sid)) == 0 &&
	    build_id_of("/lib/x86_64-linux-gnu/libc.so.6", id_host, sizeof(id_host)) == 0) {
		struct elf_image host;
		struct elf_symtab t;
		struct proc_map m;

		printf("A: libc build-id in the chroot %s, on the host %s\n", id_sid, id_host);
		CHECK(strcmp(id_sid, id_host) != 0);
		if (find_mapping(pid, "/libc.so.6", &m) == 0 &&
		    elf_image_open(&host, "/lib/x86_64-linux-gnu/libc.so.6") == 0) {
			uint64_t at = getpid_addr - elf_image_load_bias(&host, m.start, m.offset);
			const struct elf_sym *s;

			if (elf_symtab_load(&t, &host) == 0) {
				s = elf_symtab_find(&t, at);
				printf("A: by the host's libc that address would be %s+0x%llx\n",
				       s ? s->name : "(none)",
				       s ? (unsigned long long)(at - s->start) : 0ull);
				CHECK(!s || strcmp(s->name, "getpid") != 0 || at != s->start);
				elf_symtab_free(&t);
			}
			elf_image_close(&host);
		}
	}

	/* Without CAP_SYS_ADMIN: the files come by /proc/PID/root. */
	fflush(stdout);
	pid_t child = fork();

	if (child == 0) {
		char map_files[96];
		struct proc_map m;
		int bad = 0;

		if (drop_map_files_caps() < 0 || find_mapping(pid, "/libc.so.6", &m) < 0)
			_exit(2);
		snprintf(map_files, sizeof(map_files), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)m.start, (unsigned long long)m.end);
		if (open(map_files, O_RDONLY) >= 0 || errno != EPERM)
			_exit(3);
		ns = native_symbols_new();
		printf("A: without map_files (EPERM): %s", name_of(ns, pid, getpid_addr, buf, sizeof(buf)));
		bad |= strcmp(buf, "getpid+0x0") != 0;
		printf(", %s\n", name_of(ns, pid, spin_addr, buf, sizeof(buf)));
		bad |= strcmp(buf, "natsym_static_spin+0x0") != 0;
		fflush(stdout);
		native_symbols_free(ns);
		_exit(bad);
	}
	int status = -1;

	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	stop(pid);
}

/* One case of part B: the debug files in place, the name expected. */
static void b_case(pid_t pid, uint64_t addr, const char *what, const char *want, size_t debug_files)
{
	struct native_symbols *ns = native_symbols_new();
	struct native_symbols_stats st;
	char buf[256];

	printf("B: %s: %s\n", what, name_of(ns, pid, addr, buf, sizeof(buf)));
	CHECK_STR(buf, want);
	native_symbols_stats(ns, &st);
	CHECK(st.files == 1 && st.with_symtab == 0 && st.with_debug_file == debug_files &&
	      st.from_debuginfod == 0);
	native_symbols_free(ns);
}

static pid_t part_b_pid;
static uint64_t part_b_addr;
static char part_b_id[129];

static void part_b(void)
{
	char root[128], full[128], dbg[160], link[256], other[160];
	const char *want = "natsym_static_spin+0x3";
	pid_t pid;

	snprintf(root, sizeof(root), "%s/b", tmp);
	snprintf(full, sizeof(full), "%s/full", tmp);
	snprintf(dbg, sizeof(dbg), "%s/full.debug", tmp);
	snprintf(other, sizeof(other), "%s/other.debug", tmp);
	if (sh("cd %s && gcc -O1 -DVARIANT=1 -static-pie -Wl,--build-id -o full target.c && "
	       "gcc -O1 -DVARIANT=2 -static-pie -Wl,--build-id -o other target.c && "
	       "objcopy --only-keep-debug full full.debug && "
	       "objcopy --only-keep-debug other other.debug && "
	       "objcopy --strip-all --add-gnu-debuglink=full.debug full stripped && "
	       "mkdir -p b/bin && cp stripped b/bin/target", tmp) != 0 ||
	    build_id_of(full, part_b_id, sizeof(part_b_id)) < 0) {
		printf("B skipped: cannot build a static-pie program with a build-id "
		       "(gcc, objcopy, libc6-dev)\n");
		return;
	}
	parts_run++;
	pid = start_in(root, "/bin/target");
	if (pid < 0) {
		CHECK(!"B: target started");
		return;
	}
	/* the linked address from the unstripped build, the bias from the
	 * stripped one's mapping (the same layout) */
	{
		struct elf_image img;
		struct proc_map m;
		uint64_t value, size;

		if (find_mapping(pid, "/bin/target", &m) < 0 || elf_image_open(&img, full) < 0) {
			CHECK(!"B: the program's mapping");
			stop(pid);
			return;
		}
		CHECK(elf_image_symbol(&img, "natsym_static_spin", &value, &size) == 0);
		part_b_addr = elf_image_load_bias(&img, m.start, m.offset) + value + 3;
		elf_image_close(&img);
	}
	printf("B: build-id %s\n", part_b_id);
	b_case(pid, part_b_addr, "no debug file", "(none)", 0);

	snprintf(link, sizeof(link), "%s/usr/lib/debug/.build-id/%.2s", root, part_b_id);
	sh("mkdir -p %s && cp %s %s/%s.debug", link, dbg, link, part_b_id + 2);
	b_case(pid, part_b_addr, "by build-id", want, 1);
	sh("rm -r %s/usr", root);

	sh("cp %s %s/bin/full.debug", dbg, root);
	b_case(pid, part_b_addr, "by debuglink in DIR", want, 1);
	sh("rm %s/bin/full.debug", root);

	sh("mkdir -p %s/bin/.debug && cp %s %s/bin/.debug/full.debug", root, dbg, root);
	b_case(pid, part_b_addr, "by debuglink in DIR/.debug", want, 1);
	sh("rm -r %s/bin/.debug", root);

	sh("mkdir -p %s/usr/lib/debug/bin && cp %s %s/usr/lib/debug/bin/full.debug", root, dbg, root);
	b_case(pid, part_b_addr, "by debuglink in /usr/lib/debug/DIR", want, 1);
	sh("rm -r %s/usr", root);

	sh("cp %s %s/bin/full.debug", other, root);
	b_case(pid, part_b_addr, "debuglink to another build's debug file", "(none)", 0);
	sh("rm %s/bin/full.debug", root);
	part_b_pid = pid; /* part D asks debuginfod about it */
}

static void part_c(void)
{
	char id[129], dbg[256], buf[256];
	struct native_symbols_stats st;
	struct native_symbols *ns;
	struct elf_image img;
	struct proc_map m;
	uint64_t value, size, at;

	if (build_id_of("/lib/x86_64-linux-gnu/libc.so.6", id, sizeof(id)) < 0) {
		printf("C skipped: no /lib/x86_64-linux-gnu/libc.so.6 build-id\n");
		return;
	}
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	if (access(dbg, R_OK) != 0) {
		printf("C skipped: no %s (libc6-dbg)\n", dbg);
		return;
	}
	if (find_mapping(getpid(), "/libc.so.6", &m) < 0 || elf_image_open(&img, dbg) < 0) {
		printf("C skipped: libc not mapped here\n");
		return;
	}
	parts_run++;
	/* local (static) in glibc 2.34+: in the debug file's .symtab only */
	CHECK(elf_image_symbol(&img, "__libc_start_call_main", &value, &size) == 0);
	at = elf_image_load_bias(&img, m.start, m.offset) + value + 5;
	elf_image_close(&img);
	ns = native_symbols_new();
	printf("C: libc6-dbg: %s\n", name_of(ns, getpid(), at, buf, sizeof(buf)));
	CHECK_STR(buf, "__libc_start_call_main+0x5");
	/* getpid, not its alias __getpid (both in the debug file's .symtab) */
	if (address_of(getpid(), "/lib/x86_64-linux-gnu/libc.so.6", "/libc.so.6", "getpid", &at) == 0)
		CHECK_STR(name_of(ns, getpid(), at, buf, sizeof(buf)), "getpid+0x0");
	else
		CHECK(!"C: getpid in libc");
	native_symbols_stats(ns, &st);
	CHECK(st.with_debug_file >= 1);
	native_symbols_free(ns);
}

/* Another file (inode) of the same build, with the server gone and the
 * client's cache moved: named all the same, from the answer of before
 * (each build-id is asked once per run). */
static void d_asked_once(struct native_symbols *ns, pid_t srv)
{
	char root[128], cache[128], buf[256];
	struct native_symbols_stats st;
	struct proc_map m1, m2;
	pid_t pid;

	kill(srv, SIGTERM);
	waitpid(srv, NULL, 0);
	snprintf(cache, sizeof(cache), "%s/dcache.empty", tmp);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	snprintf(root, sizeof(root), "%s/b2", tmp);
	if (sh("mkdir -p %s/bin && cp %s/stripped %s/bin/target", root, tmp, root) != 0 ||
	    (pid = start_in(root, "/bin/target")) < 0) {
		CHECK(!"D: second target started");
		return;
	}
	/* the same layout, so the same offset from the mapping's start */
	if (find_mapping(part_b_pid, "/b/bin/target", &m1) == 0 &&
	    find_mapping(pid, "/b2/bin/target", &m2) == 0) {
		printf("D: a copy, server stopped: %s\n",
		       name_of(ns, pid, part_b_addr - m1.start + m2.start, buf, sizeof(buf)));
		CHECK_STR(buf, "natsym_static_spin+0x3");
		native_symbols_stats(ns, &st);
		CHECK(st.files == 2 && st.from_debuginfod == 2);
	} else {
		CHECK(!"D: the copies' mappings");
	}
	stop(pid);
}

static void part_d(void)
{
	static const char *const servers[] = { "/usr/bin/debuginfod", "/usr/sbin/debuginfod" };
	const char *server = NULL;
	char url[64], cache[128], buf[256];
	int port = 20000 + getpid() % 20000;
	bool named = false;
	pid_t srv;

	for (size_t i = 0; i < 2; i++)
		if (access(servers[i], X_OK) == 0)
			server = servers[i];
	if (!server || !part_b_pid) {
		printf("D skipped: %s\n", server ? "part B did not run" :
						   "no debuginfod server (apt install debuginfod)");
		return;
	}
	parts_run++;
	sh("mkdir -p %s/d && cp %s/full.debug %s/d/", tmp, tmp, tmp);
	fflush(stdout);
	srv = fork();
	if (srv == 0) {
		char dir[96], db[96], p[16];

		snprintf(dir, sizeof(dir), "%s/d", tmp);
		snprintf(db, sizeof(db), "%s/d.sqlite", tmp);
		snprintf(p, sizeof(p), "%d", port);
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execl(server, server, "-F", dir, "-p", p, "-d", db, (char *)NULL);
		_exit(127);
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", url, 1);
	/* the server indexes its directory a moment after it starts: ask
	 * again until it has (each try with an empty client cache, which
	 * remembers misses) */
	for (int i = 0; i < 60 && !named; i++) {
		struct native_symbols *ns = native_symbols_new();
		struct native_symbols_stats st;

		snprintf(cache, sizeof(cache), "%s/dcache.%d", tmp, i);
		setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
		name_of(ns, part_b_pid, part_b_addr, buf, sizeof(buf));
		native_symbols_stats(ns, &st);
		if (strcmp(buf, "(none)") != 0) {
			named = true;
			printf("D: by debuginfod at %s: %s (after %d tries)\n", url, buf, i + 1);
			CHECK_STR(buf, "natsym_static_spin+0x3");
			CHECK(st.from_debuginfod == 1 && st.with_debug_file == 0);
			d_asked_once(ns, srv);
		}
		native_symbols_free(ns);
		if (!named)
			sleep_ms(250);
	}
	CHECK(named);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	if (!named)
		stop(srv);
}

/* Files no ELF reader should trust, mapped executable by a process: no
 * names, no crash, remembered as failed (garbage) or nameless (an ELF
 * cut short: its headers read, its sections beyond the end). */
static void part_e(void)
{
	static const char *const files[] = { "garbage", "cut" }, *const tails[] = { "/garbage", "/cut" };
	char path[2][128], buf[256];
	struct native_symbols_stats st;
	struct native_symbols *ns;
	struct proc_map m;
	pid_t pid;

	snprintf(path[0], sizeof(path[0]), "%s/garbage", tmp);
	snprintf(path[1], sizeof(path[1]), "%s/cut", tmp);
	if (sh("head -c 8192 /dev/urandom > %s && head -c 8192 /lib/x86_64-linux-gnu/libc.so.6 > %s",
	       path[0], path[1]) != 0)
		return;
	parts_run++;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 2; i++) {
			int fd = open(path[i], O_RDONLY);

			if (fd < 0 || mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
				_exit(1);
		}
		pause();
		_exit(0);
	}
	for (int i = 0; i < 100 && find_mapping(pid, "/cut", &m) < 0; i++)
		sleep_ms(10);
	ns = native_symbols_new();
	for (int i = 0; i < 2; i++) {
		if (find_mapping(pid, tails[i], &m) < 0) {
			CHECK(!"E: the file mapped");
			continue;
		}
		printf("E: %s: %s\n", files[i], name_of(ns, pid, m.start + 100, buf, sizeof(buf)));
		CHECK_STR(buf, "(none)");
		name_of(ns, pid, m.start + 200, buf, sizeof(buf)); /* cached the same */
		CHECK_STR(buf, "(none)");
	}
	native_symbols_stats(ns, &st);
	printf("E: files %zu, failed %zu\n", st.files, st.failed);
	CHECK(st.failed == 1);
	native_symbols_free(ns);
	stop(pid);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("skipped: needs root (chroot)\n");
		return 77;
	}
	/* only part D may ask a server */
	unsetenv("DEBUGINFOD_URLS");
	snprintf(tmp, sizeof(tmp), "/tmp/natsym.XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	char src[96];
	FILE *f;

	snprintf(src, sizeof(src), "%s/target.c", tmp);
	f = fopen(src, "w");
	if (!f || fputs(target_src, f) < 0 || fclose(f) != 0) {
		perror(src);
		return 1;
	}
	part_a();
	part_b();
	part_c();
	part_d();
	part_e();
	if (part_b_pid)
		stop(part_b_pid);
	sh("rm -rf %s", tmp);
	printf("%d passed, %d failed, %d of 5 parts run\n", passed, failed, parts_run);
	if (failed)
		return 1;
	return parts_run ? 0 : 77;
}
