// SPDX-License-Identifier: Apache-2.0
/*
 * pyoffcpu  Summarize off-CPU time of Python threads by Python, native and
 *           kernel stack. For Linux, uses libbcc, eBPF. Embedded C.
 *
 * sched:sched_switch gives both ends of every off-CPU interval: when a
 * Python thread leaves the CPU, BPF walks its Python stack (the stack
 * cannot change until it runs again) and notes the time; when it is
 * switched back in, the interval is charged to those stacks in kernel.
 * Time spent runnable (preempted, or woken but waiting for a CPU:
 * sched:sched_waking ends the blocked part) is kept apart from
 * time spent blocked. Same walker, naming and output as pyprofile.
 */
#include <limits.h>
#include <linux/bpf.h>
#include <stdio.h>

#include "cli.h"
#include "report/formats.h"
#include "report/row_limit.h"
#include "report/summary.h"
#include "report/units.h"
#include "bpf/open_intervals.h"
#include "bpf/phases.h"
#include "bpf/stack_hist.h"
#include "bpf/tool.h"
#include "sys/clock.h"
#include "sys/plural.h"
#include "bpf/wait_reasons.h"
#include "cpython/gil.h"

extern const char pyoffcpu_bpf_text[];

static const char usage_text[] =
	"Usage: pyoffcpu [-h] [-p PID[,PID...] [--children] | -t TID] [-u] [-U | -K]\n"
	"                [-m MIN_US] [-M MAX_US] [-R] [-f] [-d] [-H] [--top N | --all]\n"
	"                [-o FILE] [--format text|folded|svg|speedscope|pprof]\n"
	"                [--no-reasons] [--threads] [--function] [--stack-storage-size N]\n"
	"                [--async] [--group-tasks name|coroutine] [--no-native]\n"
	"                [--startup-frames] [-v] [--version] [duration]\n"
	"                [[--run-as USER] -- CMD [ARGS...]]\n"
	"\n"
	"Summarize the time Python threads spend off CPU by Python, native and kernel\n"
	"stack, in microseconds, and why: each stack ends with the reason ([sleep],\n"
	"[lock or condition wait], [GIL wait], [socket I/O], [pipe I/O], [poll/select/\n"
	"epoll], [disk I/O], [page fault]...); the text report ends with each thread's\n"
	"time by reason. Threads still blocked when the run ends (since before it\n"
	"began, too) are charged up to the end, their stacks ending in\n"
	"" STILL_BLOCKED_MARKER ". Without -p: every Python process on the machine,\n"
	"including ones that start during the run. With -- CMD: run CMD and trace it\n"
	"and its descendants. Runs for duration seconds, until Ctrl-C or until the\n"
	"targets exit.\n"
	"\n"
	"  -p, --pid PID[,PID]  trace these processes only\n"
	"      --children       and their descendants, running or started later\n"
	"  -t, --tid TID        trace this thread only\n"
	"  -u, --user-threads-only  user threads only (always so: kernel threads run\n"
	"                       no Python; accepted for offcputime users)\n"
	"  -U, --user-stacks-only    show user (Python and native) stacks only\n"
	"  -K, --kernel-stacks-only  show kernel stacks only\n"
	"      --no-native      no native frames: Python (and kernel) frames only,\n"
	"                       without walking native stacks (cheaper)\n"
	"      --startup-frames keep the native frames below the outermost Python\n"
	"                       frame (the interpreter's start-up, thread bootstrap)\n"
	"  -m, --min-block-time US   count only intervals of at least US microseconds\n"
	"  -M, --max-block-time US   count only intervals of at most US microseconds\n"
	"  -R, --runnable       also show time runnable but waiting for a CPU, as\n"
	"                       stacks ending in " RUNNABLE_MARKER "\n"
	"  -f, --folded         folded output, weighted in microseconds\n"
	"  -d, --delimited      put a delimiter between user and kernel stacks\n"
	"  -H, --histogram      print log2 histograms of blocked durations for the\n"
	"                       stacks that blocked longest instead of stacks\n"
	"      --top N          how many stacks text output shows, most time first\n"
	"                       (default 20; -H: 10). Other formats: all stacks\n"
	"      --all            every stack in text output (--top 0)\n"
	"  -o, --output FILE    write the report to FILE (default: stdout)\n"
	"      --format FMT     text (default), folded, svg (interactive flame graph)\n"
	"                       speedscope (JSON for speedscope.app) or pprof\n"
	"                       (gzipped protobuf for go tool pprof, Pyroscope, Parca)\n"
	"      --no-reasons     do not tell why threads waited (no system call probe:\n"
	"                       other processes' system calls cost nothing more)\n"
	"      --threads        the process and thread at the root of each stack\n"
	"      --function       one frame per function (its def line), not per line\n"
	"      --stack-storage-size N  room for distinct native/kernel stacks (16384)\n"
	"      --async          root time a thread blocked inside an asyncio task (its\n"
	"                       event loop blocked with it) in the task's await chain\n"
	"      --group-tasks BY --async, its task frames named by the task's name\n"
	"                       (default) or coroutine: <task QUALNAME>, one root per\n"
	"                       handler of tasks made per request\n"
	"      --run-as USER    run CMD as USER (default: the user who ran sudo)\n"
	"  -v, --verbose        say how each process was recognised, BPF run time\n"
	"      --version        print the version\n"
	"  -h, --help           show this help\n"
	"\n"
	"examples:\n"
	"    ./pyoffcpu                   # trace every Python process until Ctrl-C\n"
	"    ./pyoffcpu 5                 # trace for 5 seconds only\n"
	"    ./pyoffcpu -p 185 10         # trace PID 185 for 10 seconds\n"
	"    ./pyoffcpu -m 1000 -p 185    # only intervals of 1 ms or more\n"
	"    ./pyoffcpu -f -p 185 10 > out.folded   # folded stacks for flamegraph.pl\n"
	"    ./pyoffcpu -p 185 -o off.svg --format svg 10   # off-CPU flame graph\n"
	"    ./pyoffcpu -H -p 185 10      # how long each blocking call took\n"
	"    ./pyoffcpu -R -p 185 10      # include time waiting for a CPU\n"
	"    ./pyoffcpu -U -- python3 app.py   # run app.py, trace it until it exits\n"
	"    ./pyoffcpu --threads -U -p 185 10   # split by process and thread\n"
	"    ./pyoffcpu --async -p 185 10 # which asyncio task blocked the event loop\n";

