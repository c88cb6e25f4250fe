/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every Python-aware BPF tool does around its own program: check the
 * environment, compile the embedded program, find and register Python
 * processes (at start, on exec and fork, by rescans), keep naming code
 * objects while processes live, stop on time-out, Ctrl-C or when every
 * target has exited, and report what could not be seen.
 */
#ifndef PYBPF_TOOL_SESSION_H
#define PYBPF_TOOL_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/async_tasks.h"
#include "bpf/module.h"
#include "bpf/native_maps.h"
#include "bpf/registry.h"
#include "bpf/stack_collector.h"
#include "report/rows.h"
#include "sys/launch.h"

#define SESSION_MAX_PIDS 64

struct tool_session {
	const char *tool;
	struct bpfmod bpf;
	struct py_registry reg;
	pid_t pids[SESSION_MAX_PIDS];
	size_t npids;
	/* --children: every descendant of the -p processes too, those alive
	 * at the start and those forked later (BPF keeps the set) */
	bool follow_children;
	/* a command we started (session_launch): its process is pids[0] */
	bool launched;
	struct launch command;
	uint64_t lost_events;
	/* names stacks as they come and turns counts into rows */
	struct stack_collector col;
	struct stack_filter filter; /* set by the tool before session_collect */
	/* --function, --threads: the views session_collect applies */
	bool view_functions, view_threads;
	/* new-stack hints are named at once while running; some were lost:
	 * a full drain is due */
	bool running, hints_lost;
	uint64_t start_realtime_ns, duration_ns; /* of the last session_run */
	/* session_attach_sampling: the rate asked of the kernel, since when,
	 * for how long (set when sampling stops) and on how many CPUs */
	int sample_hz, sample_cpus;
	uint64_t sample_start_ns, sample_ns;
	uint64_t sample_busy_start_ns, sample_busy_ns; /* all CPUs' busy time */
	uint64_t start_ns, end_ns; /* monotonic (BPF's clock): start and end of the run */
	int pystacks_fd, counts_fd, stacks_fd, stats_fd;
	bool verbose;
	/* locate each process's GC flag (tool_want_gc_flag) */
	bool gc_flag;
	/* periodic output (--interval): on_interval runs every interval_ns of
	 * the run; it writes what the interval counted (session_collect_interval) */
	uint64_t interval_ns;
	void (*on_interval)(struct tool_session *s, void *ctx);
	void *interval_ctx;
	uint64_t interval_start_ns, interval_start_realtime_ns; /* the current interval */
	/* start-up phases (monotonic ns), for -v: checks and -p prechecks,
	 * the BPF image (cache or compiler), finding the Python processes */
	uint64_t t_begin, t_checked, t_compiled, t_discovery, t_discovered;
	/* called on every turn of session_run, if set; those turns come every
	 * 20 ms then (otherwise about once a second unless something is pending) */
	void (*on_tick)(struct tool_session *s, void *ctx);
	void *tick_ctx;
	int tick_ms; /* those turns' period instead of 20 ms; 0: 20 ms */
	bool wake_on_stdin; /* with on_tick: input on stdin ends a turn at once
			     * (--top: the keyboard) */
	/* --async: the asyncio tasks samples ran in (NULL: not asked for) */
	struct async_tasks *tasks;
	/* native stacks (session_native_chain): the files BPF unwinds them by,
	 * and the programs that walk them, one chain per kind of entry */
	struct native_maps native;
	bool native_on;
	bool no_native; /* --no-native: compiled without room for unwind rows */
	const char *chains[2];
	int chain_fds[2], nchains;
	/* called as a process becomes a target, before BPF sees it (the
	 * registry's on_active) */
	void (*on_active)(void *ctx, struct py_target *t);
	void *on_active_ctx;
};

/* -t TID: targets the thread's process. Returns 0, or -1 after printing why. */
int session_target_thread(struct tool_session *s, pid_t tid);

/*
 * -- CMD: forks the command, held before its exec until
 * session_start_command, as run_as (NULL: the user who ran sudo, if any; see
 * launch_creds_resolve). It and its descendants become the targets.
 * Returns 0, or -1 after printing why.
 */
int session_launch(struct tool_session *s, char *const argv[], const char *run_as);

/* Lets the launched command run (call it once everything is attached, just
 * before session_run). Returns 0, or -1 after printing why (the command
 * could not be run: session_end_command then gives 127 or 126). Nothing to
 * do without a command. */
