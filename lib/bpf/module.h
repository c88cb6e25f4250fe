/* SPDX-License-Identifier: Apache-2.0 */
/* Compiling, loading and attaching the embedded BPF programs with libbcc. */
#ifndef PYBPF_BPF_MODULE_H
#define PYBPF_BPF_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sized by the CPUs the machine has, at run time (no limit of our own). */
struct bpfmod {
	void *mod; /* libbcc module */
	int *perf_fds; /* sampling: one per online CPU */
	int nperf, cap_perf;
	int attach_fds[8];
	int nattach;
	void **readers; /* perf buffer readers: one per online CPU and buffer */
	int nreaders, cap_readers;
	char err[512];
};

/*
 * Checks what libbcc needs before compiling anything: root, kernel headers,
 * tracefs (mounted here if missing). Returns 0, or -1 with a message that
 * says how to fix it.
 */
int bpfmod_environment_check(char *err, size_t len);

/*
 * Compiles text (the embedded ABI header and program) with extra clang
 * flags. Returns 0 or -1 (m->err).
 */
int bpfmod_compile(struct bpfmod *m, const char *text, const char *const *cflags,
		       int ncflags);
void bpfmod_close(struct bpfmod *m);

/* Loads a function of the module as a program of prog_type; fd or -1. */
int bpfmod_load(struct bpfmod *m, const char *fn, int prog_type);

/* Attaches a perf-event program on every online CPU (cpu-clock at freq Hz,
 * hardware cycles are not used: many VMs have none). Returns 0 or -1. */
int bpfmod_attach_sampling(struct bpfmod *m, int progfd, int freq);
int bpfmod_attach_tracepoint(struct bpfmod *m, int progfd, const char *category,
				 const char *event);
int bpfmod_attach_raw_tracepoint(struct bpfmod *m, int progfd, const char *event);

int bpfmod_table_fd(struct bpfmod *m, const char *table);

/* Opens the perf buffers behind a BPF_PERF_OUTPUT table on every CPU. */
typedef void (*bpfmod_event_fn)(void *ctx, void *data, int size);
typedef void (*bpfmod_lost_fn)(void *ctx, uint64_t lost);
int bpfmod_open_events(struct bpfmod *m, const char *table, bpfmod_event_fn fn,
			   bpfmod_lost_fn lost, void *ctx, int pages);
/*
 * Waits up to timeout_ms for events in the perf buffers or for one of the
 * nextra other descriptors, and hands the events to their callbacks. The
 * revents of extra tell which of those became ready. Returns the number of
 * ready extra descriptors.
 */
struct pollfd;
int bpfmod_poll_events(struct bpfmod *m, int timeout_ms, struct pollfd *extra,
			   int nextra);

/*
 * Detaches every program (tracepoints, perf events) and keeps the maps:
 * what they hold no longer changes while it is read.
 */
void bpfmod_detach(struct bpfmod *m);

#endif