enum { OPT_STACK_STORAGE = CLI_OPT_OWN, OPT_TOP, OPT_ASYNC, OPT_GROUP_TASKS, OPT_ALL, OPT_NO_REASONS };

struct options {
	struct cli cli;
	long long min_us, max_us;
	int stack_storage, top;
	bool user_only, kernel_only, delimiter, runnable, histogram, tasks, no_reasons;
	enum async_group group; /* --group-tasks */
};

static int own_option(int opt, const char *arg, void *ctx)
{
	struct options *o = ctx;

	switch (opt) {
	case 'u':
		return 0;
	case 'k':
		fprintf(stderr, "pyoffcpu: kernel threads run no Python code: -k does not apply "
				"(use bcc's offcputime -k)\n");
		return -1;
	case 'U':
		o->user_only = true;
		return 0;
	case 'K':
		o->kernel_only = true;
		return 0;
	case 'm':
	case 'M':
		if (cli_parse_int(arg, 0, (1LL << 40), opt == 'm' ? &o->min_us : &o->max_us) < 0) {
			fprintf(stderr, "pyoffcpu: invalid time in microseconds: %s\n", arg);
			return -1;
		}
		return 0;
	case 'R':
		o->runnable = true;
		return 0;
	case 'f':
		o->cli.format = REPORT_FOLDED;
		return 0;
	case 'd':
		o->delimiter = true;
		return 0;
	case 'H':
		o->histogram = true;
		return 0;
	case OPT_NO_REASONS:
		o->no_reasons = true;
		return 0;
	case OPT_TOP:
		if (cli_parse_small_int(arg, 0, 1000000, &o->top) < 0) {
			fprintf(stderr, "pyoffcpu: invalid --top: %s\n", arg);
			return -1;
		}
		return 0;
	case OPT_STACK_STORAGE:
		if (cli_parse_small_int(arg, 16, 1 << 22, &o->stack_storage) < 0) {
			fprintf(stderr, "pyoffcpu: invalid stack storage size: %s\n", arg);
			return -1;
		}
		return 0;
	case OPT_ASYNC:
		o->tasks = true;
		return 0;
	case OPT_GROUP_TASKS:
		if (async_group_parse(arg, &o->group) < 0) {
			fprintf(stderr, "pyoffcpu: invalid --group-tasks: %s (name or coroutine)\n", arg);
			return -1;
		}
		o->tasks = true;
		return 0;
	case OPT_ALL:
		o->top = 0;
		return 0;
	default:
		return 1;
	}
}

