/* SPDX-License-Identifier: Apache-2.0 */
#include "report/census.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "sys/text_escape.h"

#define NAME_MAX_ESC 512

/* the form that goes with a count (report stands alone: sys/plural.h's rule) */
static const char *forms(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

const char census_left_out[] =
	"Not counted: objects the collector does not track (str, bytes, int, float,\n"
	"and the dicts and tuples it untracked because they hold only such values);\n"
	"bytes are each object's own struct with its GC header, as sys.getsizeof()\n"
	"counts them, not the arrays and tables a list, dict or set points to.\n";

static int by_bytes(const void *a, const void *b)
{
	const struct census_row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_growth(const void *a, const void *b)
{
	const struct census_row *x = a, *y = b;

	if (x->dbytes != y->dbytes)
		return x->dbytes < y->dbytes ? 1 : -1;
	if (x->dcount != y->dcount)
		return x->dcount < y->dcount ? 1 : -1;
	return strcmp(x->name, y->name);
}

void census_sort_rows(struct census_report *r)
{
	if (r->n)
		qsort(r->rows, r->n, sizeof(*r->rows), by_bytes);
}

size_t census_growth_rows(struct census_report *r)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].dcount > 0 && r->rows[i].dbytes > 0) {
			struct census_row t = r->rows[k];

			r->rows[k++] = r->rows[i];
			r->rows[i] = t;
		}
	if (k)
		qsort(r->rows, k, sizeof(*r->rows), by_growth);
	return k;
}

static void write_status(FILE *out, const struct census_report *r)
{
	if (!r->complete)
		fprintf(out, "[PARTIAL: %s: the counts below are what was read, not vouched for]\n",
			TEXT_ESC(r->why ? r->why : "walk incomplete"));
	if (r->skipped || r->resyncs)
		fprintf(out, "[%" PRIu64 " %s no object skipped, %" PRIu64
			     " %s stepped around: objects freed while walking]\n",
			r->skipped, forms(r->skipped, "node that was", "nodes that were"), r->resyncs,
			forms(r->resyncs, "link", "links"));
}

static void write_growth_text(FILE *out, struct census_report *r, size_t top)
{
	size_t k = census_growth_rows(r), shown = top && top < k ? top : k;
	char name[NAME_MAX_ESC];

	fprintf(out, "Growth over %.2f s, PID %d (%s): %zu %s grew\n", r->interval_s, r->pid,
		TEXT_ESC(r->comm ? r->comm : "?"), k, forms(k, "type", "types"));
	write_status(out, r);
	fprintf(out, "%-48s %12s %12s %14s %14s\n", "TYPE", "COUNT", "+COUNT", "BYTES", "+BYTES");
	for (size_t i = 0; i < shown; i++) {
		const struct census_row *w = &r->rows[i];

		text_escape(name, sizeof(name), w->name, NULL);
		fprintf(out, "%-48s %12" PRIu64 " %+12" PRId64 " %14" PRIu64 " %+14" PRId64 "\n", name,
			w->count, w->dcount, w->bytes, w->dbytes);
	}
	if (shown < k)
		fprintf(out, "[%zu more %s grew]\n", k - shown, forms(k - shown, "type", "types"));
}

