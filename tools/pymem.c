// SPDX-License-Identifier: Apache-2.0
/*
 * pymem  Where a running Python process's memory goes, from outside,
 *        without a restart. For Linux, uses libbcc, eBPF. Embedded C.
 *
 * Four modes, one run each: growth by stack (the default), a census of
 * live objects by type (--census), collector pauses (--gc) and libc
 * allocations still outstanding (--alloc). This file parses the command
 * line; each mode is in a file of its own (pymem.h).
 */
#include <stdio.h>

#include "cli.h"
#include "pymem.h"
#include "bpf/tool.h"

static const char usage_text[] =
	"Usage: pymem [-h] [-p PID[,PID...] [--children] | -t TID]\n"
	"             [--census | --gc | --alloc [-z BYTES] [-Z BYTES] [--sample N]]\n"
	"             [-f] [-o FILE]\n"
	"             [--format text|folded|svg|speedscope|pprof|json] [-i INTERVAL]\n"
	"             [--top N | --all] [--threads] [--function] [--no-native]\n"
	"             [--startup-frames] [-v] [--version]\n"
	"             [duration] [[--run-as USER] -- CMD [ARGS...]]\n"
	"\n"
	"Where the memory of Python processes goes, without restarting them.\n"
	"By default: the memory each process got from the kernel (pages made\n"
	"resident, brk, mmap, munmap) by the Python, native and kernel stack that\n"
	"asked for it, in bytes.\n"
	"\n"
	"  -p, --pid PID[,PID]  trace these processes only\n"
	"      --children       and their descendants, running or started later\n"
	"  -t, --tid TID        trace this thread only\n"
	"      --census         count live objects by type (what holds the memory);\n"
	"                       with -i, what grew between censuses\n"
	"      --gc             the collector's pauses: each collection, a histogram\n"
	"      --alloc          libc allocations still outstanding at the end, by\n"
	"                       stack (opt-in: costs the target more)\n"
	"  -z, --min-size BYTES --alloc: record allocations of at least BYTES\n"
	"  -Z, --max-size BYTES --alloc: record allocations of at most BYTES\n"
	"      --sample N       --alloc: record each allocation with probability 1/N\n"
	"                       (its bytes counted N times: an estimate, cheaper)\n"
	"  -f, --folded         print folded stacks (flamegraph.pl input)\n"
	"  -o, --output FILE    write the report to FILE (--format)\n"
	"      --format FMT     text (default), folded, svg, speedscope, pprof or json\n"
	"  -i, --interval SECS  a report every SECS seconds\n"
	"      --top N          rows or stacks in the text report\n"
	"      --all            every row and stack in the text report\n"
	"      --threads        the process and thread at the root of each stack\n"
	"      --function       one frame per function (its def line), not per line\n"
	"      --no-native      no native frames (cheaper)\n"
	"      --startup-frames keep the native frames below the outermost Python\n"
	"                       frame (the interpreter's start-up, thread bootstrap)\n"
	"      --run-as USER    run CMD as USER (default: the user who ran sudo)\n"
	"  -v, --verbose        say how each process was recognised, BPF run time\n"
	"      --version        print the version\n"
	"  -h, --help           show this help\n"
	"\n"
	"examples:\n"
	"    ./pymem -p 185 10            # where PID 185's memory grew, 10 seconds\n"
	"    ./pymem --census -p 185      # live objects of PID 185 by type\n"
	"    ./pymem --census -i 5 -p 185 60   # what grew, every 5 seconds\n"
	"    ./pymem --gc -p 185 10       # the collector's pauses\n"
	"    ./pymem --alloc -p 185 10    # libc allocations outstanding, by stack\n"
	"    ./pymem -p 185 -o mem.svg --format svg 10   # flame graph in bytes\n";

enum { OPT_CENSUS = CLI_OPT_OWN, OPT_GC, OPT_ALLOC, OPT_TOP, OPT_ALL };
/* --alloc's own options */
enum { OPT_ALLOC_SAMPLE = CLI_OPT_OWN + 64 };