static int parse_args(int argc, char **argv, struct options *o, struct tool_session *s)
{
	static const struct option longopts[] = {
		{ "user-threads-only", no_argument, NULL, 'u' },
		{ "kernel-threads-only", no_argument, NULL, 'k' },
		{ "user-stacks-only", no_argument, NULL, 'U' },
		{ "kernel-stacks-only", no_argument, NULL, 'K' },
		{ "min-block-time", required_argument, NULL, 'm' },
		{ "max-block-time", required_argument, NULL, 'M' },
		{ "runnable", no_argument, NULL, 'R' },
		{ "folded", no_argument, NULL, 'f' },
		{ "delimited", no_argument, NULL, 'd' },
		{ "histogram", no_argument, NULL, 'H' },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "no-reasons", no_argument, NULL, OPT_NO_REASONS },
		{ "stack-storage-size", required_argument, NULL, OPT_STACK_STORAGE },
		{ "async", no_argument, NULL, OPT_ASYNC },
		{ "group-tasks", required_argument, NULL, OPT_GROUP_TASKS },
		{ NULL, 0, NULL, 0 },
	};

	if (cli_parse(&o->cli, s, argc, argv, "ukUKm:M:RfdH", longopts, own_option, o) < 0)
		return -1;
	if (o->user_only && o->kernel_only) {
		fprintf(stderr, "pyoffcpu: -U and -K are mutually exclusive\n");
		return -1;
	}
	if (o->min_us > o->max_us) {
		fprintf(stderr, "pyoffcpu: -m %lld is above -M %lld\n", o->min_us, o->max_us);
		return -1;
	}
	return 0;
}

static void print_header(const struct options *o, const struct tool_session *s)
{
	cli_print_header(stdout, &o->cli, s, "Tracing off-CPU time (us) of ",
			 o->histogram	  ? " as histograms per Python stack"
			 : o->user_only	  ? " by Python + native stack"
			 : o->kernel_only ? " by kernel stack"
					  : " by Python + native + kernel stack");
}

static int compile(struct tool_session *s, const struct options *o)
{
	struct tool_cflags f = { 0 };

	tool_cflag(&f, "-DSTACK_STORAGE_SIZE=%d", o->stack_storage);
	tool_cflag(&f, "-DUSER_STACKS=%d", !o->kernel_only);
	tool_cflag(&f, "-DKERNEL_STACKS=%d", !o->user_only);
	tool_cflag(&f, "-DMIN_US=%lldULL", o->min_us);
	tool_cflag(&f, "-DMAX_US=%lldULL", o->max_us);
	tool_cflag(&f, "-DTHREAD_FILTER=%d", (int)o->cli.tid);
	tool_cflag(&f, "-DGIL_SIZE=%d", PY_GIL_STRUCT_SIZE);
	tool_cflag(&f, "-DWAIT_REASONS=%d", !o->no_reasons);
	tool_cflag(&f, "-DPYSTACKS_SIZE=65536");
	tool_cflag(&f, "-DCOUNTS_SIZE=65536");
	tool_cflag(&f, "-DPYB_PYTHON_ROOT=%d", !o->cli.startup_frames);
	if (o->tasks)
		tool_cflag(&f, "-DPYB_ASYNC=1");
	return tool_compile(s, pyoffcpu_bpf_text, &f);
}

/* What the stacks do not show: the other kind of off-CPU time, and what
 * was still open at the end. */
