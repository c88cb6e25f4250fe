// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of lib/report/census.c: the census table (top N by bytes,
 * the rest summed), what grew (count and bytes both up, largest growth
 * first), folded lines by module, JSON lines, and type names from a
 * hostile target escaped in every format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

#include "report/census.h"

enum writer { TEXT, FOLDED, JSON };

static char *write(struct census_report *r, enum writer w, size_t top)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (w == TEXT)
		census_write_text(f, r, top);
	else if (w == FOLDED)
		census_write_folded(f, r);
	else
		census_write_json(f, r, top);
	fclose(f);
	return buf;
}

static void rows_of(struct census_row *rows)
{
	struct census_row v[] = {
		{ "builtins.list", 10, 560, 0, 0 },
		{ "leaky.Outer.Leak", 2000, 112000, 2000, 112000 },
		{ "builtins.dict", 5, 1000, 1, -40 }, /* count up, bytes down: not growth */
		{ "evil\x1b[31m.K;x\n", 3, 300, 3, 300 },
	};

	memcpy(rows, v, sizeof(v));
}

static void test_table(void)
{
	struct census_row rows[4];
	struct census_report r = { .pid = 7, .comm = "py\x1b", .rows = rows, .n = 4,
				   .objects = 2018, .bytes = 113860, .interpreters = 1,
				   .complete = true, .walk_ns = 5000000 };
	char *out;

	rows_of(rows);
	out = write(&r, TEXT, 2);
	CHECK_STR(out, "Live objects of PID 7 (py\\x1b): 2018 objects, 113860 bytes, 4 types, "
		       "1 interpreter (walk 0.005 s)\n"
		       "       COUNT          BYTES  TYPE\n"
		       "        2000         112000  leaky.Outer.Leak\n"
		       "           5           1000  builtins.dict\n"
		       "[2 more types: 13 objects, 860 bytes]\n");
	free(out);
	r.complete = false;
	r.why = "a collection ran during the walk";
	r.resyncs = 2;
	out = write(&r, TEXT, 0);
	CHECK(strstr(out, "[PARTIAL: a collection ran during the walk: the counts below are what "
			  "was read, not vouched for]\n") != NULL);
	CHECK(strstr(out, "2 links stepped around") != NULL);
	CHECK(strstr(out, "evil\\x1b[31m.K;x\\x0a\n") != NULL);
	CHECK(strchr(out, '\x1b') == NULL);
	free(out);
}

static void test_growth(void)
{
	struct census_row rows[4];
	struct census_report r = { .pid = 7, .comm = "py", .rows = rows, .n = 4, .complete = true,
				   .growth = true, .interval_s = 1.0 };
	char *out;

	rows_of(rows);
	out = write(&r, TEXT, 0);
	CHECK_STR(out,
		  "Growth over 1.00 s, PID 7 (py): 2 types grew\n"
		  "TYPE                                                    COUNT       +COUNT"
		  "          BYTES         +BYTES\n"
		  "leaky.Outer.Leak                                         2000        +2000"
		  "         112000        +112000\n"
		  "evil\\x1b[31m.K;x\\x0a                                        3           +3"
		  "            300           +300\n");
	free(out);
	rows_of(rows);
	out = write(&r, TEXT, 1);
	CHECK(strstr(out, "\n[1 more type grew]\n") != NULL);
	free(out);
	rows_of(rows);
	out = write(&r, JSON, 0);
	CHECK(strstr(out, "\"growth\":[{\"type\":\"leaky.Outer.Leak\",\"count\":2000,"
			  "\"count_delta\":2000,\"bytes\":112000,\"bytes_delta\":112000},") != NULL);
	CHECK(strstr(out, "\"rows\":[{\"type\":\"leaky.Outer.Leak\"") != NULL);
	CHECK(strstr(out, "builtins.dict\",\"count\":5,\"bytes\":1000}") != NULL);
	CHECK(strchr(out, '\x1b') == NULL && strchr(out, '\n') == out + strlen(out) - 1);
	free(out);
}

static void test_folded(void)
{
	struct census_row rows[4];
	struct census_report r = { .rows = rows, .n = 4, .complete = true };
	char *out;

	rows_of(rows);
	out = write(&r, FOLDED, 0);
	CHECK_STR(out, "leaky;Outer.Leak 112000\n"
		       "builtins;dict 1000\n"
		       "builtins;list 560\n"
		       "evil\\x1b[31m;K\\x3bx\\x0a 300\n");
	free(out);
}

int main(void)
{
	test_table();
	test_growth();
	test_folded();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
