/* SPDX-License-Identifier: Apache-2.0 */
/* Compiling, loading and attaching the embedded BPF programs with libbcc. */
#ifndef PYBPF_BPF_MODULE_H
#define PYBPF_BPF_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BPF_MODULE_MAX_CPUS 1024

struct bpf_module {
	void *mod; /* libbcc module */
	int perf_fds[BPF_MODULE_MAX_CPUS];
	int nperf;
	int attach_fds[8];
	int nattach;
	void *readers[2 * BPF_MODULE_MAX_CPUS]; /* perf buffer readers: two buffers */
	int nreaders;
	char err[512];
};

/*
 * Checks what libbcc needs before compiling anything: root, kernel headers,
 * tracefs (mounted here if missing). Returns 0, or -1 with a message that
 * says how to fix it.
 */
int bpf_environment_check(char *err, size_t len);

/*
 * Compiles text (the embedded ABI header and program) with extra clang
 * flags. Returns 0 or -1 (m->err).
 */
int bpf_module_compile(struct bpf_module *m, const char *text, const char *const *cflags,
		       int ncflags);
void bpf_module_close(struct bpf_module *m);

/* Loads a function of the module as a program of prog_type; fd or -1. */
int bpf_module_load(struct bpf_module *m, const char *fn, int prog_type);

/* Attaches a perf-event program on every online CPU (cpu-clock at freq Hz,
 * hardware cycles are not used: many VMs have none). Returns 0 or -1. */
int bpf_module_attach_sampling(struct bpf_module *m, int progfd, int freq);
int bpf_module_attach_tracepoint(struct bpf_module *m, int progfd, const char *category,
				 const char *event);
int bpf_module_attach_raw_tracepoint(struct bpf_module *m, int progfd, const char *event);

int bpf_module_table_fd(struct bpf_module *m, const char *table);

/* Opens the perf buffers behind a BPF_PERF_OUTPUT table on every CPU. */
typedef void (*bpf_event_fn)(void *ctx, void *data, int size);
typedef void (*bpf_lost_fn)(void *ctx, uint64_t lost);
int bpf_module_open_events(struct bpf_module *m, const char *table, bpf_event_fn fn,
			   bpf_lost_fn lost, void *ctx, int pages);
/*
 * Waits up to timeout_ms for events in the perf buffers or for one of the
 * nextra other descriptors, and hands the events to their callbacks. The
 * revents of extra tell which of those became ready. Returns the number of
 * ready extra descriptors.
 */
struct pollfd;
int bpf_module_poll_events(struct bpf_module *m, int timeout_ms, struct pollfd *extra,
			   int nextra);

/* Online CPU numbers; returns the count. */
int online_cpus(int *cpus, int max);

#endif