static void print_time_summary(const struct options *o, const struct report *rep,
			       struct tool_session *s, const struct open_intervals *oi)
{
	uint64_t blocked = rep->total - (o->runnable ? rep->runnable_total : 0);
	uint64_t filtered = session_stat(s, PYB_STAT_FILTERED);
	char b[48], r[48], open[48];

	report_format_us(blocked, b, sizeof(b));
	report_format_us(rep->runnable_total, r, sizeof(r));
	fprintf(stderr, "pyoffcpu: %s blocked; %s runnable waiting for a CPU (%s)", b, r,
		o->runnable ? "shown" : "not shown: -R shows it");
	if (o->min_us || o->max_us != (1LL << 40))
		fprintf(stderr, "; %llu %s outside -m/-M not counted", (unsigned long long)filtered,
			plural(filtered, "interval", "intervals"));
	fputc('\n', stderr);
	if (oi->open_threads) {
		char since[48] = "";

		report_format_us(oi->open_us, open, sizeof(open));
		if (oi->open_since_start)
			snprintf(since, sizeof(since), " (%zu since before it began)",
				 oi->open_since_start);
		fprintf(stderr,
			"pyoffcpu: %zu %s still blocked when the run ended%s: %s of the "
			"blocked time, counted up to the end, in stacks ending in %s\n",
			oi->open_threads, plural(oi->open_threads, "thread was", "threads were"), since,
			open,
			STILL_BLOCKED_MARKER);
	}
	if (oi->counts_lost)
		fprintf(stderr, "pyoffcpu: %zu %s open at the end not counted (maps full)\n",
			oi->counts_lost, plural(oi->counts_lost, "interval", "intervals"));
}

/* Threads already blocked: BPF will see no switch out of them. The run
 * starts as they are read. */
static void seed_open_intervals(struct tool_session *s, const struct options *o,
				struct open_intervals *oi)
{
	size_t seeded;

	uint64_t start_ns;

	open_intervals_init(oi, tool_table(s, "start"), tool_table(s, "counts"),
			    tool_table(s, "pystacks"));
	oi->only_tid = o->cli.tid;
	oi->min_us = (uint64_t)o->min_us;
	oi->max_us = (uint64_t)o->max_us;
	start_ns = tool_start_now(s);
	seeded = open_intervals_seed(oi, tool_registry(s), start_ns);
	if (seeded)
		tool_name_stacks(s); /* named while alive */
	if (o->cli.verbose)
		fprintf(stderr, "pyoffcpu: %zu %s off CPU as the run began (read in %.1f ms)\n",
			seeded, plural(seeded, "thread", "threads"),
			(double)(monotonic_ns() - start_ns) / 1e6);
}

/*
 * Loads the programs, finds the Python processes and attaches (system
 * calls first: a thread's call is known when it blocks). Returns 0, or -1
 * after printing why.
 */
static int start(const struct options *o, struct tool_session *s, struct wait_reasons *why,
		 struct tool_sched_progs *progs)
{
	if (tool_load_sched(s, progs) < 0 ||
	    cli_native_chain(&o->cli, s, !o->kernel_only, "native_walk_switch",
			     BPF_PROG_TYPE_TRACEPOINT) < 0)
		return -1;
	session_install_signals();
	if ((!o->no_reasons && wait_reasons_start(why, s) < 0) || session_start_discovery(s) < 0)
		return -1;
	return tool_attach_sched(s, progs, !o->no_reasons);
}

static void set_filter(const struct options *o, struct tool_session *s,
		       struct async_tasks *tasks, struct wait_reasons *why)
{
	struct stack_filter f = cli_stack_filter(&o->cli, !o->kernel_only, !o->user_only,
						 o->tasks ? tasks : NULL);

	f.include_runnable = o->runnable;
	f.leaf = o->no_reasons ? NULL : wait_reasons_leaf;
	f.leaf_ctx = why;
	tool_set_filter(s, &f);
}

