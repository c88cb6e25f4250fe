/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The skeleton a BPF tool's front end is written on, so that each tool
 * says only what is particular to it: its compile flags, built one by
 * one; its program compiled with the maps every tool has opened by name;
 * its programs loaded and attached, each failure said with the tool's
 * name; the scheduler and system-call tracepoints the off-CPU programs
 * share; and the session's hooks (the stack filter, asyncio tasks, the
 * ticks of the run, periodic output) set through calls instead of by
 * writing the fields of struct tool_session.
 */
#ifndef PYBPF_TOOL_H
#define PYBPF_TOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/session.h"

#define TOOL_MAX_CFLAGS 24
#define TOOL_CFLAG_LEN 64

/* A program's compile flags ("-DNAME=VALUE"), in the order added. */
struct tool_cflags {
	const char *v[TOOL_MAX_CFLAGS];
	char buf[TOOL_MAX_CFLAGS][TOOL_CFLAG_LEN];
	int n;
	bool overflow; /* a flag did not fit: tool_compile refuses */
};

/* Appends a flag, printf-style. */
void tool_cflag(struct tool_cflags *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Compiles text with f (session_compile) and opens the maps every tool's
 * program has: pystacks, counts, stack_traces (-1 in a program without
 * kernel stacks) and stats. Returns 0, or -1 after printing why.
 */
int tool_compile(struct tool_session *s, const char *text, const struct tool_cflags *f);

/* A map of the compiled program by name, or -1 if it has none. */
int tool_table(struct tool_session *s, const char *name);

/* Starts loading the program fn as prog_type (bpfmod_load). Returns its
 * descriptor, or -1 after printing why. */
int tool_load(struct tool_session *s, const char *fn, int prog_type);

/* The loaded program prog_fd's runs the kernel skips lose nothing (a
 * fault program's runs skipped on faults of BPF's own reads of user
 * memory): the summary's "skipped" line leaves them out;
 * tool_expected_misses counts them. */
void tool_expect_missed_runs(struct tool_session *s, int prog_fd);
uint64_t tool_expected_misses(struct tool_session *s);

/* Attaches a loaded program to a tracepoint. Returns 0, or -1 after
 * printing why. */
int tool_attach_tracepoint(struct tool_session *s, int prog_fd, const char *category,
			   const char *event);

/* The off-CPU programs (bpf_c/pyoffcpu.bpf.c): sched_waking (the end of
 * the blocked part), sched_switch (both ends of an interval) and, for wait
 * reasons, the entries of close, dup2 and dup3 (a descriptor's kind
 * forgotten: bpf_c/wait_reasons.bpf.h). */
#define TOOL_FD_FORGET 3
struct tool_sched_progs {
	int waking, switched;
	int fd_forget[TOOL_FD_FORGET];
};

/* Loads them. Returns 0, or -1 after printing why. */
int tool_load_sched(struct tool_session *s, struct tool_sched_progs *p);

/* Attaches them, the descriptor probes first and only with wait reasons.
 * Returns 0, or -1 after printing why. */
int tool_attach_sched(struct tool_session *s, const struct tool_sched_progs *p,
		      bool wait_reasons);

/* The counts session_collect turns into rows. */
void tool_set_filter(struct tool_session *s, const struct stack_filter *f);

/* The stack filter in force (to change one field of it). */
struct stack_filter tool_filter(const struct tool_session *s);

/* --async: the asyncio tasks to name while the run lasts (NULL: none). */
void tool_set_tasks(struct tool_session *s, struct async_tasks *tasks);

/* Before session_start_discovery: each process's GC collecting flag is
 * located as it registers (bpf_c/gc_flag.bpf.h reads it); a search worth
 * its cost only to a tool that reads it. */
void tool_want_gc_flag(struct tool_session *s);

/* fn(s, ctx) on every turn of session_run, every tick_ms (0: 20 ms);
 * wake_on_stdin: input on stdin ends a turn at once. */
void tool_on_tick(struct tool_session *s, void (*fn)(struct tool_session *, void *), void *ctx,
		  int tick_ms, bool wake_on_stdin);

/* fn(ctx, t) as each Python process is registered with BPF, before BPF
 * sees it (again after an exec). */
void tool_on_active(struct tool_session *s, void (*fn)(void *ctx, struct py_target *t),
		    void *ctx);

/* fn(s, ctx) every interval_ns of the run (periodic output). */
void tool_on_interval(struct tool_session *s, void (*fn)(struct tool_session *, void *),
		      void *ctx, uint64_t interval_ns);

/* The wall-clock start of the current interval (periodic output). */
uint64_t tool_interval_start_realtime_ns(const struct tool_session *s);

/* The Python processes the session knows. */
struct py_registry *tool_registry(struct tool_session *s);

/* The collector that names the stacks (for readers of other maps). */
struct stack_collector *tool_collector(struct tool_session *s);

/* How many processes were given (-p, -t, a command); 0: every Python one. */
size_t tool_target_count(const struct tool_session *s);

/* The run starts now (before session_run: what is read of it at its
 * start, such as threads already off CPU, is dated so); returns the time. */
uint64_t tool_start_now(struct tool_session *s);

/* The end of the last session_run (monotonic, BPF's clock). */
uint64_t tool_end_ns(const struct tool_session *s);

/* Names the Python stacks BPF has noted so far, while their processes
 * live. */
void tool_name_stacks(struct tool_session *s);

#endif
