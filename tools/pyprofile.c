// SPDX-License-Identifier: Apache-2.0
/*
 * pyprofile  Profile Python processes on CPU by sampling stacks.
 *            For Linux, uses libbcc, eBPF. Embedded C.
 *
 * A perf event (software cpu-clock) samples every CPU. For each sample of a
 * Python thread, BPF walks its Python frames with offsets checked against
 * that very process, takes the kernel and native stacks, and counts the
 * combination in kernel. User space names code objects while processes
 * live, merges the stacks and prints them like bcc's profile(8).
 */
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "periodic.h"
#include "top_view.h"
#include "report/formats.h"
#include "bpf/phases.h"
#include "bpf/tool.h"
#include "bpf/wait_reasons.h"
#include "cpython/gil.h"
#include "sys/plural.h"

extern const char pyprofile_bpf_text[];
extern const char pyoffcpu_bpf_text[];

/* --wall: the frame above the off-CPU part of a stack */
#define OFFCPU_MARKER "[off-CPU]"

static const char usage_text[] =
	"Usage: pyprofile [-h] [-p PID[,PID...] [--children] | -t TID] [-F HZ] [-f] [-d]\n"
	"                 [-U | -K] [-o FILE] [--format text|folded|svg|speedscope|pprof]\n"
	"                 [--wall] [--top] [--threads] [--function] [--async]\n"
	"                 [--group-tasks name|coroutine]\n"
	"                 [--interval N] [--stack-storage-size N] [--no-native]\n"
	"                 [--startup-frames] [-v] [--version]\n"
	"                 [duration] [[--run-as USER] -- CMD [ARGS...]]\n"
	"\n"
	"Profile CPU usage of Python processes by sampling Python, native and kernel\n"
	"stacks. Without -p: every Python process on the machine, including ones that\n"
	"start during the run. With -- CMD: run CMD and profile it and its\n"
	"descendants. Runs for duration seconds, until Ctrl-C or until the targets exit.\n"
	"\n"
	"  -p, --pid PID[,PID]  profile these processes only\n"
	"      --children       and their descendants, running or started later\n"
	"  -t, --tid TID        profile this thread only\n"
	"  -F, --frequency HZ   sample frequency (default 49)\n"
	"  -f, --folded         folded output, one line per stack (for flame graphs)\n"
	"  -d, --delimited      put a delimiter between user and kernel stacks\n"
	"  -U, --user-stacks-only    show user (Python and native) stacks only\n"
	"  -K, --kernel-stacks-only  show kernel stacks only\n"
	"      --no-native      no native frames: Python (and kernel) frames only,\n"
	"                       without walking native stacks (cheaper)\n"
	"      --startup-frames keep the native frames below the outermost Python\n"
	"                       frame (the interpreter's start-up, thread bootstrap)\n"
	"  -o, --output FILE    write the report to FILE (default: stdout)\n"
	"      --format FMT     text (default), folded, svg (interactive flame graph)\n"
	"                       speedscope (JSON for speedscope.app) or pprof\n"
	"                       (gzipped protobuf for go tool pprof, Pyroscope, Parca)\n"
	"      --wall           wall-clock time: samples and the time the same threads\n"
	"                       spent off CPU, in microseconds; waits under [off-CPU],\n"
	"                       with why they waited as the leaf\n"
	"      --top            a live table of the top functions, every second\n"
	"                       (keys: 1-4 sort, p/t/a filter, q quit)\n"
	"      --threads        the process and thread at the root of each stack\n"
	"      --function       one frame per function (its def line), not per line\n"
	"      --async          root each sample that ran in an asyncio task in the task's\n"
	"                       await chain: <task NAME> frames, the awaiting tasks first\n"
	"      --group-tasks BY --async, its task frames named by the task's name\n"
	"                       (default) or coroutine: <task QUALNAME>, one root per\n"
	"                       handler of tasks made per request\n"
	"      --stack-storage-size N  room for distinct native/kernel stacks (16384)\n"
	"      --interval N     a report every N seconds, each in its own file: -o is\n"
	"                       a strftime pattern of the interval's start\n"
	"      --run-as USER    run CMD as USER (default: the user who ran sudo)\n"
	"  -v, --verbose        say how each process was recognised\n"
	"      --version        print the version\n"
	"  -h, --help           show this help\n"
	"\n"
	"examples:\n"
	"    ./pyprofile                  # profile every Python process until Ctrl-C\n"
	"    ./pyprofile 5                # profile for 5 seconds only\n"
	"    ./pyprofile -p 185 10        # profile PID 185 for 10 seconds\n"
	"    ./pyprofile -F 99 -f 10 > out.folded   # folded stacks for flamegraph.pl\n"
	"    ./pyprofile -p 185 -o cpu.svg --format svg 10   # write a flame graph\n"
	"    ./pyprofile -U -p 185        # Python and native frames, no kernel frames\n"
	"    ./pyprofile -o cpu.svg --format svg -- python3 app.py   # run and profile\n"
	"    ./pyprofile -p 185 --children 10   # a server and its workers\n"
	"    ./pyprofile --top -p 185     # a live view of the top functions\n"
	"    ./pyprofile --wall -f -p 185 10 > wall.folded   # CPU and waiting, by stack\n"
	"    ./pyprofile --async -p 185 -f 10 > tasks.folded   # CPU by asyncio task\n"
	"    ./pyprofile --format pprof --interval 60 -o 'cpu-%Y%m%dT%H%M%S.pb.gz'\n"
	"                                 # a pprof file a minute, for continuous use\n";

