// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of lib/report/views.c (--function, --threads) and
 * lib/report/top.c (the live view's table) and lib/report/native_unnamed.c
 * (the summary of unnamed native time), on reports built by hand: the
 * exact folded bytes after each view, the exact table and lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

#include "report/native_unnamed.h"
#include "report/rows.h"
#include "report/top.h"
#include "report/views.h"

static uint32_t py(struct report *rep, const char *name, int line, int first_line)
{
	struct report_frame f = { .kind = REPORT_FRAME_PYTHON, .name = name, .file = "app.py",
				  .line = line, .first_line = first_line };

	return (uint32_t)report_intern_frame(rep, &f);
}

/* A native frame; unnamed: "FILE+0xSTART" of a stripped file. */
static uint32_t native(struct report *rep, const char *name, const char *module, bool unnamed)
{
	struct report_frame f = { .kind = REPORT_FRAME_NATIVE, .name = name, .module = module,
				  .build_id = "ab12", .unnamed = unnamed };

	return (uint32_t)report_intern_frame(rep, &f);
}

static void row(struct report *rep, pid_t pid, pid_t tid, const char *comm,
		const uint32_t *frames, int n, uint64_t value)
{
	report_add_row(rep, pid, tid, comm, frames, n, n, 0, value);
}

static char *folded(const struct report *rep)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	report_print_folded(rep, f);
	fclose(f);
	return buf;
}

/* Two lines of one function become one frame: its def line. */
static void test_functions(void)
{
	struct report rep;
	char *out;

	report_init(&rep, false);
	uint32_t a[] = { py(&rep, "main", 30, 28), py(&rep, "work", 12, 10) };
	uint32_t b[] = { py(&rep, "main", 30, 28), py(&rep, "work", 14, 10) };
	uint32_t c[] = { py(&rep, "main", 31, 28) };
	row(&rep, 7, 7, "python3", a, 2, 3);
	row(&rep, 7, 7, "python3", b, 2, 4);
	row(&rep, 7, 7, "python3", c, 1, 5);
	CHECK(report_view_functions(&rep) == 0);
	CHECK(rep.n == 2);
	out = folded(&rep);
	CHECK_STR(out, "python3;main (app.py:28) 5\n"
		       "python3;main (app.py:28);work (app.py:10) 7\n");
	free(out);
	report_free(&rep);
}

/* Process and thread at the root; threads of one process stay apart. */
static void test_threads(void)
{
	struct report rep;
	char *out;

	report_init(&rep, false);
	report_set_proc(&rep, 7, "server", "3.12.1");
	uint32_t a[] = { py(&rep, "work", 12, 10) };
	row(&rep, 7, 7, "server", a, 1, 2);
	row(&rep, 7, 9, "worker-1", a, 1, 3);
	row(&rep, 8, 8, "other", a, 1, 4);
	CHECK(report_view_threads(&rep) == 0);
	CHECK(rep.rows[0].nuser == 3 && rep.rows[0].nframes == 3);
	out = folded(&rep);
	CHECK_STR(out, "server;[PID 7 server];[TID 7 server];work (app.py:12) 2\n"
		       "worker-1;[PID 7 server];[TID 9 worker-1];work (app.py:12) 3\n"
		       "other;[PID 8 ?];[TID 8 other];work (app.py:12) 4\n");
	free(out);
	report_free(&rep);
}

static char *render(const struct top *t, int width, int height)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	top_render(t, f, width, height, "title", "");
	fclose(f);
	return buf;
}

/* Own and total per function, recursion counted once; shares of the
 * samples since the previous update; sorted; cut to the screen. */
static void test_top(void)
{
	struct report rep;
	struct top t;
	char *out;

	report_init(&rep, false);
	uint32_t main_ = py(&rep, "main", 30, 28), a = py(&rep, "a", 5, 4), b = py(&rep, "b", 9, 8);
	uint32_t r1[] = { main_, a }, r2[] = { main_, b }, r3[] = { main_, a, a };
	row(&rep, 7, 7, "python3", r1, 2, 3);
	row(&rep, 7, 7, "python3", r2, 2, 1);
	row(&rep, 7, 8, "python3", r3, 3, 4);
	top_init(&t, 0.5);
	CHECK(top_update(&t, &rep, 1000000000) == 0);
	/* keys not read (output to a pipe or file): no key help */
	out = render(&t, 80, 0);
	CHECK(strncmp(out, "title\nProcess all, thread all; sorted by %Own.\n", 47) == 0);
	free(out);
	t.keys = true;
	out = render(&t, 80, 0);
	CHECK_STR(out, "title\n"
		       "Process all, thread all; sorted by %Own. Keys: 1-4 sort, p/t/a filter, q quit\n"
		       "4.00 s sampled since the start, 4.00 s in all\n"
		       "\n"
		       " %Own %Total  OwnTime TotalTime  Function\n"
		       " 87.5   87.5    3.50s     3.50s  a (app.py:4)\n"
		       " 12.5   12.5    0.50s     0.50s  b (app.py:8)\n"
		       "  0.0  100.0    0.00s     4.00s  main (app.py:28)\n");
	free(out);
	/* two more samples of b: the next screen shows only them */
	rep.rows[1].value += 2;
	CHECK(top_update(&t, &rep, 2000000000) == 0);
	CHECK(top_key(&t, '2', &rep)); /* by total share */
	out = render(&t, 40, 6);
	CHECK_STR(out, "title\n"
		       "Process all, thread all; sorted by %Tota\n"
		       "1.00 s sampled in the last 1.0 s, 5.00 s\n"
		       "\n"
		       " %Own %Total  OwnTime TotalTime  Functio\n"
		       "  0.0  100.0    0.00s     5.00s  main (a\n");
	free(out);
	/* thread 8 only: counted again from the start */
	CHECK(top_key(&t, 't', &rep) && t.only_tid == 7);
	CHECK(top_key(&t, 't', &rep) && t.only_tid == 8);
	out = render(&t, 80, 7);
	CHECK(strstr(out, "Process all, thread 8;") != NULL);
	CHECK(strstr(out, "2.00 s sampled since the start, 2.00 s in all") != NULL);
	CHECK(strstr(out, "  0.0  100.0    0.00s     2.00s  main (app.py:28)\n") != NULL);
	free(out);
	top_free(&t);
	report_free(&rep);
}

