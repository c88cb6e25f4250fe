// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of lib/report/path_suffix.c: the short names the SVG flame
 * graph gives files, each the shortest end of its path (whole components)
 * that no other file of the profile ends with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

#include "report/path_suffix.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Each path of paths named as want says, in a set of them all. */
static void check_names(const char *const *paths, const char *const *want, size_t n)
{
	struct path_suffixes s;

	CHECK(path_suffixes_init(&s, paths, n) == 0);
	for (size_t i = 0; i < n; i++)
		if (paths[i])
			CHECK_STR(path_suffix(&s, paths[i]), want[i]);
	path_suffixes_free(&s);
}

static void test_names(void)
{
	/* the case: the user's app.py and flask's */
	const char *flask[] = { "/srv/app.py", "/usr/lib/python3/dist-packages/flask/app.py",
				"/srv/views.py" };
	const char *flask_want[] = { "srv/app.py", "flask/app.py", "views.py" };
	/* a path that is all of another's end is named whole */
	const char *relative[] = { "app.py", "/opt/flask/app.py", "/app.py" };
	const char *relative_want[] = { "app.py", "flask/app.py", "/app.py" };
	/* as many components as the nearest other needs; duplicates and
	 * NULLs are fine */
	const char *deep[] = { "/a/x/app.py", "/b/x/app.py", "/c/y/app.py", NULL, "/a/x/app.py" };
	const char *deep_want[] = { "a/x/app.py", "b/x/app.py", "y/app.py", NULL, "a/x/app.py" };
	/* '.' sorts before '/' byte-wise: the neighbour that shares the most
	 * components is found all the same */
	const char *dots[] = { "x/app.py", "/r/x/app.py", "/r/a.x/app.py", "/r/x.y/app.py" };
	const char *dots_want[] = { "x/app.py", "r/x/app.py", "a.x/app.py", "x.y/app.py" };
	/* an empty last component, native modules, a name without '/' */
	const char *odd[] = { "/x/", "/usr/lib/libz.so.1", "<stdin>", "", "/y/" };
	const char *odd_want[] = { "/x/", "libz.so.1", "<stdin>", "", "/y/" };

	check_names(flask, flask_want, N(flask));
	check_names(relative, relative_want, N(relative));
	check_names(deep, deep_want, N(deep));
	check_names(dots, dots_want, N(dots));
	check_names(odd, odd_want, N(odd));
}

/* A path not in the set: its base name; an empty set likewise. */
static void test_not_in_set(void)
{
	const char *paths[] = { "/srv/app.py", "/opt/app.py" };
	struct path_suffixes s = { 0 };

	CHECK_STR(path_suffix(&s, "/srv/app.py"), "app.py");
	CHECK(path_suffixes_init(&s, paths, 2) == 0);
	CHECK_STR(path_suffix(&s, "/tmp/app.py"), "app.py");
	CHECK_STR(path_suffix(&s, "/srv/app.py"), "srv/app.py");
	path_suffixes_free(&s);
	CHECK(path_suffixes_init(&s, NULL, 0) == 0 && s.n == 0);
	path_suffixes_free(&s);
}

/* Many files of one name (a target names its files as it likes): each
 * by its own directory, in a sort's time. */
static void test_many(void)
{
	enum { MANY = 20000 };
	char (*buf)[32] = malloc(MANY * sizeof(*buf));
	const char **paths = malloc(MANY * sizeof(*paths));
	struct path_suffixes s;
	int wrong = 0;
	char want[32];

	if (!buf || !paths) {
		CHECK(!"out of memory");
		return;
	}
	for (int i = 0; i < MANY; i++) {
		snprintf(buf[i], sizeof(buf[i]), "/srv/d%d/__init__.py", i);
		paths[i] = buf[i];
	}
	CHECK(path_suffixes_init(&s, paths, MANY) == 0 && s.n == MANY);
	for (int i = 0; i < MANY; i++) {
		snprintf(want, sizeof(want), "d%d/__init__.py", i);
		wrong += strcmp(path_suffix(&s, paths[i]), want) != 0;
	}
	CHECK(wrong == 0);
	path_suffixes_free(&s);
	free(paths);
	free(buf);
}

int main(void)
{
	test_names();
	test_not_in_set();
	test_many();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