enum { OPT_STACK_STORAGE = CLI_OPT_OWN, OPT_ASYNC, OPT_GROUP_TASKS, OPT_WALL, OPT_TOP, OPT_INTERVAL };

struct options {
	struct cli cli;
	int freq, stack_storage;
	int interval; /* --interval: seconds per report; 0: one report */
	bool user_only, kernel_only, delimiter, tasks, wall, top;
	enum async_group group; /* --group-tasks */
};

static int own_option(int opt, const char *arg, void *ctx)
{
	struct options *o = ctx;

	switch (opt) {
	case 'F':
		if (cli_parse_small_int(arg, 1, 1000000, &o->freq) < 0) {
			fprintf(stderr, "pyprofile: invalid frequency: %s\n", arg);
			return -1;
		}
		return 0;
	case 'f':
		o->cli.format = REPORT_FOLDED;
		return 0;
	case 'd':
		o->delimiter = true;
		return 0;
	case 'U':
		o->user_only = true;
		return 0;
	case 'K':
		o->kernel_only = true;
		return 0;
	case OPT_STACK_STORAGE:
		if (cli_parse_small_int(arg, 16, 1 << 22, &o->stack_storage) < 0) {
			fprintf(stderr, "pyprofile: invalid stack storage size: %s\n", arg);
			return -1;
		}
		return 0;
	case OPT_ASYNC:
		o->tasks = true;
		return 0;
	case OPT_GROUP_TASKS:
		if (async_group_parse(arg, &o->group) < 0) {
			fprintf(stderr, "pyprofile: invalid --group-tasks: %s (name or coroutine)\n", arg);
			return -1;
		}
		o->tasks = true;
		return 0;
	case OPT_WALL:
		o->wall = true;
		return 0;
	case OPT_TOP:
		o->top = true;
		return 0;
	case OPT_INTERVAL:
		if (cli_parse_small_int(arg, 1, 1 << 24, &o->interval) < 0) {
			fprintf(stderr, "pyprofile: invalid interval: %s\n", arg);
			return -1;
		}
		return 0;
	default:
		return 1;
	}
}

