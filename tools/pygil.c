// SPDX-License-Identifier: Apache-2.0
/*
 * pygil  GIL contention of Python processes: who waits for the GIL, how
 *        long, where in the Python code, and who holds it meanwhile.
 *        For Linux, uses libbcc, eBPF. Embedded C.
 *
 * Works on stripped interpreters: no uprobes. A thread waiting for the GIL
 * sleeps in futex() on a word inside the GIL struct, whose address the
 * library finds and checks in each process; the syscalls:sys_{enter,exit}_
 * futex tracepoints time those waits in BPF (see bpf_c/pygil.bpf.c). User
 * space samples the GIL state itself for hold shares and switch rates.
 */
#include <linux/bpf.h>
#include <stdio.h>
#include <time.h>

#include "cli.h"
#include "sys/clock.h"
#include "sys/plural.h"
#include "bpf/gil_monitor.h"
#include "cpython/gil.h"
#include "cpython/gil_locate.h"
#include "report/formats.h"
#include "report/row_limit.h"
#include "report/summary.h"
#include "bpf/tool.h"

extern const char pygil_bpf_text[];

static const char usage_text[] =
	"Usage: pygil [-h] [-p PID[,PID...] [--children] | -t TID] [-f] [-o FILE]\n"
	"             [--format text|folded|svg|speedscope|pprof] [-i INTERVAL] [--all]\n"
	"             [--threads] [--function] [--no-native] [--startup-frames] [-v]\n"
	"             [--version]\n"
	"             [duration] [[--run-as USER] -- CMD [ARGS...]]\n"
	"\n"
	"Measure GIL contention in Python processes: per thread, the time spent\n"
	"waiting for the GIL (and as a share of its wall time), the number of waits,\n"
	"their durations as a log2 histogram, each thread's share of GIL holding and\n"
	"the GIL switches per second; the Python and native stacks where threads\n"
	"waited, and the Python stacks of the threads that held the GIL meanwhile.\n"
	"Works on stripped interpreters. Without -p: every Python process on the\n"
	"machine. With -- CMD: run CMD and trace it and its descendants. Shares\n"
	"and rates over less than 0.5 s are shown as \"-\"; a wait still going on\n"
	"at the end counts up to the end, its stacks ending in\n"
	"" STILL_WAITING_MARKER ".\n"
	"\n"
	"  -p, --pid PID[,PID]  trace these processes only\n"
	"      --children       and their descendants, running or started later\n"
	"  -t, --tid TID        trace this thread only\n"
	"  -f, --folded         print the waiting stacks folded, weighted in\n"
	"                       microseconds waited (the table goes to stderr)\n"
	"  -o, --output FILE    write the waiting stacks to FILE (--format)\n"
	"      --format FMT     text (default), folded, svg, speedscope or pprof\n"
	"  -i, --interval SECS  print the table every SECS seconds, for that interval\n"
	"      --all            every process and every stack in the text report\n"
	"                       (default: the 10 processes whose threads waited\n"
	"                       longest, without -p only those that waited, and\n"
	"                       the 20 stacks with the most time)\n"
	"      --threads        the process and thread at the root of each stack\n"
	"      --function       one frame per function (its def line), not per line\n"
	"      --no-native      no native frames: Python (and kernel) frames only,\n"
	"                       without walking native stacks (cheaper)\n"
	"      --startup-frames keep the native frames below the outermost Python\n"
	"                       frame (the interpreter's start-up, thread bootstrap)\n"
	"      --run-as USER    run CMD as USER (default: the user who ran sudo)\n"
	"  -v, --verbose        say how each process was recognised, BPF run time\n"
	"      --version        print the version\n"
	"  -h, --help           show this help\n"
	"\n"
	"examples:\n"
	"    ./pygil -p 185               # GIL contention of PID 185 until Ctrl-C\n"
	"    ./pygil -p 185 10            # for 10 seconds\n"
	"    ./pygil -i 1 -p 185          # a table every second\n"
	"    ./pygil -f -p 185 10 > gil.folded      # waiting stacks for flamegraph.pl\n"
	"    ./pygil -p 185 -o gil.svg --format svg 10   # flame graph of GIL waits\n"
	"    ./pygil -- python3 app.py    # run app.py, measure until it exits\n"
	"    ./pygil 5                    # every Python process, 5 seconds\n";

enum { OPT_ALL = CLI_OPT_OWN };

/* Stacks the text report shows of each kind without --all. */
#define TOP_STACKS 20

struct options {
	struct cli cli;
	int interval;
	bool folded, all;
};

static int own_option(int opt, const char *arg, void *ctx)
{
	struct options *o = ctx;

	switch (opt) {
	case 'f':
		o->folded = true;
		return 0;
	case 'i':
		if (cli_parse_small_int(arg, 1, 86400, &o->interval) < 0) {
			fprintf(stderr, "pygil: invalid interval: %s\n", arg);
			return -1;
		}
		return 0;
	case OPT_ALL:
		o->all = true;
		return 0;
	default:
		return 1;
	}
}

