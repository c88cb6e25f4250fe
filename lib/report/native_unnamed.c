/* SPDX-License-Identifier: Apache-2.0 */
#include "report/native_unnamed.h"

#include <stdlib.h>
#include <string.h>

#include "sys/text_escape.h"

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The innermost Python or native frame of r's user frames (markers such
 * as [gc] skipped), or NULL. */
static const struct report_frame *innermost(const struct report *rep, const struct report_row *r)
{
	for (int k = r->nuser - 1; k >= 0; k--) {
		const struct report_frame *f = &rep->frames[r->frames[k]];

		if (f->kind == REPORT_FRAME_PYTHON || f->kind == REPORT_FRAME_NATIVE)
			return f;
	}
	return NULL;
}

static int add_file(struct native_unnamed *u, const struct report_frame *f, uint64_t value)
{
	struct native_unnamed_file *grown;

	for (size_t i = 0; i < u->nfiles; i++)
		if (same(u->files[i].module, f->module) && same(u->files[i].build_id, f->build_id)) {
			u->files[i].value += value;
			return 0;
		}
	if (u->nfiles == NATIVE_UNNAMED_FILES_MAX) {
		u->other += value;
		return 0;
	}
	grown = realloc(u->files, (u->nfiles + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	u->files = grown;
	u->files[u->nfiles++] = (struct native_unnamed_file){ f->module, f->build_id, value };
	return 0;
}

static int by_value(const void *a, const void *b)
{
	const struct native_unnamed_file *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return x->module && y->module ? strcmp(x->module, y->module) : 0;
}

int native_unnamed_count(const struct report *rep, struct native_unnamed *u)
{
	memset(u, 0, sizeof(*u));
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = &rep->rows[i];
		const struct report_frame *f = innermost(rep, r);

		if (!f || f->kind != REPORT_FRAME_NATIVE)
			continue;
		u->native += r->value;
		if (!f->unnamed)
			continue;
		u->unnamed += r->value;
		if (add_file(u, f, r->value) < 0) {
			native_unnamed_free(u);
			return -1;
		}
	}
	if (u->nfiles)
		qsort(u->files, u->nfiles, sizeof(*u->files), by_value);
	return 0;
}

void native_unnamed_free(struct native_unnamed *u)
{
	free(u->files);
	memset(u, 0, sizeof(*u));
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

bool native_unnamed_print(FILE *out, const char *tool, const struct native_unnamed *u,
			  const char *unit, bool debuginfod)
{
	size_t shown = u->nfiles < NATIVE_UNNAMED_FILES_SHOWN ? u->nfiles : NATIVE_UNNAMED_FILES_SHOWN;
	uint64_t rest = u->other;

	if (!u->native || (double)u->unnamed <= NATIVE_UNNAMED_SHARE * (double)u->native)
		return false;
	fprintf(out,
		"%s: %.0f%% of the time in native code (%llu of %llu %s, by the innermost "
		"frame) ran in functions no symbol names, shown as FILE+0xSTART; by file:\n",
		tool, pct(u->unnamed, u->native), (unsigned long long)u->unnamed,
		(unsigned long long)u->native, unit);
	for (size_t i = 0; i < shown; i++) {
		const struct native_unnamed_file *f = &u->files[i];

		fprintf(out, "%s:   %.1f%% %s", tool, pct(f->value, u->native),
			TEXT_ESC(f->module ? base_name(f->module) : "[unknown]"));
		if (f->module)
			fprintf(out, " (%s)", TEXT_ESC(f->module));
		/* a build-id is hex, as read: still escaped, it came from the file */
		fprintf(out, ", build-id %s\n", f->build_id ? TEXT_ESC(f->build_id) : "none");
	}
	for (size_t i = shown; i < u->nfiles; i++)
		rest += u->files[i].value;
	if (rest)
		fprintf(out, "%s:   %.1f%% in %s%zu other %s\n", tool, pct(rest, u->native),
			u->other ? "more than " : "", u->nfiles - shown,
			u->nfiles - shown == 1 && !u->other ? "file" : "files");
	fprintf(out,
		"%s: to name them, install each build-id's debug file where the process "
		"sees /usr/lib/debug/.build-id/ (Debian: the package whose Build-Ids lists it, "
		"PACKAGE-dbgsym or PACKAGE-dbg; find-dbgsym-packages BUILD-ID names it)%s\n",
		tool,
		debuginfod ? "; DEBUGINFOD_URLS is set, but no debug file came from it for these"
			   : ", or set DEBUGINFOD_URLS for the tool to fetch them from debuginfod");
	return true;
}