/* The shares cover the last TOP_WINDOW refreshes: older samples drop
 * out; a filter starts again from the start. */
static void test_top_window(void)
{
	struct report rep;
	struct top t;
	char *out;

	report_init(&rep, false);
	uint32_t a[] = { py(&rep, "a", 5, 4) }, b[] = { py(&rep, "b", 9, 8) };
	row(&rep, 7, 7, "python3", a, 1, 10);
	row(&rep, 7, 7, "python3", b, 1, 0);
	top_init(&t, 1.0);
	CHECK(top_update(&t, &rep, 1000000000) == 0);
	/* b alone from now: a's 10 stay in the window for TOP_WINDOW refreshes */
	for (int i = 2; i <= TOP_WINDOW + 1; i++) {
		rep.rows[1].value += 1;
		CHECK(top_update(&t, &rep, (uint64_t)i * 1000000000) == 0);
	}
	out = render(&t, 80, 0);
	CHECK(strstr(out, "5.00 s sampled in the last 5.0 s, 15.00 s in all\n") != NULL);
	CHECK(strstr(out, "100.0  100.0    5.00s     5.00s  b (app.py:8)\n") != NULL);
	CHECK(strstr(out, "  0.0    0.0   10.00s    10.00s  a (app.py:4)\n") != NULL);
	free(out);
	top_free(&t);
	report_free(&rep);
}

/* A stripped file's functions are one row; named ones stay apart. */
static void test_top_unnamed(void)
{
	struct report rep;
	struct top t;
	char *out;

	report_init(&rep, false);
	uint32_t m = py(&rep, "main", 3, 1);
	uint32_t r1[] = { m, native(&rep, "python3+0x10", "/usr/bin/python3", true) };
	uint32_t r2[] = { m, native(&rep, "python3+0x80", "/usr/bin/python3", true) };
	uint32_t r3[] = { m, native(&rep, "deflate", "/lib/libz.so", false) };
	row(&rep, 7, 7, "python3", r1, 2, 3);
	row(&rep, 7, 7, "python3", r2, 2, 2);
	row(&rep, 7, 7, "python3", r3, 2, 5);
	top_init(&t, 1.0);
	CHECK(top_update(&t, &rep, 1) == 0);
	out = render(&t, 80, 0);
	CHECK(strstr(out, " 50.0   50.0    5.00s     5.00s  deflate\n") != NULL);
	CHECK(strstr(out, " 50.0   50.0    5.00s     5.00s  python3 [unnamed]\n") != NULL);
	CHECK(strstr(out, "+0x") == NULL);
	free(out);
	top_free(&t);
	report_free(&rep);
}

static char *unnamed_lines(const struct report *rep, bool *printed)
{
	struct native_unnamed u;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(native_unnamed_count(rep, &u) == 0);
	*printed = native_unnamed_print(f, "tool", &u, "samples", false);
	native_unnamed_free(&u);
	fclose(f);
	return buf;
}

/* Unnamed native time by the innermost frame, per file, over 20% only;
 * a target's file name escaped. */
static void test_native_unnamed(void)
{
	struct report rep;
	bool printed;
	char *out;

	report_init(&rep, false);
	uint32_t m = py(&rep, "main", 3, 1);
	uint32_t named = native(&rep, "deflate", "/lib/libz.so", false);
	uint32_t r1[] = { m, named, native(&rep, "evil\x1b+0x10", "/tmp/evil\x1b", true) };
	uint32_t r2[] = { m, native(&rep, "python3+0x80", "/usr/bin/python3", true) };
	uint32_t r3[] = { m, named }, r4[] = { m };
	row(&rep, 7, 7, "python3", r1, 3, 1);
	row(&rep, 7, 7, "python3", r2, 2, 3);
	row(&rep, 7, 7, "python3", r3, 2, 16);
	row(&rep, 7, 7, "python3", r4, 1, 50); /* Python: not native time */
	out = unnamed_lines(&rep, &printed); /* 4 of 20: not over 20% */
	CHECK(!printed && out && !out[0]);
	free(out);
	rep.rows[1].value = 4; /* 5 of 21 */
	out = unnamed_lines(&rep, &printed);
	CHECK(printed);
	CHECK(strstr(out, "tool: 24% of the time in native code (5 of 21 samples,") == out);
	CHECK(strstr(out, "\ntool:   19.0% python3 (/usr/bin/python3), build-id ab12\n"
			  "tool:   4.8% evil\\x1b (/tmp/evil\\x1b), build-id ab12\n") != NULL);
	CHECK(strstr(out, "DEBUGINFOD_URLS") != NULL && strchr(out, '\x1b') == NULL);
	free(out);
	report_free(&rep);
}

int main(void)
{
	test_functions();
	test_threads();
	test_top();
	test_top_window();
	test_top_unnamed();
	test_native_unnamed();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
