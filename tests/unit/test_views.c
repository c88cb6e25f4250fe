// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of lib/report/views.c (--function, --threads) and
 * lib/report/top.c (the live view's table), on reports built by hand:
 * the exact folded bytes after each view, and the exact table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

#include "report/rows.h"
#include "report/top.h"
#include "report/views.h"

static uint32_t py(struct report *rep, const char *name, int line, int first_line)
{
	struct report_frame f = { .kind = REPORT_FRAME_PYTHON, .name = name, .file = "app.py",
				  .line = line, .first_line = first_line };

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
	CHECK(top_update(&t, &rep) == 0);
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
	CHECK(top_update(&t, &rep) == 0);
	CHECK(top_key(&t, '2', &rep)); /* by total share */
	out = render(&t, 40, 6);
	CHECK_STR(out, "title\n"
		       "Process all, thread all; sorted by %Tota\n"
		       "1.00 s sampled since the last refresh, 5\n"
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

int main(void)
{
	test_functions();
	test_threads();
	test_top();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
