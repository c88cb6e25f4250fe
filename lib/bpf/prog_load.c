/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/prog_load.h"

#include <bcc/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/clock.h"

/* PYBPF_VERIFIER_STATS=1: what the verifier went through for each program
 * (it loads the program a second time, with the statistics log level). */
static void print_verifier_stats(const struct prog_load *j, int bytes)
{
	char log[4096], *line;
	int fd;

	log[0] = '\0';
	fd = bcc_prog_load((enum bpf_prog_type)j->type, j->fn, j->insns, bytes, j->license,
			   j->kern_version, 4, log, sizeof(log));
	if (fd >= 0)
		close(fd);
	line = strstr(log, "processed ");
	line = line ? line : log;
	line[strcspn(line, "\n")] = '\0';
	fprintf(stderr, "verifier: %s: %s\n", j->fn, line);
}

static void *load(void *arg)
{
	struct prog_load *j = arg;
	uint64_t t0 = monotonic_ns();
	int bytes = (int)(j->ninsns * sizeof(struct bpf_insn));

	/* libbcc prints the verifier's log on stderr when a load fails */
	j->fd = bcc_prog_load((enum bpf_prog_type)j->type, j->fn, j->insns, bytes, j->license,
			      j->kern_version, 0, NULL, 0);
	j->err = j->fd < 0 ? errno : 0;
	if (j->fd >= 0 && getenv("PYBPF_VERIFIER_STATS"))
		print_verifier_stats(j, bytes);
	if (j->fd < 0 && getenv("PYBPF_VERIFIER_LOG")) {
		/* PYBPF_VERIFIER_LOG=1: show the verifier's reasons (the tail) */
		size_t cap = 16 << 20;
		char *log = malloc(cap);

		if (log) {
			size_t len;

			log[0] = '\0';
			bcc_prog_load((enum bpf_prog_type)j->type, j->fn, j->insns, bytes, j->license,
				      j->kern_version, 1, log, (unsigned)cap);
			len = strlen(log);
			fprintf(stderr, "%s\n", len > 6000 ? log + len - 6000 : log);
			free(log);
		}
	}
	j->ns = monotonic_ns() - t0;
	return NULL;
}

static void *load_thread(void *arg)
{
	sigset_t all;

	/* Ctrl-C is the main thread's to handle: a verifier interrupted by a
	 * signal would give up */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	return load(arg);
}

int prog_load_start(struct prog_load *j, const char *fn, int type, struct bpf_insn *insns,
		    uint32_t ninsns, const char *license, uint32_t kern_version, char *err,
		    size_t errlen)
{
	memset(j, 0, sizeof(*j));
	snprintf(j->fn, sizeof(j->fn), "%s", fn);
	j->type = type;
	j->insns = insns;
	j->ninsns = ninsns;
	j->license = license;
	j->kern_version = kern_version;
	j->fd = -1;
	j->placeholder = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (j->placeholder < 0) {
		snprintf(err, errlen, "cannot open /dev/null: %s", strerror(errno));
		free(insns);
		j->insns = NULL;
		return -1;
	}
	j->started = true;
	if (pthread_create(&j->thread, NULL, load_thread, j) != 0) {
		load(j); /* no thread: load here */
		j->finished = true;
	}
	return j->placeholder;
}

int prog_load_finish(struct prog_load *j, char *err, size_t errlen)
{
	if (!j->started)
		return -1;
	if (!j->finished) {
		pthread_join(j->thread, NULL);
		j->finished = true;
	}
	if (j->insns) {
		free(j->insns);
		j->insns = NULL;
		if (j->fd >= 0) {
			if (dup3(j->fd, j->placeholder, O_CLOEXEC) < 0)
				j->err = errno;
			close(j->fd);
			j->fd = j->err ? -1 : j->placeholder;
		}
	}
	if (j->fd < 0) {
		snprintf(err, errlen,
			 "loading BPF program %s failed: %s (PYBPF_VERIFIER_LOG=1 shows why)", j->fn,
			 strerror(j->err));
		return -1;
	}
	return 0;
}
