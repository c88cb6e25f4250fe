/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/module.h"

#include <bcc/libbpf.h>
#include <bcc/perf_reader.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf/bcc_compile.h"
#include "bpf/bpf_cache.h"
#include "bpf/detach.h"
#include "bpf/loop_guard.h"
#include "bpf/prog_load.h"
#include "sys/clock.h"
#include "sys/proc_maps.h"
#include "sys/cpu_list.h"

static bool path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static bool kernel_headers_present(const char *release)
{
	const char *env = getenv("BCC_KERNEL_SOURCE");
	const char *dirs[] = { "build", "source" };
	char path[512];

	if (env && *env) {
		snprintf(path, sizeof(path), "%s/include/linux/kconfig.h", env);
		if (path_exists(path))
			return true;
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/lib/modules/%s/%s/include/linux/kconfig.h", release,
			 dirs[i]);
		if (path_exists(path))
			return true;
	}
	return path_exists("/sys/kernel/kheaders.tar.xz");
}

static int ensure_tracefs(char *err, size_t len)
{
	if (path_exists("/sys/kernel/tracing/events") ||
	    path_exists("/sys/kernel/debug/tracing/events"))
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 &&
	    path_exists("/sys/kernel/tracing/events"))
		return 0;
	snprintf(err, len,
		 "tracefs is not mounted and could not be mounted (%s).\n"
		 "  Fix: mount -t tracefs tracefs /sys/kernel/tracing",
		 strerror(errno));
	return -1;
}

int bpfmod_environment_check(char *err, size_t len)
{
	struct utsname u;

	if (geteuid() != 0) {
		snprintf(err, len,
			 "must be run as root (BPF programs need CAP_BPF, CAP_PERFMON and "
			 "CAP_SYS_ADMIN).\n  Fix: sudo %s",
			 "<the same command>");
		return -1;
	}
	/* BPF names processes by their ids in the host's PID namespace, which
	 * a namespace below it cannot translate: every target would look
	 * absent (0 samples, no word why) */
	if (!proc_self_in_host_pid_ns()) {
		snprintf(err, len,
			 "runs in a PID namespace of its own (a container without the host's "
			 "process ids): BPF sees the host's process ids, which cannot be "
			 "matched to this namespace's.\n"
			 "  Fix: run it in the host's PID namespace (docker run --pid=host, "
			 "kubectl: hostPID: true) or from the host.");
		return -1;
	}
	uname(&u);
	if (!kernel_headers_present(u.release)) {
		snprintf(err, len,
			 "no kernel headers for Linux %s: libbcc needs them to compile BPF "
			 "programs.\n"
			 "  Fix: apt-get install linux-headers-%s (Debian and Ubuntu), or set "
			 "BCC_KERNEL_SOURCE to a kernel header tree.\n"
			 "  No package for this kernel: from a pybpf-tools source tree, "
			 "'./setup.sh headers' maps the\n"
			 "  distribution's newest linux-headers package (README.Debian says "
			 "more).",
			 u.release, u.release);
		return -1;
	}
	return ensure_tracefs(err, len);
}

/*
 * The image from the cache, or compiled (and then cached). Either way the
 * maps are created here and the programs loaded from the image, so both
 * paths run the same code.
 */
int bpfmod_compile(struct bpfmod *m, const char *text, const char *const *cflags,
		       int ncflags)
{
	struct bpf_cache_key key;
	uint64_t t0 = monotonic_ns();
	bool have_key;
	int got = 0;

	memset(m, 0, sizeof(*m));
	have_key = bpf_cache_key(&key, text, cflags, ncflags) == 0;
	if (have_key)
		got = bpf_cache_get(&key, &m->img, m->cache_note, sizeof(m->cache_note));
	m->from_cache = got == 1;
	if (!m->from_cache) {
		if (bcc_compile_image(text, cflags, ncflags, &m->img, m->err, sizeof(m->err)) < 0) {
			if (have_key)
				bpf_cache_key_free(&key);
			return -1;
		}
		if (have_key && got <= 0)
			bpf_cache_put(&key, &m->img, m->cache_note, sizeof(m->cache_note));
	}
	if (have_key)
		bpf_cache_key_free(&key);
	m->compile_ns = monotonic_ns() - t0;
	return bpf_image_create_maps(&m->img, m->err, sizeof(m->err));
}

