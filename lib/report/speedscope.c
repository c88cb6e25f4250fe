/* SPDX-License-Identifier: Apache-2.0 */
/*
 * speedscope's JSON file format (https://www.speedscope.app, schema
 * https://www.speedscope.app/file-format-schema.json): the report's frames
 * are its shared frames, each process is one "sampled" profile whose
 * samples list frame indices root first, weighted in time: nanoseconds
 * (samples x the sampling period) for CPU profiles, microseconds for the
 * off-CPU ones; in bytes for pymem's.
 */
#include "report/speedscope.h"

#include <stdlib.h>
#include <string.h>

#include "report/json.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* speedscope shows the name in boxes and file:line beside it. */
static void write_frame(FILE *out, const struct report_frame *f)
{
	char buf[512];

	fputs("{\"name\":", out);
	if (f->kind == REPORT_FRAME_PYTHON && f->file) {
		char line[16] = "?";

		if (f->line >= 0)
			snprintf(line, sizeof(line), "%d", f->line);
		/* the line tells apart boxes of one function */
		fputc('"', out);
		json_write_raw(out, report_frame_name(f));
		fputs(" (", out);
		json_write_raw(out, base_name(f->file));
		fprintf(out, ":%s)\"", line);
		fputs(",\"file\":", out);
		json_write_string(out, f->file);
		if (f->line >= 0)
			fprintf(out, ",\"line\":%d", f->line);
	} else if (f->kind == REPORT_FRAME_NATIVE && !f->name && f->module) {
		snprintf(buf, sizeof(buf), "%s+0x%llx", base_name(f->module),
			 (unsigned long long)f->offset);
		json_write_string(out, buf);
		fputs(",\"file\":", out);
		json_write_string(out, f->module);
	} else {
		json_write_string(out, report_frame_name(f));
		if (f->kind == REPORT_FRAME_NATIVE && f->module) {
			fputs(",\"file\":", out);
			json_write_string(out, f->module);
		}
	}
	fputc('}', out);
}

int report_write_speedscope(const struct report *rep, FILE *out, const char *unit,
			    const char *tool)
{
	bool bytes = strcmp(unit, "bytes") == 0, cpu = strcmp(unit, "us") != 0 && !bytes;
	/* CPU: each sample stands for one period (1 ns if not known) */
	uint64_t scale = cpu ? (rep->period_ns ? rep->period_ns : 1) : 1;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":",
	      out);
	{
		char exporter[96];

		snprintf(exporter, sizeof(exporter), "%s (pybpf-tools)", tool);
		json_write_string(out, exporter);
	}
	fputs(",\"name\":", out);
	json_write_string(out, rep->target[0] ? rep->target : tool);
	fputs(",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[\n", out);
	for (size_t i = 0; i < rep->nframes; i++) {
		write_frame(out, &rep->frames[i]);
		fputs(i + 1 < rep->nframes ? ",\n" : "\n", out);
	}
	fputs("]},\n\"profiles\":[\n", out);
	/* one profile per process (rows are sorted by pid) */
	for (size_t i = 0; i < rep->n;) {
		size_t j = i;
		uint64_t total = 0;
		char pname[64];

		while (j < rep->n && rep->rows[j].pid == rep->rows[i].pid)
			total += rep->rows[j++].value * scale;
		fprintf(out, "%s{\"type\":\"sampled\",\"name\":", i ? ",\n" : "");
		{
			const struct report_proc *p = report_find_proc(rep, rep->rows[i].pid);

			snprintf(pname, sizeof(pname), "%s (%d)",
				 p && p->comm[0] ? p->comm : rep->rows[i].comm,
				 (int)rep->rows[i].pid);
		}
		json_write_string(out, pname);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\"samples\":[",
			cpu ? "nanoseconds" : bytes ? "bytes" : "microseconds", (unsigned long long)total);
		for (size_t k = i; k < j; k++) {
			const struct report_row *r = &rep->rows[k];

			fputs(k > i ? ",[" : "[", out);
			for (int f = 0; f < r->nframes; f++)
				fprintf(out, "%s%u", f ? "," : "", r->frames[f]);
			fputc(']', out);
		}
		fputs("],\"weights\":[", out);
		for (size_t k = i; k < j; k++)
			fprintf(out, "%s%llu", k > i ? "," : "",
				(unsigned long long)(rep->rows[k].value * scale));
		fputs("]}", out);
		i = j;
	}
	fputs("\n]}\n", out);
	return ferror(out) ? -1 : 0;
}
