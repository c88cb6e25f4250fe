// SPDX-License-Identifier: Apache-2.0
/*
 * pydump  Print what every thread of a Python process is doing: its state
 *         and what it waits for as the kernel tells it, its Python stack,
 *         and on request its variables and native frames; from a live
 *         process or from a core file.
 *
 * Reads the interpreter's memory from outside (process_vm_readv) and what
 * /proc says of each thread: the target is neither stopped nor
 * ptrace-attached, and nothing of it is executed. The collecting is in
 * pydump_collect.c (and pydump_native.c), the output in pydump_text.c and
 * pydump_json.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cpython/asyncio.h"
#include "pydump_dump.h"
#include "sys/core_file.h"
#include "sys/remote_mem.h"
#include "sys/target_file.h"
#include "sys/text_escape.h"

#define MAX_PIDS 256

static const char usage_text[] =
	"Usage: pydump [-h] [-v] [--version] [-l] [-g] [-n] [-j] [--async] -p PID[,PID...]\n"
	"       pydump [-l] [-g] [-n] [-j] --core FILE [--exe PYTHON] [--root DIR]\n"
	"\n"
	"Print what every thread of a running CPython process is doing: its state\n"
	"and the system call it waits in (the GIL, a lock, a socket, a sleep), and\n"
	"its Python stack, innermost frame first, without stopping it. Or the same\n"
	"from a core dump.\n"
	"\n"
	"  -p, --pid PID[,PID]  the processes to read (also as arguments)\n"
	"  -l, --locals         show each frame's arguments and local variables\n"
	"  -g, --globals        show the module globals of the modules on the stacks (their\n"
	"                       data: not modules, functions, classes or __dunder__ names)\n"
	"  -n, --native         show native frames of blocked threads among the Python ones\n"
	"  -j, --json           print one JSON document instead of text\n"
	"      --async          also every asyncio task, as a tree: its state, the coroutines\n"
	"                       it is suspended in, what it awaits and who awaits it\n"
	"  -c, --core FILE      read a core dump instead of a live process\n"
	"  -e, --exe PYTHON     the interpreter the core came from (default: as the core names it)\n"
	"      --root DIR       where the core's files are (a container's or chroot's root)\n"
	"  -v, --verbose        say where the offsets came from and why others were not used\n"
	"  -h, --help           show this help\n"
	"      --version        print the version\n"
	"\n"
	"examples:\n"
	"    pydump -p 181                 # every thread of PID 181: state, stack\n"
	"    pydump -l -p 181              # also arguments and local variables\n"
	"    pydump -g -p 181              # also the globals of the modules running\n"
	"    pydump -n -p 181              # also native frames of blocked threads\n"
	"    pydump -j -p 181,182 > d.json # two processes as one JSON document\n"
	"    pydump --async -p 181         # and its asyncio tasks\n"
	"    pydump --core core.181        # the same from a core dump\n"
	"    pydump -v -p 181              # also show how the interpreter was recognised\n";

struct run {
	struct dump_options opts;
	bool json, tasks;
	pid_t pids[MAX_PIDS];
	size_t npids;
	const char *core, *exe, *root;
	struct dump *dumps[MAX_PIDS];
	size_t ndumps;
	struct dump_error errors[MAX_PIDS];
	size_t nerrors;
};

static void failed(struct run *r, pid_t pid, const char *what, const char *why)
{
	struct dump_error *e = &r->errors[r->nerrors++];

	e->pid = pid;
	snprintf(e->error, sizeof(e->error), "%s", why);
	fprintf(stderr, "pydump: %s: %s\n", TEXT_ESC(what), TEXT_ESC(why));
}

static void dump_pid(struct run *r, pid_t pid)
{
	struct dump *d = calloc(1, sizeof(*d));
	char err[PY_ERR_LEN], what[32];

	snprintf(what, sizeof(what), "PID %d", (int)pid);
	if (!d) {
		failed(r, pid, what, "out of memory");
		return;
	}
	if (dump_collect(d, pid, &r->opts, NULL, NULL, err, sizeof(err)) < 0) {
		failed(r, pid, what, err);
		free(d);
		return;
	}
	r->dumps[r->ndumps++] = d;
}

static int dump_core(struct run *r, struct core_file *core)
{
	struct dump *d = calloc(1, sizeof(*d));
	char err[PY_ERR_LEN + PATH_MAX];
	pid_t pid;

	if (!d) {
		failed(r, 0, r->core, "out of memory");
		return -1;
	}
	if (core_file_open(core, r->core, r->root, r->exe, err, sizeof(err)) < 0) {
		failed(r, 0, r->core, err);
		free(d);
		return -1;
	}
	pid = core_file_attach(core);
	if (pid < 0 || dump_collect(d, pid, &r->opts, core, r->core, err, sizeof(err)) < 0) {
		if (!core->exe[0])
			snprintf(err + strlen(err), sizeof(err) - strlen(err),
				 " (the core names no executable this machine has: try --exe)");
		failed(r, core->pid, r->core, pid < 0 ? "too many images" : err);
		free(d);
		return -1;
	}
	r->dumps[r->ndumps++] = d;
	return 0;
}

/* The asyncio task tree after the threads (--async). Returns 0 or -1. */
static int dump_tasks(struct dump *d, bool verbose)
{
	struct py_thread *threads = calloc(d->nthreads ? d->nthreads : 1, sizeof(*threads));
	struct py_asyncio a;
	int rc = -1;

	if (!threads)
		return -1;
	for (size_t i = 0; i < d->nthreads; i++)
		threads[i] = d->threads[i].t;
	printf("\n");
	fflush(stdout);
	if (py_asyncio_read(&d->p, NULL, threads, (int)d->nthreads, &a) < 0) {
		fprintf(stderr, "pydump: PID %d: asyncio: %s\n", (int)d->pid, TEXT_ESC(d->p.err));
	} else {
		if (verbose && a.extension[0])
			printf("# asyncio: _asyncio from %s\n", TEXT_ESC(a.extension));
		py_asyncio_print(stdout, &d->p, &a);
		py_asyncio_free(&a);
		rc = 0;
	}
	free(threads);
	return rc;
}

