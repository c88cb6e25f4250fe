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
#include "report/units.h"

static uint32_t py(struct report *rep, const char *name, const char *file, int line)
{
	struct report_frame f = { .kind = REPORT_FRAME_PYTHON, .name = name, .file = file,
				  .line = line, .first_line = 1 };

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

int main(void)
{
	test_format_bytes();
	test_labels();
	test_text_and_folded();
	test_procs();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