static int parse_args(int argc, char **argv, struct options *o, struct tool_session *s)
{
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, 'f' },
		{ "interval", required_argument, NULL, 'i' },
		{ "all", no_argument, NULL, OPT_ALL },
		{ NULL, 0, NULL, 0 },
	};

	return cli_parse(&o->cli, s, argc, argv, "fi:", longopts, own_option, o);
}

struct tick_state {
	struct gil_monitor mon;
	struct options *o;
	uint64_t next_print_ns;
	FILE *table;
};

static void on_tick(struct tool_session *s, void *ctx)
{
	struct tick_state *ts = ctx;
	uint64_t now = monotonic_ns();

	gil_monitor_tick(&ts->mon, tool_registry(s));
	if (ts->o->interval && now >= ts->next_print_ns) {
		time_t t = time(NULL);
		char stamp[16];

		/* the first turn only starts the clock */
		if (ts->next_print_ns) {
			strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&t));
			fprintf(ts->table, "%s\n", stamp);
			gil_monitor_print(&ts->mon, ts->table, true, false);
		}
		ts->next_print_ns = now + (uint64_t)ts->o->interval * 1000000000ull;
	}
}

/* The stack programs must run after the waiter's: attached after it. */
static int attach(struct tool_session *s, int *enter_fd)
{
	int exit_fd, waiter_fd, holder_fd, waking_fd;

	if ((*enter_fd = tool_load(s, "tracepoint__syscalls__sys_enter_futex",
				   BPF_PROG_TYPE_TRACEPOINT)) < 0 ||
	    (waiter_fd = tool_load(s, "note_waiter_stack", BPF_PROG_TYPE_TRACEPOINT)) < 0 ||
	    (holder_fd = tool_load(s, "note_gil_holder", BPF_PROG_TYPE_TRACEPOINT)) < 0 ||
	    (exit_fd = tool_load(s, "tracepoint__syscalls__sys_exit_futex",
				 BPF_PROG_TYPE_TRACEPOINT)) < 0 ||
	    (waking_fd = tool_load(s, "tracepoint__sched__sched_waking",
				   BPF_PROG_TYPE_TRACEPOINT)) < 0)
		return -1;
	if (tool_attach_tracepoint(s, waking_fd, "sched", "sched_waking") < 0 ||
	    tool_attach_tracepoint(s, *enter_fd, "syscalls", "sys_enter_futex") < 0 ||
	    tool_attach_tracepoint(s, waiter_fd, "syscalls", "sys_enter_futex") < 0 ||
	    tool_attach_tracepoint(s, holder_fd, "syscalls", "sys_enter_futex") < 0 ||
	    tool_attach_tracepoint(s, exit_fd, "syscalls", "sys_exit_futex") < 0)
		return -1;
	return 0;
}

/* The counts of one kind (waits or holds) as rows of rep. */
static void collect_kind(struct tool_session *s, int kind, struct report *rep)
{
	struct stack_filter f = tool_filter(s);

	f.only_kind = kind;
	tool_set_filter(s, &f);
	session_collect(s, rep);
}

static void print_stacks(const struct report *rep, const char *title, bool all, FILE *out)
{
	struct report_top top;

	report_top_rows(rep, all ? 0 : TOP_STACKS, &top);
	if (rep->n)
		fprintf(out, "%s\n\n", title);
	if (top.omitted)
		fprintf(out,
			"(%zu more %s with less time, %.1f ms in all, not shown: --all shows "
			"every stack; -f and the other formats have them all)\n\n",
			top.omitted, plural(top.omitted, "stack", "stacks"),
			(double)top.omitted_value / 1e3);
	report_print_text(&top.view, out);
	report_top_free(&top);
}

/* The stacks that waited and those that held the GIL meanwhile, then the
 * summary of each. */
static void print_text(struct tool_session *s, bool all, FILE *out)
{
	struct report waits, holds;

	report_init(&waits, false);
	report_init(&holds, false);
	collect_kind(s, PYB_KIND_GIL_WAIT, &waits);
	collect_kind(s, PYB_KIND_GIL_HOLD, &holds);
	print_stacks(&waits, "Where threads waited for the GIL (microseconds waited):", all, out);
	print_stacks(&holds, "Who held the GIL while others waited (microseconds others waited):",
		     all, out);
	report_print_summary(&waits, "us", "GIL waits", all ? 0 : SUMMARY_PROCS, out);
	if (waits.n && holds.n)
		fprintf(out, "\n");
	report_print_summary(&holds, "us", "who held the GIL while others waited",
			     all ? 0 : SUMMARY_PROCS, out);
	report_free(&holds);
	report_free(&waits);
}

static void print_header(const struct options *o, const struct tool_session *s, FILE *out)
{
	cli_print_header(out, &o->cli, s, "Tracing GIL waits of ", "");
}

static int report(struct tool_session *s, struct tick_state *ts, struct options *o)
{
	struct report rep;
	int rc = 0;

	gil_monitor_print(&ts->mon, ts->table, o->interval > 0, true);
	if (!o->folded)
		print_text(s, o->all, stdout);
	if (!o->cli.output && !o->folded)
		return 0;
	report_init(&rep, false);
	collect_kind(s, PYB_KIND_GIL_WAIT, &rep);
	if (cli_open_output(&o->cli) < 0) {
		rc = 1;
	} else {
		rc = report_write(&rep, o->cli.output ? o->cli.format : REPORT_FOLDED, o->cli.out,
				  "us", "pygil") < 0;
		if (cli_close_output(&o->cli) < 0)
			rc = 1;
	}
	report_free(&rep);
	return rc;
}

