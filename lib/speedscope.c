/* SPDX-License-Identifier: Apache-2.0 */
/*
 * speedscope's JSON file format (https://www.speedscope.app): frames are
 * shared, each process is one "sampled" profile whose samples list frame
 * indices root first, weighted by samples or microseconds.
 */
#include <stdlib.h>
#include <string.h>

#include "report_formats.h"

struct frame_table {
	char **names;
	size_t n, cap;
};

/* Index of name in the shared frame table (linear probe hash on names). */
static long frame_index(struct frame_table *t, size_t *slots, size_t nslots, const char *name,
			size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 1099511628211ULL;
	for (size_t j = h & (nslots - 1);; j = (j + 1) & (nslots - 1)) {
		if (slots[j] == 0) {
			if (t->n == t->cap) {
				size_t cap = t->cap ? t->cap * 2 : 256;
				char **v = realloc(t->names, cap * sizeof(*v));

				if (!v)
					return -1;
				t->names = v;
				t->cap = cap;
			}
			t->names[t->n] = strndup(name, len);
			if (!t->names[t->n])
				return -1;
			slots[j] = ++t->n;
			return (long)t->n - 1;
		}
		const char *have = t->names[slots[j] - 1];

		if (strlen(have) == len && memcmp(have, name, len) == 0)
			return (long)slots[j] - 1;
	}
}

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

int report_write_speedscope(const struct stack_report *rep, FILE *out, const char *unit,
			    const char *tool)
{
	struct frame_table t = { 0 };
	size_t nslots = 1024;
	long *idx;
	size_t *slots;
	int rc = -1;

	/* a frame table twice as large as the number of distinct frames */
	for (size_t i = 0; i < rep->n; i++)
		for (const char *p = rep->rows[i].frames; *p; p++)
			nslots += *p == ';';
	size_t want = 2 * nslots;

	for (nslots = 1024; nslots < want; nslots <<= 1)
		;
	slots = calloc(nslots, sizeof(*slots));
	idx = calloc(rep->n + 1, sizeof(*idx));
	if (!slots || !idx)
		goto out;
	/* pass 1: intern every frame */
	for (size_t i = 0; i < rep->n; i++) {
		const char *p = rep->rows[i].frames;

		while (*p) {
			const char *end = strchr(p, ';');
			size_t len = end ? (size_t)(end - p) : strlen(p);

			if (frame_index(&t, slots, nslots, p, len) < 0)
				goto out;
			p += len + (end != NULL);
		}
	}
	fprintf(out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
		     "\"exporter\":\"%s (pybpf-tools)\",\"name\":\"%s\",\"activeProfileIndex\":0,\n"
		     "\"shared\":{\"frames\":[\n",
		tool, tool);
	for (size_t i = 0; i < t.n; i++) {
		write_frame(out, t.names[i]);
		fputs(i + 1 < t.n ? ",\n" : "\n", out);
	}
	fputs("]},\n\"profiles\":[\n", out);
	/* pass 2: one profile per process (rows are sorted by pid) */
	for (size_t i = 0; i < rep->n;) {
		size_t j = i;
		uint64_t total = 0;

		while (j < rep->n && rep->rows[j].pid == rep->rows[i].pid)
			total += rep->rows[j++].value;
		fprintf(out, "%s{\"type\":\"sampled\",\"name\":", i ? ",\n" : "");
		char pname[64];

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
					frame_index(&t, slots, nslots, p, len));
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
	for (size_t i = 0; i < t.n; i++)
		free(t.names[i]);
	free(t.names);
	free(slots);
	free(idx);
	return rc;
}