/* The report in the form asked for: histograms, text, or a format. */
static int write_report(const struct options *o, struct tool_session *s,
			const struct report *rep, struct wait_reasons *why)
{
	if (o->histogram) {
		struct stack_hist_maps maps = {
			.hists_fd = tool_table(s, "hists"),
			.counts_fd = tool_table(s, "counts"),
			.pystacks_fd = tool_table(s, "pystacks"),
		};

		return stack_hist_print(tool_collector(s), tool_registry(s), &maps, PYB_KIND_BLOCKED,
					o->top < 0 ? 10 : o->top ? o->top : INT_MAX, "us",
					o->cli.out) < 0;
	}
	if (o->cli.format == REPORT_TEXT) {
		report_print_top(rep, (size_t)(o->top < 0 ? 20 : o->top), "less time",
				 report_format_us, o->cli.out);
		if (!o->no_reasons) {
			wait_reasons_print_threads(why, tool_table(s, "counts"), o->cli.tid,
						   &s->col.threads, &s->reg, "us", o->cli.out);
			fprintf(o->cli.out, "\n");
		}
		report_print_summary(rep, "us", NULL, o->top ? SUMMARY_PROCS : 0, o->cli.out);
		return 0;
	}
	return report_write(rep, o->cli.format, o->cli.out, "us", "pyoffcpu") < 0;
}

/* The run, once attached, and what it reports. */
static int run(const struct options *o, struct tool_session *s, struct open_intervals *oi,
	       struct wait_reasons *why, const struct tool_sched_progs *progs)
{
	struct report rep;
	int rc;

	if (session_start_command(s) < 0)
		return session_end_command(s); /* 127: not found, as shells say */
	session_run(s, o->cli.duration);
	open_intervals_charge(oi, tool_end_ns(s));
	if (o->cli.format == REPORT_TEXT && !o->cli.output)
		printf("\n");
	report_init(&rep, o->delimiter);
	session_collect(s, &rep);
	rc = write_report(o, s, &rep, why);
	session_print_summary(s, "switch off CPU", "switches off CPU");
	session_print_unnamed(s, &rep, "us");
	print_time_summary(o, &rep, s, oi);
	if (o->cli.verbose)
		session_print_bpf_stats(s, progs->switched, "sched_switch",
					session_stat(s, PYB_STAT_SAMPLES), "Python switch");
	if (o->cli.verbose && !o->no_reasons)
		session_print_bpf_stats(s, progs->fd_forget[0], "sys_enter_close", 0, NULL);
	if (o->cli.verbose)
		phases_print(&s->bpf, "pyoffcpu", "Python switch");
	report_free(&rep);
	return cli_exit_status(&o->cli, s, rc);
}

int main(int argc, char **argv)
{
	struct options o = {
		.cli = { .tool = "pyoffcpu", .usage = usage_text, .format = REPORT_TEXT },
		.max_us = 1LL << 40, .stack_storage = 16384, .top = -1,
	};
	struct tool_session s = { .tool = "pyoffcpu" };
	struct open_intervals oi = { 0 };
	struct async_tasks tasks;
	struct wait_reasons why = { 0 };
	struct tool_sched_progs progs;
	int rc = 1;

	if (parse_args(argc, argv, &o, &s) < 0)
		return 2;
	if (o.cli.ebpf) {
		fputs(pyoffcpu_bpf_text, stdout);
		return 0;
	}
	if (cli_prepare_targets(&o.cli, &s) < 0 || compile(&s, &o) < 0)
		return 1;
	async_tasks_init(&tasks, o.tasks ? tool_table(&s, "task_ids") : -1,
			 o.tasks ? tool_table(&s, "task_src") : -1);
	tasks.group = o.group;
	tool_set_tasks(&s, o.tasks ? &tasks : NULL);
	if (start(&o, &s, &why, &progs) == 0 && cli_open_output(&o.cli) == 0) {
		set_filter(&o, &s, &tasks, &why);
		seed_open_intervals(&s, &o, &oi);
		if ((o.cli.format == REPORT_TEXT && !o.histogram) || o.cli.output || o.histogram)
			print_header(&o, &s);
		rc = run(&o, &s, &oi, &why, &progs);
	}
	if (cli_close_output(&o.cli) < 0)
		rc = 1;
	open_intervals_free(&oi);
	session_close(&s);
	async_tasks_free(&tasks);
	wait_reasons_free(&why);
	return rc;
}
