// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of lib/report: the frame model (interning, labels) and the
 * exact bytes of the text and folded formats, for a report built by hand.
 * The other writers are read back by their real clients in the pytest
 * files (tests/test_outputs.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

#include "report/rows.h"
#include "report/summary.h"
#include "report/units.h"

static uint32_t py(struct report *rep, const char *name, const char *file, int line)
{
	struct report_frame f = { .kind = REPORT_FRAME_PYTHON, .name = name, .file = file,
				  .line = line, .first_line = 1 };

	return (uint32_t)report_intern_frame(rep, &f);
}

/* A Python frame at line of the function defined at first_line. */
static uint32_t py_at(struct report *rep, const char *name, int line, int first_line)
{
	struct report_frame f = { .kind = REPORT_FRAME_PYTHON, .name = name, .file = "/srv/app.py",
				  .line = line, .first_line = first_line };

	return (uint32_t)report_intern_frame(rep, &f);
}

static uint32_t native(struct report *rep, const char *name, uint64_t addr)
{
	struct report_frame f = { .kind = REPORT_FRAME_NATIVE, .name = name, .addr = addr,
				  .module = "/usr/lib/libx.so", .offset = addr - 0x1000 };

	return (uint32_t)report_intern_frame(rep, &f);
}

static uint32_t kernel(struct report *rep, const char *name)
{
	struct report_frame f = { .kind = REPORT_FRAME_KERNEL, .name = name, .addr = 0xffff1 };

	return (uint32_t)report_intern_frame(rep, &f);
}

static char *print(const struct report *rep, bool folded)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (folded)
		report_print_folded(rep, f);
	else
		report_print_text(rep, f);
	fclose(f);
	return buf;
}

static void test_labels(void)
{
	struct report rep;
	char buf[128];
	struct report_frame f = { .kind = REPORT_FRAME_PYTHON, .name = "<module>", .file = "/a/b.py",
				  .line = 7 };

	report_init(&rep, false);
	report_frame_label(&f, buf, sizeof(buf));
	CHECK_STR(buf, "<module> (/a/b.py:7)");
	f.line = REPORT_LINE_UNKNOWN;
	report_frame_label(&f, buf, sizeof(buf));
	CHECK_STR(buf, "<module> (/a/b.py:?)");
	f = (struct report_frame){ .kind = REPORT_FRAME_PYTHON, .name = "a;b\nc", .file = "x;y" };
	/* ';' and '\n' would split a frame or a folded line: escaped */
	CHECK(report_frame_label(&f, buf, sizeof(buf)) == strlen("a\\x3bb\\x0ac (x\\x3by:0)"));
	CHECK_STR(buf, "a\\x3bb\\x0ac (x\\x3by:0)");
	f = (struct report_frame){ .kind = REPORT_FRAME_NATIVE, .name = "\x1b[2J\xc2\x9b" };
	report_frame_label(&f, buf, sizeof(buf));
	CHECK_STR(buf, "\\x1b[2J\\xc2\\x9b");
	f = (struct report_frame){ .kind = REPORT_FRAME_NATIVE, .addr = 1 };
	report_frame_label(&f, buf, sizeof(buf));
	CHECK_STR(buf, "[unknown]");
	/* the same fields: one frame; another address: another frame */
	CHECK(native(&rep, NULL, 0x1234) == native(&rep, NULL, 0x1234));
	CHECK(native(&rep, NULL, 0x1234) != native(&rep, NULL, 0x1238));
	CHECK(py(&rep, "f", "/a.py", 1) != py(&rep, "f", "/a.py", 2));
	CHECK(rep.nframes == 4);
	report_free(&rep);
}

/* Rows of two threads that read the same are one line; kernel frames
 * carry _[k] in folded output and lose it in text; -d puts "-" / "--"
 * between user and kernel frames. */
