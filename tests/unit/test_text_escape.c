// SPDX-License-Identifier: Apache-2.0
/* lib/sys/text_escape.c: what reaches a terminal of text a target chose. */
#include <stdlib.h>

#include "sys/text_escape.h"
#include "unit_check.h"

static const char *esc(const char *s, const char *also)
{
	static char buf[256];

	text_escape(buf, sizeof(buf), s, also);
	return buf;
}

static void test_kept(void)
{
	CHECK_STR(esc("plain text (a.py:3)", NULL), "plain text (a.py:3)");
	/* UTF-8 other than controls: é, a no-break space, €, U+1D11E */
	CHECK_STR(esc("\xc3\xa9\xc2\xa0\xe2\x82\xac\xf0\x9d\x84\x9e", NULL),
		  "\xc3\xa9\xc2\xa0\xe2\x82\xac\xf0\x9d\x84\x9e");
	CHECK_STR(esc("a\\x1b", NULL), "a\\x1b"); /* '\\' is kept: idempotent */
	CHECK_STR(esc("", NULL), "");
}

static void test_controls(void)
{
	CHECK_STR(esc("\x1b[31mred", NULL), "\\x1b[31mred");
	CHECK_STR(esc("\t\n\r\x7f\x01", NULL), "\\x09\\x0a\\x0d\\x7f\\x01");
	/* C1: as a raw byte, and as U+009B in UTF-8 */
	CHECK_STR(esc("\x9b" "2J", NULL), "\\x9b2J");
	CHECK_STR(esc("\xc2\x9b" "2J", NULL), "\\xc2\\x9b2J");
	CHECK_STR(esc("\xc2\x80\xc2\x9f", NULL), "\\xc2\\x80\\xc2\\x9f");
	CHECK_STR(esc("a;b", ";"), "a\\x3bb");
	CHECK_STR(esc("a;b", NULL), "a;b");
}

static void test_bad_utf8(void)
{
	CHECK_STR(esc("x\xc3", NULL), "x\\xc3");                  /* cut at the end */
	CHECK_STR(esc("\xc3(", NULL), "\\xc3(");                  /* no continuation */
	CHECK_STR(esc("\xc0\xaf", NULL), "\\xc0\\xaf");           /* overlong '/' */
	CHECK_STR(esc("\xe0\x80\xaf", NULL), "\\xe0\\x80\\xaf");  /* overlong, 3 bytes */
	CHECK_STR(esc("\xed\xa0\x80", NULL), "\\xed\\xa0\\x80");  /* a surrogate */
	CHECK_STR(esc("\xf4\x90\x80\x80", NULL), "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
	CHECK_STR(esc("\xf5\x80", NULL), "\\xf5\\x80");
	CHECK_STR(esc("\x80", NULL), "\\x80");
}

static void test_idempotent(void)
{
	static const char *const inputs[] = { "\x1b]0;t\x07", "\xc2\x85;\n", "\xff\xfe", "ok" };
	char once[256], twice[256];

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		text_escape(once, sizeof(once), inputs[i], ";");
		text_escape(twice, sizeof(twice), once, ";");
		CHECK_STR(twice, once);
	}
}

static void test_cut(void)
{
	char buf[8];

	/* the whole length is returned; an escape is never cut in half */
	CHECK(text_escape(buf, 6, "ab\x1b" "cd", NULL) == 8);
	CHECK_STR(buf, "ab");
	CHECK(text_escape(buf, 7, "ab\x1b" "cd", NULL) == 8);
	CHECK_STR(buf, "ab\\x1b");
	CHECK(text_escape(buf, 3, "a\xe2\x82\xac", NULL) == 4); /* nor a character */
	CHECK_STR(buf, "a");
	CHECK(text_escape(NULL, 0, "\x01", NULL) == 4);
	CHECK_STR(TEXT_ESC(NULL), "(null)");
	CHECK_STR(TEXT_ESC("\x1b"), "\\x1b");
}

static void test_write(void)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	if (!f) {
		CHECK(f != NULL);
		return;
	}
	text_escape_write(f, "t\x1b[0m\xc2\x9b\xe2\x82\xac\xff;");
	fclose(f);
	CHECK_STR(mem, "t\\x1b[0m\\xc2\\x9b\xe2\x82\xac\\xff;");
	free(mem);
}

int main(void)
{
	test_kept();
	test_controls();
	test_bad_utf8();
	test_idempotent();
	test_cut();
	test_write();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