int session_start_command(struct tool_session *s);

/*
 * The end of a launched command: ends it if it still runs (after the run
 * was interrupted, it gets 2 s to end by itself first: Ctrl-C reached it
 * too) and returns its exit status as a shell gives it.
 */
int session_end_command(struct tool_session *s);

/*
 * Checks the environment and compiles text with cflags (PYB_BPF and the
 * common defines are added). Returns 0, or -1 after printing why.
 */
int session_compile(struct tool_session *s, const char *text, const char *const *cflags,
		    int ncflags);

/*
 * Native user stacks: starts loading fn, a walk chain of the program
 * (bpf_c/native_unwind.bpf.h), as a program of prog_type (that of the
 * programs that begin its walks). Call after session_compile, before
 * session_start_discovery, once per chain. Native stacks stay off, with a
 * warning, if the chain cannot be loaded; returns 0 unless out of room.
 */
int session_native_chain(struct tool_session *s, const char *fn, int prog_type);

/*
 * Attaches the discovery programs (exec raw tracepoint, fork tracepoint),
 * opens the event buffer and registers the initial processes. Returns 0,
 * or -1 after printing why (e.g. no -p PID is a Python process).
 */
int session_start_discovery(struct tool_session *s);

/*
 * Samples every CPU with the perf-event program prog_fd at *hz, capped at
 * what the kernel allows (kernel.perf_event_max_sample_rate, and a timer
 * that fires every 10 us at most), as perf does: a higher -F is lowered,
 * with a warning, and *hz set to the rate asked of the kernel. Returns 0,
 * or -1 after printing why.
 */
int session_attach_sampling(struct tool_session *s, int prog_fd, int *hz);

/* Samples taken per CPU-second (every sample, of any process), once
 * sampling stopped; 0 before. */
double session_sampled_hz(struct tool_session *s);

/* Time one sample stands for: 1/rate asked, or 1/rate reached when the
 * kernel fell short of the rate asked by more than 10%. */
uint64_t session_sample_period_ns(struct tool_session *s);

/* Runs until duration seconds pass (0: forever), from s->start_ns if the
 * tool set it (else from now), Ctrl-C/SIGTERM, every -p target has exited,
 * or the launched command has. Then sets the program's `run_end` array, if
 * it has one, to the end (BPF's clock: the programs ignore later events)
 * and detaches every BPF program (the maps stay). */
void session_run(struct tool_session *s, int duration);

/* The counts that pass s->filter as rows of rep (and the run's times, and
 * what was profiled, for titles), in the views asked for. */
int session_collect(struct tool_session *s, struct report *rep);

/*
 * Periodic output: the counts of the interval that ends now (they are
 * deleted from BPF's map as they are read) as rows of rep, with the
 * interval's start and length; then stacks no longer used are pruned from
 * maps that fill up. The next interval starts now (or where the run
 * ended). Returns 0 or -1.
 */
int session_collect_interval(struct tool_session *s, struct report *rep);

/* The same for counts that stand for a state, not events (pymem --alloc:
 * bytes outstanding): they stay in BPF's map, read whole each interval. */
int session_collect_standing(struct tool_session *s, struct report *rep);

/* What the run profiles, for people: "PID 1234 (python3)", "TID 5 of PID
 * 4 (app)", "PIDs 1,2", "all Python processes". */
void session_describe_target(struct tool_session *s, char *buf, size_t len);

/* Reads a per-CPU counter summed over CPUs. */
uint64_t session_stat(struct tool_session *s, int which);

/* The closing summary lines on stderr; one and many name what BPF counted
 * (one "sample", many "samples"). */
void session_print_summary(struct tool_session *s, const char *one, const char *many);

/* When much of rep's native time is in functions no symbol names: which
 * files (by build-id) lack symbols and how to get them (report/
 * native_unnamed.h). unit: what a row's value counts. */
void session_print_unnamed(const struct tool_session *s, const struct report *rep,
			   const char *unit);

/*
 * -v: the kernel's own accounting of a program's run time (needs sysctl
 * kernel.bpf_stats_enabled=1), per run and per event of interest (none if
 * event_noun is NULL).
 */
void session_print_bpf_stats(struct tool_session *s, int prog_fd, const char *prog_name,
			     uint64_t events, const char *event_noun);

void session_close(struct tool_session *s);

extern volatile sig_atomic_t session_stop;
void session_install_signals(void);

#endif
