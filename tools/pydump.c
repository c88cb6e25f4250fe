// SPDX-License-Identifier: Apache-2.0
/*
 * pydump  Print the Python stack of every thread of a live process.
 *
 * Reads the interpreter's memory from outside (process_vm_readv): the
 * target is neither stopped nor ptrace-attached, and nothing of it is
 * executed. A live look at a stuck or busy process, and the plainest proof
 * that lib/ understands the interpreter: offsets, threads, frames, names
 * and line numbers.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/open.h"
#include "cli.h"
#include "sys/proc_maps.h"
#include "cpython/asyncio.h"
#include "cpython/code.h"
#include "cpython/frames.h"
#include "cpython/process.h"
#include "cpython/threads.h"

#define MAX_FRAMES 4096
/* a process that runs no Python code yet: how long to wait for a frame to
 * check the offsets against */
#define OPEN_WAIT_MS 1000

static const char usage_text[] =
	"Usage: pydump [-h] [-v] [--version] [--async] -p PID\n"
	"\n"
	"Print the Python stack of every thread of a running CPython process,\n"
	"innermost frame first, without stopping it.\n"
	"\n"
	"  -p, --pid PID   the process to read\n"
	"  -v, --verbose   say where the offsets came from and why others were not used\n"
	"      --async     also every asyncio task, as a tree: its state, the coroutines\n"
	"                  it is suspended in, what it awaits and who awaits it\n"
	"  -h, --help      show this help\n"
	"      --version   print the version\n"
	"\n"
	"examples:\n"
	"    pydump -p 181      # stacks of every thread of PID 181\n"
	"    pydump -v -p 181   # also show how the interpreter was recognised\n"
	"    pydump --async -p 181   # and its asyncio tasks\n";

static int compare_threads(const void *a, const void *b, void *arg)
{
	const struct py_thread *x = a, *y = b;
	pid_t main_tid = *(const pid_t *)arg;

	if ((x->host_tid == main_tid) != (y->host_tid == main_tid))
		return x->host_tid == main_tid ? -1 : 1;
	return (x->host_tid > y->host_tid) - (x->host_tid < y->host_tid);
}

static void print_frames(struct py_process *p, const struct py_thread *t, struct py_frame *frames)
{
	bool truncated;
	int n = py_frames_read(p, t->tstate, frames, MAX_FRAMES, &truncated);

	if (n < 0) {
		printf("    [unreadable thread: %s]\n", p->err);
		return;
	}
	if (n == 0 && !truncated)
		printf("    (no Python frames)\n");
	for (int i = 0; i < n; i++) {
		struct py_code_info ci;
		int line;

		if ((frames[i].flags & PY_FRAME_UNREADABLE) ||
		    py_code_read(p, frames[i].code, &ci) < 0) {
			printf("    [unreadable frame]\n");
			continue;
		}
		line = py_code_line(p, &ci, frames[i].instr_offset);
		if (line >= 0)
			printf("    %s (%s:%d)\n", ci.name, ci.filename, line);
		else
			printf("    %s (%s:?)\n", ci.name, ci.filename);
		py_code_info_free(&ci);
	}
	if (truncated)
		printf("    [truncated]\n");
}

/* The asyncio task tree after the threads (--async). */
static int dump_tasks(struct py_process *p, const struct py_thread *threads, int n, bool verbose)
{
	struct py_asyncio a;

	printf("\n");
	fflush(stdout);
	if (py_asyncio_read(p, NULL, threads, n, &a) < 0) {
		fprintf(stderr, "pydump: PID %d: asyncio: %s\n", (int)p->pid, p->err);
		return 1;
	}
	if (verbose && a.extension[0])
		printf("# asyncio: _asyncio from %s\n", a.extension);
	py_asyncio_print(stdout, p, &a);
	py_asyncio_free(&a);
	return 0;
}

static int dump(pid_t pid, bool verbose, bool tasks)
{
	struct py_process p;
	struct py_thread *threads = NULL;
	struct py_frame *frames = NULL;
	int n, rc = 1;

	if (py_process_open_wait(&p, pid, OPEN_WAIT_MS) < 0) {
		fprintf(stderr, "pydump: PID %d: %s\n", (int)pid, p.err);
		return 1;
	}
	threads = calloc(PY_MAX_THREADS, sizeof(*threads));
	frames = calloc(MAX_FRAMES, sizeof(*frames));
	if (!threads || !frames) {
		fprintf(stderr, "pydump: out of memory\n");
		goto out;
	}
	n = py_threads_read(&p, threads, PY_MAX_THREADS);
	if (n < 0) {
		fprintf(stderr, "pydump: PID %d: %s\n", (int)pid, p.err);
		goto out;
	}
	qsort_r(threads, (size_t)n, sizeof(*threads), compare_threads, &p.pid);
	printf("Process %d \"%s\": CPython %s%s, %s [offsets: %s]\n", (int)p.pid, p.comm,
	       p.version_str, p.free_threaded ? " (free-threaded)" : "", p.interp_path,
	       py_offsets_source_name(p.source));
	if (verbose)
		printf("# _PyRuntime at 0x%llx, load bias 0x%llx, read through %s%s%s\n",
		       (unsigned long long)p.runtime_addr, (unsigned long long)p.load_bias,
		       p.interp_open, p.notes[0] ? "; " : "", p.notes);
	for (int i = 0; i < n; i++) {
		const struct py_thread *t = &threads[i];
		char comm[32] = "";

		if (t->host_tid)
			proc_comm(pid, t->host_tid, comm, sizeof(comm));
		printf("\n");
		if (t->host_tid)
			printf("Thread %d \"%s\"", (int)t->host_tid, comm);
		else
			printf("Thread ? \"\" [no OS thread]");
		if (t->ns_tid && t->ns_tid != t->host_tid)
			printf(" (ns tid %d)", (int)t->ns_tid);
		if (t->host_tid == p.pid)
			printf(" [main]");
		if (t->holds_gil)
			printf(" [GIL]");
		printf("\n");
		print_frames(&p, t, frames);
	}
	rc = tasks ? dump_tasks(&p, threads, n, verbose) : 0;
out:
	free(threads);
	free(frames);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "async", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	pid_t pid = 0;
	bool verbose = false, tasks = false;
	int c;

	while ((c = getopt_long(argc, argv, "p:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_pid(optarg, &pid) < 0) {
				fprintf(stderr, "pydump: invalid PID: %s\n", optarg);
				return 2;
			}
			break;
		case 'v':
			verbose = true;
			break;
		case 'A':
			tasks = true;
			break;
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
	if (optind < argc && !pid && cli_parse_pid(argv[optind], &pid) == 0)
		optind++;
	if (!pid || optind < argc) {
		fputs(usage_text, stderr);
		return 2;
	}
	return dump(pid, verbose, tasks);
}