static int set_mode(struct pymem_options *o, enum pymem_mode mode)
{
	if (o->mode != PYMEM_GROWTH && o->mode != mode) {
		fprintf(stderr, "pymem: --census, --gc and --alloc are mutually exclusive\n");
		return -1;
	}
	o->mode = mode;
	return 0;
}

static int own_option(int opt, const char *arg, void *ctx)
{
	struct pymem_options *o = ctx;

	switch (opt) {
	case 'f':
		o->folded = true;
		o->cli.format = REPORT_FOLDED;
		return 0;
	case 'i':
		if (cli_parse_small_int(arg, 1, 86400, &o->interval) < 0) {
			fprintf(stderr, "pymem: invalid interval: %s\n", arg);
			return -1;
		}
		return 0;
	case OPT_TOP:
		if (cli_parse_small_int(arg, 1, 1000000, &o->top) < 0) {
			fprintf(stderr, "pymem: invalid --top: %s\n", arg);
			return -1;
		}
		return 0;
	case OPT_ALL:
		o->top = 0;
		return 0;
	case OPT_CENSUS:
		return set_mode(o, PYMEM_CENSUS);
	case OPT_GC:
		return set_mode(o, PYMEM_GC);
	case OPT_ALLOC:
		return set_mode(o, PYMEM_ALLOC);
	/* --alloc: size filters and sampling */
	case 'z':
	case 'Z': {
		long long v;

		if (cli_parse_int(arg, 0, 1LL << 50, &v) < 0) {
			fprintf(stderr, "pymem: invalid size in bytes: %s\n", arg);
			return -1;
		}
		*(opt == 'z' ? &o->alloc_min : &o->alloc_max) = (unsigned long long)v;
		return 0;
	}
	case OPT_ALLOC_SAMPLE:
		if (cli_parse_small_int(arg, 1, 1 << 20, &o->alloc_sample) < 0) {
			fprintf(stderr, "pymem: invalid --sample: %s\n", arg);
			return -1;
		}
		return 0;
	default:
		return 1;
	}
}

static int parse_args(int argc, char **argv, struct pymem_options *o, struct tool_session *s)
{
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, 'f' },
		{ "interval", required_argument, NULL, 'i' },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "census", no_argument, NULL, OPT_CENSUS },
		{ "gc", no_argument, NULL, OPT_GC },
		{ "alloc", no_argument, NULL, OPT_ALLOC },
		/* --alloc */
		{ "min-size", required_argument, NULL, 'z' },
		{ "max-size", required_argument, NULL, 'Z' },
		{ "sample", required_argument, NULL, OPT_ALLOC_SAMPLE },
		{ NULL, 0, NULL, 0 },
	};

	if (cli_parse(&o->cli, s, argc, argv, "fi:z:Z:", longopts, own_option, o) < 0)
		return -1;
	/* --alloc */
	if (o->mode != PYMEM_ALLOC &&
	    (o->alloc_min || o->alloc_max != ~0ULL || o->alloc_sample != 1)) {
		fprintf(stderr, "pymem: -z, -Z and --sample apply to --alloc only\n");
		return -1;
	}
	if (o->alloc_min > o->alloc_max) {
		fprintf(stderr, "pymem: -z %llu is above -Z %llu\n", o->alloc_min, o->alloc_max);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pymem_options o = {
		.cli = { .tool = "pymem", .usage = usage_text, .format = REPORT_TEXT,
			 .allow_json = true },
		.top = -1,
		.alloc_max = ~0ULL, .alloc_sample = 1, /* --alloc */
	};
	struct tool_session s = { .tool = "pymem" };

	if (parse_args(argc, argv, &o, &s) < 0)
		return 2;
	switch (o.mode) {
	case PYMEM_CENSUS:
		return pymem_census(&o, &s);
	case PYMEM_GC:
		return pymem_gc(&o, &s);
	case PYMEM_ALLOC:
		return pymem_alloc(&o, &s);
	default:
		return pymem_growth(&o, &s);
	}
}