static int compile(const struct options *o, struct tool_session *s)
{
	struct tool_cflags f = { 0 };

	tool_cflag(&f, "-DPYSTACKS_SIZE=65536");
	tool_cflag(&f, "-DCOUNTS_SIZE=65536");
	tool_cflag(&f, "-DPYB_PYTHON_ROOT=%d", !o->cli.startup_frames);
	tool_cflag(&f, "-DEPISODE_GAP_NS=%lluULL", GIL_EPISODE_GAP_NS);
	tool_cflag(&f, "-DTHREAD_FILTER=%d", (int)o->cli.tid);
	tool_cflag(&f, "-DGIL_SIZE=%d", PY_GIL_STRUCT_SIZE);
	return tool_compile(s, pygil_bpf_text, &f);
}

static void init_monitor(struct tick_state *ts, const struct options *o,
			 struct tool_session *s)
{
	/* the waiters' native stacks (the holders' are other threads') */
	struct stack_filter f = { .user_stacks = true, .startup_frames = o->cli.startup_frames };

	gil_monitor_init(&ts->mon, "pygil", tool_table(s, "gils"), tool_table(s, "threads"),
			 tool_table(s, "waits"), tool_table(s, "hists"));
	ts->mon.only_tid = o->cli.tid;
	ts->mon.names = &s->col.threads;
	ts->mon.counts_fd = tool_table(s, "counts");
	ts->mon.top = o->all ? 0 : GIL_TOP_PROCESSES;
	ts->mon.hide_idle = !o->all && !tool_target_count(s); /* -p/-t: the targets are shown */
	ts->table = o->folded ? stderr : stdout;
	tool_set_filter(s, &f);
}

/*
 * Attaches, finds the Python processes and their GILs, and starts the
 * ticks that read them. Returns 0, or -1 after printing why (none of the
 * processes given has a GIL to watch).
 */
static int start(const struct options *o, struct tool_session *s, struct tick_state *ts,
		 int *enter_fd)
{
	if (cli_native_chain(&o->cli, s, true, "native_walk_gil", BPF_PROG_TYPE_TRACEPOINT) < 0)
		return -1;
	session_install_signals();
	if (attach(s, enter_fd) < 0 || session_start_discovery(s) < 0)
		return -1;
	gil_monitor_tick(&ts->mon, tool_registry(s));
	if (tool_target_count(s) && !o->cli.children &&
	    ts->mon.refused == gil_monitor_count(&ts->mon)) {
		fprintf(stderr, "pygil: %s\n", ts->mon.free_threaded == ts->mon.refused
				? "free-threaded Python has no GIL: nothing to measure"
				: "none of the given processes has a GIL pygil can watch");
		return -1;
	}
	tool_on_tick(s, on_tick, ts, 0, false);
	print_header(o, s, ts->table);
	return 0;
}

/* The run, once attached, and what it reports. */
static int run(struct options *o, struct tool_session *s, struct tick_state *ts, int enter_fd)
{
	int rc;

	if (session_start_command(s) < 0)
		return session_end_command(s); /* 127: not found, as shells say */
	session_run(s, o->cli.duration);
	ts->mon.end_ns = tool_end_ns(s);
	rc = report(s, ts, o);
	session_print_summary(s, "GIL wait", "GIL waits");
	if (ts->mon.still_waiting)
		fprintf(stderr,
			"pygil: %zu %s still waiting for the GIL when the run ended: "
			"counted up to the end, in stacks ending in %s\n",
			ts->mon.still_waiting, plural(ts->mon.still_waiting, "thread was", "threads were"),
			STILL_WAITING_MARKER);
	if (o->cli.verbose)
		session_print_bpf_stats(s, enter_fd, "sys_enter_futex",
					session_stat(s, PYB_STAT_SAMPLES), "GIL wait episode");
	return cli_exit_status(&o->cli, s, rc);
}

int main(int argc, char **argv)
{
	struct options o = {
		.cli = { .tool = "pygil", .usage = usage_text, .format = REPORT_TEXT },
	};
	struct tool_session s = { .tool = "pygil" };
	struct tick_state ts = { .o = &o };
	int enter_fd = -1, rc = 1;

	if (parse_args(argc, argv, &o, &s) < 0)
		return 2;
	if (o.cli.ebpf) {
		fputs(pygil_bpf_text, stdout);
		return 0;
	}
	if (cli_prepare_targets(&o.cli, &s) < 0 || compile(&o, &s) < 0)
		return 1;
	init_monitor(&ts, &o, &s);
	if (start(&o, &s, &ts, &enter_fd) == 0)
		rc = run(&o, &s, &ts, enter_fd);
	gil_monitor_free(&ts.mon);
	session_close(&s);
	return rc;
}
