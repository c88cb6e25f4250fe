/* SPDX-License-Identifier: Apache-2.0 */
/* Compiling (or taking from the cache), loading and attaching the embedded
 * BPF programs with libbcc. */
#ifndef PYBPF_BPF_MODULE_H
#define PYBPF_BPF_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/bpf_image.h"
#include "bpf/prog_load.h"

#define BPFMOD_MAX_PROGS 24 /* pymem: 6 of its own, 8 watch mapping changes; --alloc: 8
			     * probes, a walk chain and the session's 12 */
#define BPFMOD_MAX_ATTACH 40 /* tracepoints of one tool (14 of them watch mapping changes) */

/* Sized by the CPUs the machine has, at run time (no limit of our own). */
struct bpfmod {
	struct bpf_image img; /* maps (created) and programs */
	bool from_cache;      /* the image came from the cache: no compiler ran */
	char cache_note[256]; /* why the cache was not used, when it matters (-v) */
	uint64_t compile_ns, load_ns; /* getting the image; loading (verifying) programs */
	struct prog_load progs[BPFMOD_MAX_PROGS]; /* loaded in the background */
	int nprogs;
	int *perf_fds; /* sampling: one per online CPU */
	int nperf, cap_perf;
	int attach_fds[BPFMOD_MAX_ATTACH];
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
 * The programs of text (the embedded ABI header and program) compiled with
 * extra clang flags: from the cache of compiled images (bpf/bpf_cache.h)
 * when this system compiled the same before, else compiled by libbcc
 * (bpf/bcc_compile.h) and cached. Creates the maps. Returns 0 or -1
 * (m->err).
 */
int bpfmod_compile(struct bpfmod *m, const char *text, const char *const *cflags,
		       int ncflags);
void bpfmod_close(struct bpfmod *m);

/*
 * Starts loading a function of the module as a program of prog_type; the
 * kernel verifies it in the background (bpf/prog_load.h) while the tool
 * goes on. Returns its descriptor or -1 (m->err). The descriptor is the
 * program once a bpfmod_attach_* function (or bpfmod_wait_loads) has
 * taken it: they wait for the load, and fail with its error if it failed.
 */
int bpfmod_load(struct bpfmod *m, const char *fn, int prog_type);

/* Waits for every load; 0, or -1 if one failed (m->err). */
int bpfmod_wait_loads(struct bpfmod *m);

/* Waits for the load behind progfd alone; 0, or -1 if it failed (m->err). */
int bpfmod_wait_load(struct bpfmod *m, int progfd);

/* Attaches a perf-event program on every online CPU (cpu-clock at freq Hz,
 * hardware cycles are not used: many VMs have none). Returns 0 or -1. */
int bpfmod_attach_sampling(struct bpfmod *m, int progfd, int freq);
int bpfmod_attach_tracepoint(struct bpfmod *m, int progfd, const char *category,
				 const char *event);
int bpfmod_attach_raw_tracepoint(struct bpfmod *m, int progfd, const char *event);

int bpfmod_table_fd(struct bpfmod *m, const char *table);
/* How many entries a map holds at most (0: no such map). */
uint32_t bpfmod_table_max_entries(struct bpfmod *m, const char *table);

/* How many runs of the module's loaded programs the kernel skipped: it
 * runs no tracing program on a CPU where one is running already (a
 * tracepoint that fires inside a program, or while a map is being
 * updated). 0 on kernels that do not count them (before 5.12). */
uint64_t bpfmod_missed_runs(struct bpfmod *m);

/* The program progfd's skipped runs lose nothing the tool reports (they
 * are faults of BPF's own reads of user memory, say): bpfmod_missed_runs
 * leaves them out and bpfmod_expected_misses counts them. */
void bpfmod_expect_misses(struct bpfmod *m, int progfd);
uint64_t bpfmod_expected_misses(struct bpfmod *m);

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
