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

#include "cli.h"
#include "periodic.h"
#include "report/formats.h"
#include "bpf/session.h"

extern const char pyprofile_bpf_text[];

static const char usage_text[] =
	"Usage: pyprofile [-h] [-p PID[,PID...] | -t TID] [-F HZ] [-f] [-d] [-U | -K]\n"
	"                 [-o FILE] [--format text|folded|svg|speedscope|pprof]\n"
	"                 [--stack-storage-size N] [--async] [--interval N] [-v]\n"
	"                 [--version] [duration]\n"
	"\n"
	"Profile CPU usage of Python processes by sampling Python, native and kernel\n"
	"stacks. Without -p: every Python process on the machine, including ones that\n"
	"start during the run. Runs for duration seconds, or until Ctrl-C.\n"
	"\n"
	"  -p, --pid PID[,PID]  profile these processes only\n"
	"  -t, --tid TID        profile this thread only\n"
	"  -F, --frequency HZ   sample frequency (default 49)\n"
	"  -f, --folded         folded output, one line per stack (for flame graphs)\n"
	"  -d, --delimited      put a delimiter between user and kernel stacks\n"
	"  -U, --user-stacks-only    show user (Python and native) stacks only\n"
	"  -K, --kernel-stacks-only  show kernel stacks only\n"
	"  -o, --output FILE    write the report to FILE (default: stdout)\n"
	"      --format FMT     text (default), folded, svg (interactive flame graph)\n"
	"                       speedscope (JSON for speedscope.app) or pprof\n"
	"                       (gzipped protobuf for go tool pprof, Pyroscope, Parca)\n"
	"      --stack-storage-size N  room for distinct native/kernel stacks (16384)\n"
	"      --async          root each sample that ran in an asyncio task in the task's\n"
	"                       await chain: <task NAME> frames, the awaiting tasks first\n"
	"      --interval N     a report every N seconds, each in its own file: -o is\n"
	"                       a strftime pattern of the interval's start\n"
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
	"    ./pyprofile --async -p 185 -f 10 > tasks.folded   # CPU by asyncio task\n"
	"    ./pyprofile --format pprof --interval 60 -o 'cpu-%Y%m%dT%H%M%S.pb.gz'\n"
	"                                 # a pprof file a minute, for continuous use\n";

enum { OPT_STACK_STORAGE = CLI_OPT_OWN, OPT_ASYNC, OPT_INTERVAL };

struct options {
	struct cli cli;
	int freq, stack_storage;
	int interval; /* --interval: seconds per report; 0: one report */
	bool user_only, kernel_only, delimiter, tasks;
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
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ NULL, 0, NULL, 0 },
	};

	if (cli_parse(&o->cli, s, argc, argv, "F:fdUK", longopts, own_option, o) < 0)
		return -1;
	if (o->user_only && o->kernel_only) {
		fprintf(stderr, "pyprofile: -U and -K are mutually exclusive\n");
		return -1;
	}
	if (o->interval && periodic_check_pattern("pyprofile", o->cli.output) < 0)
		return -1;
	return 0;
}

static void print_header(const struct options *o, const struct tool_session *s)
{
	char before[48];

	snprintf(before, sizeof(before), "Sampling at %d Hertz of ", o->freq);
	cli_print_header(stdout, &o->cli, s, before,
			 o->user_only	  ? " by Python + native stack"
			 : o->kernel_only ? " by kernel stack"
					  : " by Python + native + kernel stack");
}

