/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The command line every BPF tool shares: -p, -t, --children, -o, --format,
 * --threads, --function, -v, -h, --version, --ebpf, the duration and
 * "-- CMD [ARGS...]" (with --run-as), with the same messages in each tool;
 * a tool lists only its own options and handles them in a callback. The
 * small argument parsers it uses are in cli_args.h.
 */
#ifndef PYBPF_CLI_COMMON_H
#define PYBPF_CLI_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli_args.h"
#include "report/formats.h"

struct tool_session;
struct async_tasks;
struct stack_filter;

/* A tool's own long-only options take values from CLI_OPT_OWN up. */
#define CLI_OPT_OWN 256

struct cli {
	const char *tool;  /* "pyprofile": prefix of every message */
	const char *usage; /* the --help text */
	/* what the shared options said (the PIDs go to the session) */
	pid_t tid;
	int duration; /* seconds, 0: until Ctrl-C */
	bool verbose, ebpf;
	enum report_format format;
	/* --format json: for tools whose report is rows (pymem), which set
	 * allow_json; the stack formats above do not have it */
	bool allow_json, json;
	const char *output; /* -o FILE, or NULL for stdout */
	FILE *out;	    /* after cli_open_output */
	bool children;	    /* --children */
	char **command;	    /* -- CMD [ARGS...], NULL-terminated; NULL: none */
	const char *run_as; /* --run-as USER */
	bool no_native;	    /* --no-native: no native frames (no native walks) */
	bool startup_frames; /* --startup-frames: keep the native frames below
			      * the outermost Python frame */
};

/*
 * A tool's own option: opt is getopt's value, arg its optarg. Returns 0, or
 * -1 after printing why.
 */
typedef int (*cli_own_option)(int opt, const char *arg, void *ctx);

/*
 * Parses argv: the shared options into c and s->pids, the tool's own
 * (own_short in getopt syntax, own_long ended by a zero entry) through own.
 * -h and --version print and exit. Returns 0, or -1 after printing why
 * (the tool then exits with status 2).
 */
int cli_parse(struct cli *c, struct tool_session *s, int argc, char **argv,
	      const char *own_short, const struct option *own_long, cli_own_option own,
	      void *ctx);

/*
 * The targets into s: -t's process, the -p list's descendants (--children),
 * or the launched command (held until session_start_command), and -v.
 * Returns 0, or -1 after printing why.
 */
int cli_prepare_targets(struct cli *c, struct tool_session *s);

/*
 * Native frames: starts loading the walk chain fn (a program of
 * prog_type) unless --no-native or no user stacks are wanted. Returns 0,
 * or -1 after printing why.
 */
int cli_native_chain(const struct cli *c, struct tool_session *s, bool user_stacks,
		     const char *fn, int prog_type);

/*
 * The tool's exit status: rc if the tool failed; with a launched command,
 * the command's (ended first if it still runs); otherwise 0.
 */
int cli_exit_status(const struct cli *c, struct tool_session *s, int rc);

/* Who is traced, as the headers say it: "TID 5", "PID 1,2", "PID 1,2 and
 * their descendants", "command PID 7 and its descendants" or "all Python
 * processes". */
void cli_print_target(FILE *f, const struct cli *c, const struct tool_session *s);

/*
 * A header line: before, the target, after, then " for N secs." or
 * "... Hit Ctrl-C to end.", flushed.
 */
void cli_print_header(FILE *f, const struct cli *c, const struct tool_session *s,
		      const char *before, const char *after);

/*
 * The stack filter the shared options ask for: user and kernel stacks as
 * the tool's -U/-K leave them, --startup-frames, -t, every kind of count,
 * and the asyncio tasks (NULL: stacks as recorded). The tool adds its own.
 */
struct stack_filter cli_stack_filter(const struct cli *c, bool user_stacks, bool kernel_stacks,
				     const struct async_tasks *tasks);

/* c->out = the -o file (or stdout). Returns 0, or -1 after printing why. */
int cli_open_output(struct cli *c);

/* Closes the -o file. Returns 0, or -1 after printing why. */
int cli_close_output(struct cli *c);

#endif
