/* SPDX-License-Identifier: Apache-2.0 */
/*
 * speedscope's JSON file format (https://www.speedscope.app): frames are
 * shared, each process is one "sampled" profile whose samples list frame
 * indices root first, weighted by samples or microseconds.
 */
#include "report/speedscope.h"

#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "report/string_table.h"

/* "qualname (file:line)" -> name, file, line for speedscope's frame fields. */
static void write_frame(FILE *out, const char *name)
{
	const char *open = strrchr(name, '(');
	const char *colon = open ? strrchr(open, ':') : NULL;
	size_t n = strlen(name);

	fputs("{\"name\":", out);
	json_write_string(out, name);
	if (open && colon && n > 2 && name[n - 1] == ')' && open > name && open[-1] == ' ') {
		char file[1024];
		size_t flen = (size_t)(colon - open - 1);

		if (flen < sizeof(file)) {
			memcpy(file, open + 1, flen);
			file[flen] = '\0';
			fputs(",\"file\":", out);
			json_write_string(out, file);
			if (colon[1] >= '0' && colon[1] <= '9')
				fprintf(out, ",\"line\":%d", atoi(colon + 1));
		}
	}
	fputc('}', out);
}

int report_write_speedscope(const struct report *rep, FILE *out, const char *unit,
			    const char *tool)
{
	struct string_table frames = { 0 };
	int rc = -1;

	/* pass 1: intern every frame */
	for (size_t i = 0; i < rep->n; i++) {
		const char *p = rep->rows[i].frames;

		while (*p) {
			const char *end = strchr(p, ';');
			size_t len = end ? (size_t)(end - p) : strlen(p);

			if (string_table_intern(&frames, p, len) < 0)
				goto out;
			p += len + (end != NULL);
		}
	}
	fprintf(out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
		     "\"exporter\":\"%s (pybpf-tools)\",\"name\":\"%s\",\"activeProfileIndex\":0,\n"
		     "\"shared\":{\"frames\":[\n",
		tool, tool);
	for (size_t i = 0; i < frames.n; i++) {
		write_frame(out, frames.v[i]);
		fputs(i + 1 < frames.n ? ",\n" : "\n", out);
	}
	fputs("]},\n\"profiles\":[\n", out);
	/* pass 2: one profile per process (rows are sorted by pid) */
	for (size_t i = 0; i < rep->n;) {
		size_t j = i;
		uint64_t total = 0;
		char pname[64];

		while (j < rep->n && rep->rows[j].pid == rep->rows[i].pid)
			total += rep->rows[j++].value;
		fprintf(out, "%s{\"type\":\"sampled\",\"name\":", i ? ",\n" : "");
		snprintf(pname, sizeof(pname), "%s (%d)", rep->rows[i].comm, (int)rep->rows[i].pid);
		json_write_string(out, pname);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\"samples\":[",
			strcmp(unit, "us") == 0 ? "microseconds" : "none", (unsigned long long)total);
		for (size_t k = i; k < j; k++) {
			const char *p = rep->rows[k].frames;
			bool first = true;

			fputs(k > i ? ",[" : "[", out);
			while (*p) {
				const char *end = strchr(p, ';');
				size_t len = end ? (size_t)(end - p) : strlen(p);

				fprintf(out, "%s%ld", first ? "" : ",",
					string_table_intern(&frames, p, len));
				first = false;
				p += len + (end != NULL);
			}
			fputc(']', out);
		}
		fputs("],\"weights\":[", out);
		for (size_t k = i; k < j; k++)
			fprintf(out, "%s%llu", k > i ? "," : "", (unsigned long long)rep->rows[k].value);
		fputs("]}", out);
		i = j;
	}
	fputs("\n]}\n", out);
	rc = ferror(out) ? -1 : 0;
out:
	string_table_free(&frames);
	return rc;
}
