// SPDX-License-Identifier: Apache-2.0
/*
 * lib/report/pprof.c given hostile names: the gzipped profile.proto is
 * inflated and decoded again (libprotobuf-c), and must describe the rows:
 * one sample per row, every id it uses defined, string 0 empty, every
 * string UTF-8 without a control character (names escaped as text sinks
 * escape them). Input: rows, see fuzz_rows.h.
 */
#include <zlib.h>

#include "fuzz_rows.h"
#include "profile.pb-c.h"
#include "report/pprof.h"
#include "sys/text_escape.h"

static uint8_t *gunzip(const char *in, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = 1 << 16, n = 0;
	uint8_t *out = malloc(cap);
	int rc = Z_OK;

	FUZZ_CHECK(out && inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	while (rc != Z_STREAM_END) {
		if (n == cap) {
			cap *= 2;
			out = realloc(out, cap);
			FUZZ_CHECK(out);
		}
		z.next_out = out + n;
		z.avail_out = (uInt)(cap - n);
		rc = inflate(&z, Z_NO_FLUSH);
		FUZZ_CHECK(rc == Z_OK || rc == Z_STREAM_END);
		n = cap - z.avail_out;
	}
	FUZZ_CHECK(z.avail_in == 0);
	inflateEnd(&z);
	*out_len = n;
	return out;
}

static const char *str_at(const Perftools__Profiles__Profile *p, int64_t i)
{
	FUZZ_CHECK(i >= 0 && (uint64_t)i < p->n_string_table);
	return p->string_table[i];
}

/* String i is want, escaped (sys/text_escape.h). */
static void check_str(const Perftools__Profiles__Profile *p, int64_t i, const char *want)
{
	size_t n = text_escape(NULL, 0, want, NULL);
	char *e = malloc(n + 1);

	FUZZ_CHECK(e);
	text_escape(e, n + 1, want, NULL);
	FUZZ_CHECK(strcmp(str_at(p, i), e) == 0);
	free(e);
}

/* Names come back as written, escaped (pprof's string table holds C
 * strings: a name is cut at its first NUL, which report names never hold). */
static void check_frame(const Perftools__Profiles__Profile *p,
			const Perftools__Profiles__Location *l, const struct report_frame *f)
{
	bool named = f->name || f->kind == REPORT_FRAME_PYTHON || f->kind == REPORT_FRAME_MARKER;

	FUZZ_CHECK(l->n_line == (named ? 1u : 0u));
	FUZZ_CHECK(l->mapping_id <= p->n_mapping);
	FUZZ_CHECK((l->mapping_id != 0) ==
		   ((f->kind == REPORT_FRAME_NATIVE && f->module) || f->kind == REPORT_FRAME_KERNEL));
	if (f->kind == REPORT_FRAME_NATIVE || f->kind == REPORT_FRAME_KERNEL)
		FUZZ_CHECK(l->address == f->addr);
	if (f->kind == REPORT_FRAME_NATIVE && f->module) {
		const Perftools__Profiles__Mapping *m = p->mapping[l->mapping_id - 1];

		check_str(p, m->filename, f->module);
		FUZZ_CHECK(m->memory_start <= l->address && l->address < m->memory_limit);
		check_str(p, m->build_id, f->build_id ? f->build_id : "");
		FUZZ_CHECK(m->has_functions == false || named);
	}
	if (named) {
		const Perftools__Profiles__Function *fn;

		FUZZ_CHECK(l->line[0]->function_id >= 1 && l->line[0]->function_id <= p->n_function);
		fn = p->function[l->line[0]->function_id - 1];
		check_str(p, fn->name, report_frame_name(f));
		check_str(p, fn->filename, f->file ? f->file : "");
		/* a reader must not "demangle" Python names: system_name differs */
		if (f->kind == REPORT_FRAME_PYTHON || f->kind == REPORT_FRAME_MARKER)
			FUZZ_CHECK(fn->system_name == 0);
		if (f->kind == REPORT_FRAME_PYTHON)
			FUZZ_CHECK(l->line[0]->line == (f->line > 0 ? f->line : 0));
	}
}

static void check_profile(const Perftools__Profiles__Profile *p, const struct report *rep,
			  bool cpu)
{
	FUZZ_CHECK(p->n_string_table > 0 && p->string_table[0][0] == '\0');
	for (size_t i = 0; i < p->n_string_table; i++)
		for (const char *c = p->string_table[i]; *c; c += text_char_len(c))
			FUZZ_CHECK(text_char_len(c) > 0);
	FUZZ_CHECK(p->n_sample == rep->n);
	FUZZ_CHECK(p->n_sample_type == (cpu ? 2u : 1u));
	FUZZ_CHECK(p->n_location == rep->nframes);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const struct report_row *r = &rep->rows[i];
		bool pid = false;

		FUZZ_CHECK(s->n_value == p->n_sample_type);
		FUZZ_CHECK(s->n_location_id == (size_t)r->nframes);
		for (size_t k = 0; k < s->n_location_id; k++)
			FUZZ_CHECK(s->location_id[k] == r->frames[r->nframes - 1 - k] + 1u);
		for (size_t k = 0; k < s->n_label; k++) {
			const char *key = str_at(p, s->label[k]->key), *val = str_at(p, s->label[k]->str);

			FUZZ_CHECK(s->label[k]->key > 0);
			if (strcmp(key, "pid") == 0)
				pid = atoi(val) == (int)r->pid;
			if (strcmp(key, "thread_name") == 0)
				check_str(p, s->label[k]->str, r->comm);
		}
		FUZZ_CHECK(pid);
	}
	for (size_t i = 0; i < p->n_location; i++) {
		FUZZ_CHECK(p->location[i]->id == i + 1);
		check_frame(p, p->location[i], &rep->frames[i]);
	}
	for (size_t i = 0; i < p->n_function; i++)
		FUZZ_CHECK(p->function[i]->id == i + 1);
	for (size_t i = 0; i < p->n_mapping; i++)
		FUZZ_CHECK(p->mapping[i]->id == i + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report rep;

	fuzz_rows_build(&rep, data, size);
	for (int cpu = 0; cpu < 2; cpu++) {
		struct fuzz_out out;
		Perftools__Profiles__Profile *p;
		uint8_t *raw;
		size_t len;

		fuzz_out_open(&out);
		FUZZ_CHECK(report_write_pprof(&rep, out.f, cpu ? "samples" : "us") == 0);
		fuzz_out_close(&out);
		raw = gunzip(out.buf, out.len, &len);
		p = perftools__profiles__profile__unpack(NULL, len, raw);
		FUZZ_CHECK(p);
		check_profile(p, &rep, cpu);
		perftools__profiles__profile__free_unpacked(p, NULL);
		free(raw);
		fuzz_out_free(&out);
	}
	report_free(&rep);
	return 0;
}