static int parse_args(struct run *r, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "locals", no_argument, NULL, 'l' },
		{ "globals", no_argument, NULL, 'g' },
		{ "native", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "core", required_argument, NULL, 'c' },
		{ "exe", required_argument, NULL, 'e' },
		{ "root", required_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "async", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:lgnjc:e:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_pid_list(optarg, r->pids, MAX_PIDS, &r->npids) < 0) {
				fprintf(stderr, "pydump: invalid PID: %s\n", TEXT_ESC(optarg));
				return 2;
			}
			break;
		case 'l': r->opts.locals = true; break;
		case 'g': r->opts.globals = true; break;
		case 'n': r->opts.native = true; break;
		case 'j': r->json = true; break;
		case 'A': r->tasks = true; break;
		case 'c': r->core = optarg; break;
		case 'e': r->exe = optarg; break;
		case 'R': r->root = optarg; break;
		case 'v': r->opts.verbose = true; break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			cli_print_version("pydump");
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	for (; optind < argc; optind++)
		if (cli_parse_pid_list(argv[optind], r->pids, MAX_PIDS, &r->npids) < 0) {
			fprintf(stderr, "pydump: invalid PID: %s\n", TEXT_ESC(argv[optind]));
			return 2;
		}
	if ((!r->npids) == !r->core || ((r->exe || r->root) && !r->core) || (r->tasks && r->json)) {
		if (r->tasks && r->json)
			fprintf(stderr, "pydump: --async prints text: it does not go with --json\n");
		fputs(usage_text, stderr);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	static struct run r;
	static struct core_file core;
	int rc = parse_args(&r, argc, argv);

	if (rc >= 0)
		return rc;
	if (r.core)
		dump_core(&r, &core);
	for (size_t i = 0; i < r.npids; i++)
		dump_pid(&r, r.pids[i]);
	if (r.json) {
		dump_print_json(stdout, r.dumps, r.ndumps, r.errors, r.nerrors);
	} else {
		for (size_t i = 0; i < r.ndumps; i++) {
			if (i)
				fputc('\n', stdout);
			dump_print_text(stdout, r.dumps[i]);
			if (r.tasks && dump_tasks(r.dumps[i], r.opts.verbose) < 0)
				r.nerrors++;
		}
	}
	for (size_t i = 0; i < r.ndumps; i++) {
		dump_free(r.dumps[i]);
		free(r.dumps[i]);
	}
	if (r.opts.verbose && target_file_no_openat2())
		fprintf(stderr, "pydump: %s\n", TARGET_FILE_NO_OPENAT2);
	if (r.core && core.data)
		core_file_close(&core);
	return r.nerrors ? 1 : 0;
}