static int parse_args(int argc, char **argv, struct options *o, struct tool_session *s)
{
	static const struct option longopts[] = {
		{ "frequency", required_argument, NULL, 'F' },
		{ "folded", no_argument, NULL, 'f' },
		{ "delimited", no_argument, NULL, 'd' },
		{ "user-stacks-only", no_argument, NULL, 'U' },
		{ "kernel-stacks-only", no_argument, NULL, 'K' },
		{ "stack-storage-size", required_argument, NULL, OPT_STACK_STORAGE },
		{ "async", no_argument, NULL, OPT_ASYNC },
		{ "group-tasks", required_argument, NULL, OPT_GROUP_TASKS },
		{ "wall", no_argument, NULL, OPT_WALL },
		{ "top", no_argument, NULL, OPT_TOP },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ NULL, 0, NULL, 0 },
	};

	if (cli_parse(&o->cli, s, argc, argv, "F:fdUK", longopts, own_option, o) < 0)
		return -1;
	if (o->user_only && o->kernel_only) {
		fprintf(stderr, "pyprofile: -U and -K are mutually exclusive\n");
		return -1;
	}
	if (o->top && (o->cli.output || o->cli.format != REPORT_TEXT || o->kernel_only)) {
		fprintf(stderr, "pyprofile: --top shows a table of functions: not with -o, -f, "
				"--format or -K\n");
		return -1;
	}
	/* the table has Python and native functions only */
	o->user_only |= o->top;
	/* folded, text, SVG and speedscope reports name no threads: their
	 * Python names (a read of each process) are not wanted */
	s->col.threads.unused = !s->view_threads && !o->wall && o->cli.format != REPORT_PPROF;
	if (o->interval && (o->top || o->wall)) {
		fprintf(stderr, "pyprofile: --interval writes sample reports: not with --top or "
				"--wall\n");
		return -1;
	}
	if (o->interval && periodic_check_pattern("pyprofile", o->cli.output) < 0)
		return -1;
	return 0;
}

/* --wall: how the time divides, on stderr. */
static void print_wall_summary(const struct tool_session *s, const struct report *rep)
{
	uint64_t off = 0, per = tool_filter(s).sample_weight, on_cpu;

	for (size_t i = 0; i < rep->n; i++)
		for (int k = 0; k < rep->rows[i].nframes; k++)
			if (rep->frames[rep->rows[i].frames[k]].kind == REPORT_FRAME_MARKER &&
			    strcmp(rep->frames[rep->rows[i].frames[k]].name, OFFCPU_MARKER) == 0) {
				off += rep->rows[i].value;
				break;
			}
	on_cpu = per ? (rep->total - off) / per : 0;
	fprintf(stderr,
		"pyprofile: wall clock: %llu us on CPU (%llu %s of %llu us), %llu us off CPU "
		"(%.1f%%)\n",
		(unsigned long long)(rep->total - off), (unsigned long long)on_cpu,
		plural(on_cpu, "sample", "samples"), (unsigned long long)per, (unsigned long long)off,
		rep->total ? 100.0 * (double)off / (double)rep->total : 0.0);
}

/* --top: the first line of the screen. */
static void top_title(const struct options *o, const struct tool_session *s, char *buf,
		      size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	if (!f) {
		snprintf(buf, len, "pyprofile --top");
		return;
	}
	fprintf(f, "pyprofile --top%s: ", o->wall ? " --wall" : "");
	cli_print_target(f, &o->cli, s);
	fprintf(f, ", %d Hz", o->freq);
	fclose(f);
	buf[len - 1] = '\0';
}

static void print_header(const struct options *o, const struct tool_session *s)
{
	char before[80];

	snprintf(before, sizeof(before), "Sampling at %d Hertz%s of ", o->freq,
		 o->wall ? " and tracing off-CPU time" : "");
	cli_print_header(stdout, &o->cli, s, before,
			 o->user_only	  ? " by Python + native stack"
			 : o->kernel_only ? " by kernel stack"
					  : " by Python + native + kernel stack");
}

/*
 * --wall compiles pyoffcpu's program, with the sampling program in it
 * (PYB_WALL): one set of maps holds both kinds of counts.
 */