void census_write_text(FILE *out, struct census_report *r, size_t top)
{
	char name[NAME_MAX_ESC];
	size_t shown;
	uint64_t rest_count = 0, rest_bytes = 0;

	if (r->growth) {
		write_growth_text(out, r, top);
		return;
	}
	census_sort_rows(r);
	shown = top && top < r->n ? top : r->n;
	fprintf(out,
		"Live objects of PID %d (%s): %" PRIu64 " %s, %" PRIu64
		" bytes, %zu %s, %d %s (walk %.3f s)\n",
		r->pid, TEXT_ESC(r->comm ? r->comm : "?"), r->objects,
		forms(r->objects, "object", "objects"), r->bytes, r->n, forms(r->n, "type", "types"),
		r->interpreters, forms((unsigned)r->interpreters, "interpreter", "interpreters"),
		(double)r->walk_ns / 1e9);
	write_status(out, r);
	fprintf(out, "%12s %14s  %s\n", "COUNT", "BYTES", "TYPE");
	for (size_t i = 0; i < r->n; i++) {
		const struct census_row *w = &r->rows[i];

		if (i >= shown) {
			rest_count += w->count;
			rest_bytes += w->bytes;
			continue;
		}
		text_escape(name, sizeof(name), w->name, NULL);
		fprintf(out, "%12" PRIu64 " %14" PRIu64 "  %s\n", w->count, w->bytes, name);
	}
	if (shown < r->n)
		fprintf(out, "[%zu more %s: %" PRIu64 " %s, %" PRIu64 " bytes]\n", r->n - shown,
			forms(r->n - shown, "type", "types"), rest_count,
			forms(rest_count, "object", "objects"), rest_bytes);
}

void census_write_folded(FILE *out, struct census_report *r)
{
	char name[NAME_MAX_ESC];

	census_sort_rows(r);
	for (size_t i = 0; i < r->n; i++) {
		char *dot;

		/* the module's dotted path, then the qualified name as one frame */
		text_escape(name, sizeof(name), r->rows[i].name, ";");
		for (dot = name; *dot && *dot != '.'; dot++)
			;
		if (*dot)
			*dot = ';';
		fprintf(out, "%s %" PRIu64 "\n", name, r->rows[i].bytes);
	}
}

static void json_name(FILE *out, const char *raw)
{
	char name[NAME_MAX_ESC];

	text_escape(name, sizeof(name), raw ? raw : "?", NULL);
	json_write_string(out, name);
}

void census_write_json(FILE *out, struct census_report *r, size_t top)
{
	size_t k = r->growth ? census_growth_rows(r) : 0, shown;

	shown = top && top < r->n ? top : r->n;
	fprintf(out, "{\"pid\":%d,\"comm\":", r->pid);
	json_name(out, r->comm);
	fprintf(out,
		",\"time\":%.6f,\"walk_seconds\":%.6f,\"complete\":%s,\"why\":",
		(double)r->time_ns / 1e9, (double)r->walk_ns / 1e9, r->complete ? "true" : "false");
	if (r->complete)
		fputs("null", out);
	else
		json_name(out, r->why);
	fprintf(out,
		",\"interpreters\":%d,\"walks\":%d,\"objects\":%" PRIu64 ",\"bytes\":%" PRIu64
		",\"skipped\":%" PRIu64 ",\"resyncs\":%" PRIu64 ",\"types\":%zu",
		r->interpreters, r->walks, r->objects, r->bytes, r->skipped, r->resyncs, r->n);
	if (r->growth) {
		fprintf(out, ",\"interval_seconds\":%.6f,\"growth\":[", r->interval_s);
		for (size_t i = 0; i < k; i++) {
			fprintf(out, "%s{\"type\":", i ? "," : "");
			json_name(out, r->rows[i].name);
			fprintf(out,
				",\"count\":%" PRIu64 ",\"count_delta\":%" PRId64 ",\"bytes\":%" PRIu64
				",\"bytes_delta\":%" PRId64 "}",
				r->rows[i].count, r->rows[i].dcount, r->rows[i].bytes, r->rows[i].dbytes);
		}
		fputs("]", out);
	}
	fputs(",\"rows\":[", out);
	/* every type asked for (top by bytes), whether it grew or not */
	if (r->growth)
		census_sort_rows(r);
	for (size_t i = 0; i < shown; i++) {
		fprintf(out, "%s{\"type\":", i ? "," : "");
		json_name(out, r->rows[i].name);
		fprintf(out, ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", r->rows[i].count,
			r->rows[i].bytes);
	}
	fputs("]}\n", out);
}
