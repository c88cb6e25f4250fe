/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pygil's user-space half: finds and checks each process's GILs (one per
 * interpreter that has its own, 3.12+) and hands their addresses to BPF,
 * samples each GIL's state (who holds it, how often it changes hands) and
 * the thread list while processes live, and prints the per-thread table of
 * each GIL from what BPF counted.
 */
#ifndef PYBPF_GIL_MONITOR_H
#define PYBPF_GIL_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "report/log2_hist.h"
#include "abi/py_abi.h"
#include "bpf/registry.h"

struct thread_names;

#define GIL_THREAD_TSTATES 4

struct gil_thread_info {
	pid_t pid, tid;
	char comm[16];
	char name[128]; /* its Python (threading) name; "": none read, comm names it */
	uint64_t tstates[GIL_THREAD_TSTATES]; /* one per interpreter it has been in */
	int slot;                          /* its GIL's (see gil_proc_info) */
	bool waited;                       /* slot is that of its latest wait */
	uint64_t first_ns, last_ns;        /* seen alive from .. to */
	uint64_t hold_samples;
	struct pyb_gil_thread now, prev; /* prev: at the last interval */
	uint64_t prev_hold_samples, prev_wall_ns;
};

/* One GIL of a process: a process's only one, or (3.12+) one per
 * interpreter that has its own. */
struct gil_proc_info {
	pid_t pid;
	char comm[16];
	char version[24];
	uint64_t gil;
	uint64_t interp;  /* the first interpreter that uses it */
	int slot;         /* in BPF's struct pyb_gils; 0: the main interpreter's */
	int number;       /* interpreters of the process numbered as they came, main 0 */
	uint64_t interval_us;
	uint64_t switch_first, switch_last, switch_prev;
	uint64_t samples, prev_samples;
	uint64_t first_ns, last_ns, prev_ns;
	uint64_t gils_checked_ns; /* slot 0: when the interpreters were last listed */
	int ngils;        /* slot 0: GILs the process has had (1: print as one) */
	bool gone;
	unsigned activation; /* the target's, when adopted: another one is an exec */
	struct log2_hist hist; /* slot 0: the process's wait durations */
};

/* Waits of one thread less than this apart make one wait episode (BPF's
 * EPISODE_GAP_NS): the timed waits of one take_gil(). */
#define GIL_EPISODE_GAP_NS 200000ull

/* Rates and shares over a shorter window mean nothing (the thread list
 * is read every 100 ms, the GIL's state every 20 ms): shown as "-". */
#define GIL_MIN_WINDOW_NS 500000000ull

/* Processes shown by default, the most GIL waiting first. */
#define GIL_TOP_PROCESSES 10

struct gil_monitor {
	const char *tool;
	int gils_fd, threads_fd, waits_fd, hists_fd;
	int counts_fd;   /* BPF's stack counts: waits still open are charged there at the end */
	uint64_t end_ns; /* when BPF was stopped (monotonic); 0: now */
	size_t still_waiting; /* threads waiting for the GIL when the run ended */
	size_t top; /* processes shown, the most waiting first; 0: all */
	bool hide_idle; /* leave processes that did not wait to the summary line */
	pid_t only_tid;
	/* where the threads' Python names are kept (the session's, shared
	 * with its stacks); NULL: threads go by their OS names */
	struct thread_names *names;
	struct gil_proc_info *procs; /* GILs, several per process where interpreters have their own */
	size_t nprocs, cap_procs;
	struct gil_thread_info *threads;
	size_t nthreads, cap_threads;
	uint64_t last_threads_ns;
	size_t refused, free_threaded;
};

void gil_monitor_init(struct gil_monitor *m, const char *tool, int gils_fd, int threads_fd,
		      int waits_fd, int hists_fd);
void gil_monitor_free(struct gil_monitor *m);

/* Registers GILs of new targets, samples the GIL state and thread lists. */
void gil_monitor_tick(struct gil_monitor *m, struct py_registry *reg);

/* GILs watched (a process has one, or one per interpreter with its own). */
size_t gil_monitor_count(const struct gil_monitor *m);

/*
 * Reads BPF's per-thread counts and prints the table (and, when final,
 * each process's histogram of wait durations) of the m->top processes
 * whose threads waited longest, and a line on the rest. With since_last,
 * figures cover the time since the previous call (interval mode).
 */
void gil_monitor_print(struct gil_monitor *m, FILE *out, bool since_last, bool final);

#endif
