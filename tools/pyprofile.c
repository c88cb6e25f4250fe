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
#include <errno.h>
#include <getopt.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report/formats.h"
#include "bpf/session.h"

extern const char pyprofile_bpf_text[];

static const char usage_text[] =
	"Usage: pyprofile [-h] [-p PID[,PID...] | -t TID] [-F HZ] [-f] [-d] [-U | -K]\n"
	"                 [-o FILE] [--format text|folded|svg|speedscope|pprof]\n"
	"                 [--stack-storage-size N] [-v] [--version] [duration]\n"
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
	"    ./pyprofile -U -p 185        # Python and native frames, no kernel frames\n";

enum { OPT_FORMAT = 256, OPT_STACK_STORAGE, OPT_VERSION, OPT_EBPF };

struct options {
	int freq, duration, stack_storage;
	bool user_only, kernel_only, delimiter, verbose, ebpf;
	enum report_format format;
	const char *output;
	pid_t tid;
};

static int parse_int(const char *s, int min, int max, int *out)
{
	long long v;

	if (cli_parse_int(s, min, max, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o, struct tool_session *s)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "folded", no_argument, NULL, 'f' },
		{ "delimited", no_argument, NULL, 'd' },
		{ "user-stacks-only", no_argument, NULL, 'U' },
		{ "kernel-stacks-only", no_argument, NULL, 'K' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "stack-storage-size", required_argument, NULL, OPT_STACK_STORAGE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "ebpf", no_argument, NULL, OPT_EBPF },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:t:F:fdUKo:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_pid_list(optarg, s->pids, SESSION_MAX_PIDS, &s->npids) < 0) {
				fprintf(stderr, "pyprofile: invalid PID list: %s\n", optarg);
				return -1;
			}
			break;
		case 't':
			if (cli_parse_pid(optarg, &o->tid) < 0) {
				fprintf(stderr, "pyprofile: invalid TID: %s\n", optarg);
				return -1;
			}
			break;
		case 'F':
			if (parse_int(optarg, 1, 1000000, &o->freq) < 0) {
				fprintf(stderr, "pyprofile: invalid frequency: %s\n", optarg);
				return -1;
			}
			break;
		case 'f':
			o->format = REPORT_FOLDED;
			break;
		case 'd':
			o->delimiter = true;
			break;
		case 'U':
			o->user_only = true;
			break;
		case 'K':
			o->kernel_only = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			if (report_format_parse(optarg, &o->format) < 0) {
				fprintf(stderr, "pyprofile: unknown format: %s\n", optarg);
				return -1;
			}
			break;
		case OPT_STACK_STORAGE:
			if (parse_int(optarg, 16, 1 << 22, &o->stack_storage) < 0) {
				fprintf(stderr, "pyprofile: invalid stack storage size: %s\n", optarg);
				return -1;
			}
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case OPT_VERSION:
			cli_print_version("pyprofile");
			exit(0);
		case OPT_EBPF:
			o->ebpf = true;
			break;
		default:
			fputs(usage_text, stderr);
			return -1;
		}
	}
	if (optind < argc && parse_int(argv[optind++], 1, 1 << 30, &o->duration) < 0) {
		fprintf(stderr, "pyprofile: invalid duration: %s\n", argv[optind - 1]);
		return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "pyprofile: unexpected argument: %s\n", argv[optind]);
		return -1;
	}
	if (o->user_only && o->kernel_only) {
		fprintf(stderr, "pyprofile: -U and -K are mutually exclusive\n");
		return -1;
	}
	if (o->tid && s->npids) {
		fprintf(stderr, "pyprofile: -p and -t are mutually exclusive\n");
		return -1;
	}
	return 0;
}

static void print_header(const struct options *o, const struct tool_session *s)
{
	printf("Sampling at %d Hertz of ", o->freq);
	if (o->tid) {
		printf("TID %d", (int)o->tid);
	} else if (s->npids) {
		printf("PID");
		for (size_t i = 0; i < s->npids; i++)
			printf("%s%d", i ? "," : " ", (int)s->pids[i]);
	} else {
		printf("all Python processes");
	}
	printf(" by %s stack", o->user_only     ? "Python + native"
			       : o->kernel_only ? "kernel"
						: "Python + native + kernel");
	if (o->duration)
		printf(" for %d secs.\n", o->duration);
	else
		printf("... Hit Ctrl-C to end.\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct options o = { .freq = 49, .stack_storage = 16384, .format = REPORT_TEXT };
	struct tool_session s = { .tool = "pyprofile" };
	struct report rep;
	char d_stack[48], d_user[24], d_kernel[24];
	const char *cflags[8];
	int nflags = 0, sample_fd, rc = 1;
	FILE *out = stdout;

	if (parse_args(argc, argv, &o, &s) < 0)
		return 2;
	if (o.ebpf) {
		fputs(pyprofile_bpf_text, stdout);
		return 0;
	}
	/* -t: profile the thread's process, report that thread only */
	if (o.tid && session_target_thread(&s, o.tid) < 0)
		return 1;
	snprintf(d_stack, sizeof(d_stack), "-DSTACK_STORAGE_SIZE=%d", o.stack_storage);
	snprintf(d_user, sizeof(d_user), "-DUSER_STACKS=%d", !o.kernel_only);
	snprintf(d_kernel, sizeof(d_kernel), "-DKERNEL_STACKS=%d", !o.user_only);
	cflags[nflags++] = d_stack;
	cflags[nflags++] = d_user;
	cflags[nflags++] = d_kernel;
	cflags[nflags++] = "-DPYSTACKS_SIZE=65536";
	cflags[nflags++] = "-DCOUNTS_SIZE=65536";
	s.verbose = o.verbose;
	if (session_compile(&s, pyprofile_bpf_text, cflags, nflags) < 0)
		return 1;
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
	if (o.output) {
		out = fopen(o.output, "we");
		if (!out) {
			fprintf(stderr, "pyprofile: cannot write %s: %s\n", o.output, strerror(errno));
			goto out;
		}
	}
	/* the header goes to stdout unless stdout carries a non-text report */
	if (o.format == REPORT_TEXT || o.output)
		print_header(&o, &s);
	s.filter = (struct stack_filter){ .user_stacks = !o.kernel_only,
					  .kernel_stacks = !o.user_only,
					  .only_tid = o.tid,
					  .only_kind = -1 };
	session_run(&s, o.duration);
	if (o.format == REPORT_TEXT && !o.output)
		printf("\n");
	report_init(&rep, o.delimiter);
	rep.period_ns = session_sample_period_ns(&s);
	session_collect(&s, &rep);
	rc = report_write(&rep, o.format, out, "samples", "pyprofile") < 0;
	session_print_summary(&s, "samples");
	if (o.verbose)
		session_print_bpf_stats(&s, sample_fd, "sampling", session_stat(&s, PYB_STAT_SAMPLES),
					"Python sample");
	report_free(&rep);
	if (out != stdout && fclose(out) != 0) {
		fprintf(stderr, "pyprofile: writing %s failed: %s\n", o.output, strerror(errno));
		rc = 1;
	}
out:
	session_close(&s);
	return rc;
}