static int compile(const struct options *o, struct tool_session *s)
{
	struct tool_cflags f = { 0 };

	tool_cflag(&f, "-DSTACK_STORAGE_SIZE=%d", o->stack_storage);
	tool_cflag(&f, "-DUSER_STACKS=%d", !o->kernel_only);
	tool_cflag(&f, "-DKERNEL_STACKS=%d", !o->user_only);
	tool_cflag(&f, "-DPYSTACKS_SIZE=65536");
	tool_cflag(&f, "-DCOUNTS_SIZE=65536");
	tool_cflag(&f, "-DPYB_PYTHON_ROOT=%d", !o->cli.startup_frames);
	if (o->tasks)
		tool_cflag(&f, "-DPYB_ASYNC=1");
	if (!o->wall)
		return tool_compile(s, pyprofile_bpf_text, &f);
	tool_cflag(&f, "-DTHREAD_FILTER=%d", (int)o->cli.tid);
	tool_cflag(&f, "-DGIL_SIZE=%d", PY_GIL_STRUCT_SIZE);
	tool_cflag(&f, "-DMIN_US=0ULL");
	tool_cflag(&f, "-DMAX_US=(1ULL << 40)");
	tool_cflag(&f, "-DWAIT_REASONS=1");
	tool_cflag(&f, "-DPYB_WALL=1");
	return tool_compile(s, pyoffcpu_bpf_text, &f);
}

/*
 * Loads the programs, finds the Python processes and starts sampling
 * (--wall: and the off-CPU programs, system calls first, see pyoffcpu).
 * Returns the sampling program, or -1 after printing why.
 */
static int start(struct options *o, struct tool_session *s, struct wait_reasons *why)
{
	struct tool_sched_progs offcpu;
	int sample_fd = tool_load(s, "on_sample", BPF_PROG_TYPE_PERF_EVENT);

	if (sample_fd < 0)
		return -1;
	if (o->wall && (tool_load_sched(s, &offcpu) < 0 || wait_reasons_start(why, s) < 0))
		return -1;
	if (cli_native_chain(&o->cli, s, !o->kernel_only, "native_walk_sample",
			     BPF_PROG_TYPE_PERF_EVENT) < 0 ||
	    (o->wall && cli_native_chain(&o->cli, s, !o->kernel_only, "native_walk_switch",
					 BPF_PROG_TYPE_TRACEPOINT) < 0))
		return -1;
	session_install_signals();
	tool_want_gc_flag(s); /* the [gc] frame */
	if (session_start_discovery(s) < 0)
		return -1;
	if ((o->wall && tool_attach_sched(s, &offcpu, true) < 0) ||
	    session_attach_sampling(s, sample_fd, &o->freq) < 0)
		return -1;
	return sample_fd;
}

/* Which counts the report shows; --wall: one unit, the microsecond, for
 * samples and waits alike. */
static void set_filter(const struct options *o, struct tool_session *s,
		       struct async_tasks *tasks, struct wait_reasons *why)
{
	struct stack_filter f = cli_stack_filter(&o->cli, !o->kernel_only, !o->user_only,
						 o->tasks ? tasks : NULL);

	if (o->wall) {
		f.include_runnable = true;
		f.leaf = wait_reasons_leaf;
		f.leaf_ctx = why;
		f.sample_weight = (session_sample_period_ns(s) + 500) / 1000;
		f.offcpu_marker = OFFCPU_MARKER;
	}
	tool_set_filter(s, &f);
}

/* The session's summary lines: what BPF counted is a sample, or with
 * --wall a sample or a switch off CPU. */
static void print_summary(const struct options *o, struct tool_session *s)
{
	if (o->wall)
		session_print_summary(s, "sample or switch off CPU", "samples and switches off CPU");
	else
		session_print_summary(s, "sample", "samples");
}

/* --top: the unnamed native time of the whole run, from a last report. */
static void print_unnamed(const struct options *o, struct tool_session *s)
{
	struct report rep;

	report_init(&rep, false);
	if (session_collect(s, &rep) == 0)
		session_print_unnamed(s, &rep, o->wall ? "us" : "samples");
	report_free(&rep);
}

/* --top: the live table until the run ends. */
static int run_top(const struct options *o, struct tool_session *s)
{
	struct top_view top;
	char title[128];

	top_title(o, s, title, sizeof(title));
	top_view_start(&top, s, o->wall ? 1e-6 : (double)session_sample_period_ns(s) / 1e9, title);
	session_run(s, o->cli.duration);
	top_view_stop(&top);
	print_summary(o, s);
	print_unnamed(o, s);
	return cli_exit_status(&o->cli, s, 0);
}