static void test_text_and_folded(void)
{
	struct report rep;
	uint32_t a[6], b[3];
	char *s;

	report_init(&rep, false);
	a[0] = py(&rep, "<module>", "/srv/app.py", 10);
	a[1] = py(&rep, "work", "/srv/app.py", 3);
	a[2] = native(&rep, "PyObject_Call", 0x2000);
	a[3] = kernel(&rep, "do_syscall_64");
	a[4] = kernel(&rep, NULL);
	CHECK(report_add_row(&rep, 42, 43, "python3", a, 5, 3, 2, 5) == 0);
	CHECK(report_add_row(&rep, 42, 44, "python3", a, 5, 3, 2, 2) == 0);
	b[0] = a[0];
	b[1] = (uint32_t)report_intern_marker(&rep, "[truncated]");
	b[2] = (uint32_t)report_intern_marker(&rep, RUNNABLE_MARKER);
	CHECK(report_add_row(&rep, 42, 43, "python3", b, 3, 2, 0, 4) == 0);
	CHECK(report_add_row(&rep, 42, 43, "python3", b, 3, 2, 0, 1) == 0);
	report_merge_rows(&rep);
	CHECK(rep.n == 3); /* two threads stay apart, the same thread merges */

	s = print(&rep, true);
	CHECK_STR(s, "python3;<module> (/srv/app.py:10);[truncated];" RUNNABLE_MARKER " 5\n"
		     "python3;<module> (/srv/app.py:10);work (/srv/app.py:3);PyObject_Call;"
		     "do_syscall_64_[k];[unknown]_[k] 7\n");
	free(s);
	s = print(&rep, false);
	CHECK_STR(s, "    " RUNNABLE_MARKER "\n"
		     "    [truncated]\n"
		     "    <module> (/srv/app.py:10)\n"
		     "    -                python3 (42)\n"
		     "        5\n\n"
		     "    [unknown]\n"
		     "    do_syscall_64\n"
		     "    PyObject_Call\n"
		     "    work (/srv/app.py:3)\n"
		     "    <module> (/srv/app.py:10)\n"
		     "    -                python3 (42)\n"
		     "        7\n\n");
	free(s);
	rep.delimiter = true;
	s = print(&rep, true);
	CHECK(strstr(s, "PyObject_Call;-;do_syscall_64_[k];[unknown]_[k] 7\n") != NULL);
	free(s);
	s = print(&rep, false);
	CHECK(strstr(s, "    do_syscall_64\n    --\n    PyObject_Call\n") != NULL);
	free(s);
	report_free(&rep);
}

static void test_procs(void)
{
	struct report rep;

	report_init(&rep, false);
	CHECK(report_find_proc(&rep, 7) == NULL);
	CHECK(report_set_proc(&rep, 7, "python3.11", "3.11.2") == 0);
	CHECK(report_set_proc(&rep, 8, NULL, NULL) == 0);
	CHECK(report_find_proc(&rep, 7) && strcmp(report_find_proc(&rep, 7)->python_version,
						  "3.11.2") == 0);
	CHECK(report_find_proc(&rep, 8) && report_find_proc(&rep, 8)->comm[0] == '\0');
	report_free(&rep);
}

/* pymem's sizes: powers of 1024, one decimal below GiB */
static void test_format_bytes(void)
{
	char b[32];

	report_format_bytes(0, b, sizeof(b));
	CHECK(strcmp(b, "0 B") == 0);
	report_format_bytes(1023, b, sizeof(b));
	CHECK(strcmp(b, "1023 B") == 0);
	report_format_bytes(4096, b, sizeof(b));
	CHECK(strcmp(b, "4.0 KiB") == 0);
	report_format_bytes(210u << 20, b, sizeof(b));
	CHECK(strcmp(b, "210.0 MiB") == 0);
	report_format_bytes(3ull << 29, b, sizeof(b));
	CHECK(strcmp(b, "1.50 GiB") == 0);
	report_format_bytes(UINT64_MAX, b, sizeof(b));
	CHECK(strstr(b, "GiB") != NULL);
}

static char *summary(const struct report *rep, const char *unit, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	report_print_summary(rep, unit, what, SUMMARY_PROCS, f);
	fclose(f);
	return buf;
}

/* Own: the innermost Python function, native code above it included;
 * total: once per stack, recursion too; stacks with no Python frame
 * ranked as such; every line of a function is the function. */