void bpfmod_detach(struct bpfmod *m)
{
	detach_all_at_once(m->perf_fds, m->nperf, m->attach_fds, m->nattach);
	m->nperf = 0;
	m->nattach = 0;
}

static uint64_t missed_runs(struct bpfmod *m, bool expected)
{
	uint64_t missed = 0;

	for (int i = 0; i < m->nprogs; i++) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (m->progs[i].misses_expected == expected && m->progs[i].placeholder >= 0 &&
		    bpf_obj_get_info(m->progs[i].placeholder, &info, &len) == 0)
			missed += info.recursion_misses;
	}
	return missed;
}

uint64_t bpfmod_missed_runs(struct bpfmod *m)
{
	return missed_runs(m, false);
}

uint64_t bpfmod_expected_misses(struct bpfmod *m)
{
	return missed_runs(m, true);
}

void bpfmod_expect_misses(struct bpfmod *m, int progfd)
{
	for (int i = 0; i < m->nprogs; i++)
		if (m->progs[i].placeholder == progfd)
			m->progs[i].misses_expected = true;
}

void bpfmod_close(struct bpfmod *m)
{
	bpfmod_detach(m);
	for (int i = 0; i < m->nreaders; i++)
		perf_reader_free(m->readers[i]);
	free(m->readers);
	free(m->perf_fds);
	bpfmod_wait_loads(m);
	for (int i = 0; i < m->nprogs; i++)
		if (m->progs[i].placeholder >= 0)
			close(m->progs[i].placeholder);
	bpf_image_free(&m->img);
	memset(m, 0, sizeof(*m));
}

/* Room for n more entries in a growing array of elem-sized items. */
static int reserve(void **v, int *cap, int used, int n, size_t elem)
{
	void *grown;

	if (used + n <= *cap)
		return 0;
	grown = realloc(*v, (size_t)(used + n) * elem);
	if (!grown)
		return -1;
	*v = grown;
	*cap = used + n;
	return 0;
}

int bpfmod_load(struct bpfmod *m, const char *fn, int prog_type)
{
	uint32_t n;
	struct bpf_insn *insns;

	if (m->nprogs >= BPFMOD_MAX_PROGS) {
		snprintf(m->err, sizeof(m->err), "too many BPF programs");
		return -1;
	}
	insns = bpf_image_relocate(&m->img, fn, &n, m->err, sizeof(m->err));
	if (!insns)
		return -1;
	if (loop_guard_patch(insns, n, m->err, sizeof(m->err)) < 0) {
		free(insns);
		return -1;
	}
	return prog_load_start(&m->progs[m->nprogs++], fn, prog_type, insns, n, m->img.license,
			       m->img.kern_version, m->err, sizeof(m->err));
}

/* The load behind progfd done: 0 if it is the program, else -1 (m->err). */
static int finish_load(struct bpfmod *m, int progfd)
{
	for (int i = 0; i < m->nprogs; i++) {
		struct prog_load *j = &m->progs[i];
		bool first = !j->finished;
		int rc;

		if (j->placeholder != progfd || progfd < 0)
			continue;
		rc = prog_load_finish(j, m->err, sizeof(m->err));
		if (first)
			m->load_ns += j->ns;
		return rc;
	}
	return progfd < 0 ? -1 : 0; /* not ours: the caller's own */
}

int bpfmod_wait_load(struct bpfmod *m, int progfd)
{
	return finish_load(m, progfd);
}

int bpfmod_wait_loads(struct bpfmod *m)
{
	int rc = 0;

	for (int i = 0; i < m->nprogs; i++)
		if (finish_load(m, m->progs[i].placeholder) < 0)
			rc = -1;
	return rc;
}

int bpfmod_attach_sampling(struct bpfmod *m, int progfd, int freq)
{
	int *cpus, n;

	if (finish_load(m, progfd) < 0)
		return -1;
	n = cpu_list_online(&cpus);
	if (reserve((void **)&m->perf_fds, &m->cap_perf, m->nperf, n, sizeof(int)) < 0) {
		free(cpus);
		snprintf(m->err, sizeof(m->err), "out of memory for %d perf events", n);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int fd = bpf_attach_perf_event(progfd, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
					       0, (uint64_t)freq, -1, cpus[i], -1);

		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* CPU went offline */
			snprintf(m->err, sizeof(m->err), "perf_event_open on CPU %d failed: %s",
				 cpus[i], strerror(errno));
			free(cpus);
			return -1;
		}
		m->perf_fds[m->nperf++] = fd;
	}
	free(cpus);
	return 0;
}