/* --interval: the last interval, cut short by the end of the run. */
static int end_intervals(const struct options *o, struct tool_session *s,
			 struct periodic_output *periodic)
{
	int rc = periodic_write(s, periodic) < 0 || periodic->failed;

	session_print_summary(s, "sample", "samples");
	fprintf(stderr, "pyprofile: %u %s written (%s)\n", periodic->written,
		plural(periodic->written, "report", "reports"), o->cli.output);
	return cli_exit_status(&o->cli, s, rc);
}

/* One report of the whole run. */
static int write_report(const struct options *o, struct tool_session *s, int sample_fd)
{
	struct report rep;
	int rc;

	if (o->cli.format == REPORT_TEXT && !o->cli.output)
		printf("\n");
	report_init(&rep, o->delimiter);
	rep.period_ns = session_sample_period_ns(s);
	session_collect(s, &rep);
	rc = report_write(&rep, o->cli.format, o->cli.out, o->wall ? "us" : "samples",
			  o->wall ? "pyprofile --wall" : "pyprofile") < 0;
	print_summary(o, s);
	session_print_unnamed(s, &rep, o->wall ? "us" : "samples");
	if (o->wall)
		print_wall_summary(s, &rep);
	if (o->cli.verbose) {
		session_print_bpf_stats(s, sample_fd, "sampling", session_stat(s, PYB_STAT_SAMPLES),
					"Python sample");
		phases_print(&s->bpf, "pyprofile", "Python sample");
	}
	report_free(&rep);
	return cli_exit_status(&o->cli, s, rc);
}

/* The run, once sampling has started, and what it reports. */
static int run(const struct options *o, struct tool_session *s, int sample_fd)
{
	struct periodic_output periodic = {
		.tool = "pyprofile", .unit = "samples", .pattern = o->cli.output,
		.format = o->cli.format, .delimiter = o->delimiter,
		.period_ns = session_sample_period_ns(s),
	};

	if (o->interval)
		periodic_start(s, &periodic, o->interval);
	if (session_start_command(s) < 0)
		return session_end_command(s); /* 127: not found, as shells say */
	if (o->top)
		return run_top(o, s);
	session_run(s, o->cli.duration);
	if (o->interval)
		return end_intervals(o, s, &periodic);
	return write_report(o, s, sample_fd);
}

int main(int argc, char **argv)
{
	struct options o = {
		.cli = { .tool = "pyprofile", .usage = usage_text, .format = REPORT_TEXT },
		.freq = 49, .stack_storage = 16384,
	};
	struct tool_session s = { .tool = "pyprofile" };
	struct async_tasks tasks;
	struct wait_reasons why = { 0 };
	int sample_fd, rc = 1;

	if (parse_args(argc, argv, &o, &s) < 0)
		return 2;
	if (o.cli.ebpf) {
		fputs(o.wall ? pyoffcpu_bpf_text : pyprofile_bpf_text, stdout);
		return 0;
	}
	if (cli_prepare_targets(&o.cli, &s) < 0 || compile(&o, &s) < 0)
		return 1;
	async_tasks_init(&tasks, o.tasks ? tool_table(&s, "task_ids") : -1,
			 o.tasks ? tool_table(&s, "task_src") : -1);
	tasks.group = o.group;
	tool_set_tasks(&s, o.tasks ? &tasks : NULL);
	sample_fd = start(&o, &s, &why);
	/* --interval: -o names the files of the intervals, not one file */
	if (sample_fd >= 0 && (o.interval || cli_open_output(&o.cli) == 0)) {
		/* the header goes to stdout unless stdout carries a non-text report */
		if ((o.cli.format == REPORT_TEXT || o.cli.output) && !o.top)
			print_header(&o, &s);
		set_filter(&o, &s, &tasks, &why);
		rc = run(&o, &s, sample_fd);
	}
	if (cli_close_output(&o.cli) < 0)
		rc = 1;
	session_close(&s);
	async_tasks_free(&tasks);
	wait_reasons_free(&why);
	return rc;
}