static void test_summary(void)
{
	struct report rep;
	uint32_t mod, outer, outer2, inner, add, start;
	char *s;

	report_init(&rep, false);
	mod = py_at(&rep, "<module>", 10, 1);
	outer = py_at(&rep, "outer", 20, 18);
	outer2 = py_at(&rep, "outer", 22, 18);
	inner = py_at(&rep, "inner", 31, 30);
	add = native(&rep, "PyNumber_Add", 0x3000);
	start = native(&rep, "start_thread", 0x4000);
	CHECK(report_add_row(&rep, 42, 42, "python3", (uint32_t[]){ mod, outer, inner, add }, 4, 4,
			     0, 6) == 0);
	CHECK(report_add_row(&rep, 42, 42, "python3", (uint32_t[]){ mod, outer }, 2, 2, 0, 3) == 0);
	CHECK(report_add_row(&rep, 42, 43, "worker", (uint32_t[]){ mod, outer, outer2, inner }, 4,
			     4, 0, 1) == 0);
	CHECK(report_add_row(&rep, 42, 44, "native", &start, 1, 1, 0, 2) == 0);
	CHECK(report_set_proc(&rep, 42, "python3", "3.11.2") == 0);
	s = summary(&rep, "samples", NULL);
	CHECK_STR(s, "Summary of PID 42 (python3): 12 samples\n"
		     "  %Own         Own  Python function (own: it ran, or native or kernel code it "
		     "called)\n"
		     "  58.3           7  inner (/srv/app.py:30)\n"
		     "  25.0           3  outer (/srv/app.py:18)\n"
		     "  16.7           2  [no Python frames]\n"
		     "%Total       Total  Python function (total: anywhere on the stack)\n"
		     "  83.3          10  <module> (/srv/app.py:1)\n"
		     "  83.3          10  outer (/srv/app.py:18)\n"
		     "  58.3           7  inner (/srv/app.py:30)\n");
	free(s);
	/* no line starts as a stack's frame does */
	s = summary(&rep, "us", "GIL waits");
	CHECK(strncmp(s, "Summary of GIL waits, PID 42 (python3): 12 us\n", 46) == 0);
	CHECK(strstr(s, "\n  58.3        7 us  inner (/srv/app.py:30)\n") != NULL);
	CHECK(strstr(s, "\n    ") == NULL);
	free(s);
	report_free(&rep);
	/* kernel stacks only (-K): nothing to summarise */
	report_init(&rep, false);
	start = kernel(&rep, "do_syscall_64");
	CHECK(report_add_row(&rep, 42, 42, "python3", &start, 1, 0, 1, 5) == 0);
	s = summary(&rep, "samples", NULL);
	CHECK_STR(s, "");
	free(s);
	report_free(&rep);
}

/* Several processes: the largest first, with their share of all; fewer
 * functions each; a line on the processes left out. */
static void test_summary_processes(void)
{
	struct report rep;
	char *s, name[16];
	int lines = 0;
	size_t n;

	report_init(&rep, false);
	for (int pid = 1; pid <= SUMMARY_PROCS + 2; pid++)
		for (int fn = 0; fn < 2 * SUMMARY_FUNCTIONS; fn++) {
			uint32_t f;

			snprintf(name, sizeof(name), "f%02d", fn);
			f = py_at(&rep, name, 2, 1);
			CHECK(report_add_row(&rep, pid, pid, "python3", &f, 1, 1, 0,
					     (uint64_t)(pid * 1000 + fn)) == 0);
		}
	s = summary(&rep, "bytes", NULL);
	CHECK(strncmp(s, "Summary of PID 7 (?): 136.9 KiB (25.0% of all)\n", 47) == 0);
	CHECK(strstr(s, "\nSummary of PID 3 (?): ") != NULL);
	CHECK(strstr(s, "\nSummary of PID 2 (?): ") == NULL);
	CHECK(strstr(s, "\n(2 more processes, 59.0 KiB in all (10.8%), not summarised)\n") != NULL);
	for (const char *p = s; (p = strchr(p, '\n')); p++)
		lines++;
	/* per process: a title, two headings, two lists of 5; 4 blank lines
	 * between processes, one and the line on the rest */
	CHECK(lines == SUMMARY_PROCS * (3 + 2 * SUMMARY_FUNCTIONS_EACH) + SUMMARY_PROCS - 1 + 2);
	free(s);
	/* one process (PID 1's rows): ten functions a list */
	n = rep.n;
	rep.n = 2 * SUMMARY_FUNCTIONS;
	s = summary(&rep, "samples", NULL);
	CHECK(strstr(s, "of all)") == NULL && strstr(s, "f10") != NULL && strstr(s, "f09") == NULL);
	free(s);
	rep.n = n;
	report_free(&rep);
}

int main(void)
{
	test_format_bytes();
	test_labels();
	test_text_and_folded();
	test_procs();
	test_summary();
	test_summary_processes();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