int bpfmod_attach_tracepoint(struct bpfmod *m, int progfd, const char *category,
				 const char *event)
{
	int fd;

	if (finish_load(m, progfd) < 0)
		return -1;
	fd = bpf_attach_tracepoint(progfd, category, event);
	if (fd < 0 || m->nattach >= BPFMOD_MAX_ATTACH) {
		snprintf(m->err, sizeof(m->err), "attaching to tracepoint %s:%s failed", category,
			 event);
		return -1;
	}
	m->attach_fds[m->nattach++] = fd;
	return 0;
}

int bpfmod_attach_raw_tracepoint(struct bpfmod *m, int progfd, const char *event)
{
	int fd;

	if (finish_load(m, progfd) < 0)
		return -1;
	fd = bpf_attach_raw_tracepoint(progfd, event);
	if (fd < 0 || m->nattach >= BPFMOD_MAX_ATTACH) {
		snprintf(m->err, sizeof(m->err), "attaching to raw tracepoint %s failed", event);
		return -1;
	}
	m->attach_fds[m->nattach++] = fd;
	return 0;
}

int bpfmod_table_fd(struct bpfmod *m, const char *table)
{
	return bpf_image_table_fd(&m->img, table);
}

uint32_t bpfmod_table_max_entries(struct bpfmod *m, const char *table)
{
	for (uint32_t i = 0; i < m->img.ntables; i++)
		if (strcmp(m->img.tables[i].name, table) == 0)
			return m->img.tables[i].max_entries;
	return 0;
}

int bpfmod_open_events(struct bpfmod *m, const char *table, bpfmod_event_fn fn,
			   bpfmod_lost_fn lost, void *ctx, int pages)
{
	int map_fd = bpf_image_table_fd(&m->img, table);
	int *cpus, n, rc = -1;

	if (map_fd < 0) {
		snprintf(m->err, sizeof(m->err), "no table %s", table);
		return -1;
	}
	n = cpu_list_online(&cpus);
	if (reserve((void **)&m->readers, &m->cap_readers, m->nreaders, n, sizeof(void *)) < 0) {
		snprintf(m->err, sizeof(m->err), "out of memory for %d perf buffers", n);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		void *reader;
		int key = cpus[i], fd;

		reader = bpf_open_perf_buffer(fn, lost, ctx, -1, cpus[i], pages);
		if (!reader) {
			snprintf(m->err, sizeof(m->err), "cannot open perf buffer on CPU %d", key);
			goto out;
		}
		m->readers[m->nreaders++] = reader;
		fd = perf_reader_fd(reader);
		if (bpf_update_elem(map_fd, &key, &fd, 0) < 0) {
			snprintf(m->err, sizeof(m->err), "cannot register perf buffer: %s",
				 strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	free(cpus);
	return rc;
}

int bpfmod_poll_events(struct bpfmod *m, int timeout_ms, struct pollfd *extra,
			   int nextra)
{
	int n = m->nreaders + nextra, ready = 0;
	struct pollfd *fds = calloc((size_t)(n ? n : 1), sizeof(*fds));

	if (!fds) {
		usleep((useconds_t)timeout_ms * 1000);
		return 0;
	}
	for (int i = 0; i < m->nreaders; i++) {
		fds[i].fd = perf_reader_fd(m->readers[i]);
		fds[i].events = POLLIN;
	}
	for (int i = 0; i < nextra; i++) {
		fds[m->nreaders + i] = extra[i];
		fds[m->nreaders + i].revents = 0;
	}
	if (poll(fds, (nfds_t)n, timeout_ms) > 0) {
		for (int i = 0; i < m->nreaders; i++)
			if (fds[i].revents & POLLIN)
				perf_reader_event_read(m->readers[i]);
		for (int i = 0; i < nextra; i++) {
			extra[i].revents = fds[m->nreaders + i].revents;
			ready += extra[i].revents != 0;
		}
	}
	free(fds);
	return ready;
}