int main(int argc, char **argv)
{
	struct options o = {
		.cli = { .tool = "pyprofile", .usage = usage_text, .format = REPORT_TEXT },
		.freq = 49, .stack_storage = 16384,
	};
	struct tool_session s = { .tool = "pyprofile" };
	struct report rep;
	struct async_tasks tasks;
	struct periodic_output periodic;
	char d_stack[48], d_user[24], d_kernel[24];
	const char *cflags[8];
	int nflags = 0, sample_fd, rc = 1;

	if (parse_args(argc, argv, &o, &s) < 0)
		return 2;
	if (o.cli.ebpf) {
		fputs(pyprofile_bpf_text, stdout);
		return 0;
	}
	if (cli_prepare_targets(&o.cli, &s) < 0)
		return 1;
	snprintf(d_stack, sizeof(d_stack), "-DSTACK_STORAGE_SIZE=%d", o.stack_storage);
	snprintf(d_user, sizeof(d_user), "-DUSER_STACKS=%d", !o.kernel_only);
	snprintf(d_kernel, sizeof(d_kernel), "-DKERNEL_STACKS=%d", !o.user_only);
	cflags[nflags++] = d_stack;
	cflags[nflags++] = d_user;
	cflags[nflags++] = d_kernel;
	cflags[nflags++] = "-DPYSTACKS_SIZE=65536";
	cflags[nflags++] = "-DCOUNTS_SIZE=65536";
	if (o.tasks)
		cflags[nflags++] = "-DPYB_ASYNC=1";
	s.verbose = o.cli.verbose;
	if (session_compile(&s, pyprofile_bpf_text, cflags, nflags) < 0)
		return 1;
	async_tasks_init(&tasks, o.tasks ? bpfmod_table_fd(&s.bpf, "task_ids") : -1);
	if (o.tasks)
		s.tasks = &tasks;
	s.pystacks_fd = bpfmod_table_fd(&s.bpf, "pystacks");
	s.counts_fd = bpfmod_table_fd(&s.bpf, "counts");
	s.stacks_fd = bpfmod_table_fd(&s.bpf, "stack_traces");
	s.stats_fd = bpfmod_table_fd(&s.bpf, "stats");
	sample_fd = bpfmod_load(&s.bpf, "on_sample", BPF_PROG_TYPE_PERF_EVENT);
	if (sample_fd < 0) {
		fprintf(stderr, "pyprofile: %s\n", s.bpf.err);
		goto out;
	}
	session_install_signals();
	if (session_start_discovery(&s) < 0)
		goto out;
	if (session_attach_sampling(&s, sample_fd, &o.freq) < 0)
		goto out;
	/* --interval: -o names the files of the intervals, not one file */
	if (!o.interval && cli_open_output(&o.cli) < 0)
		goto out;
	/* the header goes to stdout unless stdout carries a non-text report */
	if (o.cli.format == REPORT_TEXT || o.cli.output)
		print_header(&o, &s);
	s.filter = (struct stack_filter){ .user_stacks = !o.kernel_only,
					  .kernel_stacks = !o.user_only,
					  .only_tid = o.cli.tid,
					  .only_kind = -1,
					  .tasks = s.tasks };
	periodic = (struct periodic_output){ .tool = "pyprofile", .unit = "samples",
					     .pattern = o.cli.output, .format = o.cli.format,
					     .delimiter = o.delimiter,
					     .period_ns = session_sample_period_ns(&s) };
	if (o.interval)
		periodic_start(&s, &periodic, o.interval);
	if (session_start_command(&s) < 0) {
		rc = session_end_command(&s); /* 127: not found, as shells say */
		goto out;
	}
	session_run(&s, o.cli.duration);
	if (o.interval) {
		/* the last interval, cut short by the end of the run */
		rc = periodic_write(&s, &periodic) < 0 || periodic.failed;
		session_print_summary(&s, "samples");
		fprintf(stderr, "pyprofile: %u report%s written (%s)\n", periodic.written,
			periodic.written == 1 ? "" : "s", o.cli.output);
		rc = cli_exit_status(&o.cli, &s, rc);
		goto out;
	}
	if (o.cli.format == REPORT_TEXT && !o.cli.output)
		printf("\n");
	report_init(&rep, o.delimiter);
	rep.period_ns = session_sample_period_ns(&s);
	session_collect(&s, &rep);
	rc = report_write(&rep, o.cli.format, o.cli.out, "samples", "pyprofile") < 0;
	session_print_summary(&s, "samples");
	if (o.cli.verbose)
		session_print_bpf_stats(&s, sample_fd, "sampling", session_stat(&s, PYB_STAT_SAMPLES),
					"Python sample");
	report_free(&rep);
	rc = cli_exit_status(&o.cli, &s, rc);
out:
	if (cli_close_output(&o.cli) < 0)
		rc = 1;
	session_close(&s);
	async_tasks_free(&tasks);
	return rc;
}
