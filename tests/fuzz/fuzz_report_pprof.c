// SPDX-License-Identifier: Apache-2.0
/*
 * lib/report/pprof.c given hostile names: the gzipped profile.proto is
 * inflated and decoded again (libprotobuf-c), and must describe the rows:
 * one sample per row, every id it uses defined, string 0 empty.
 * Input: rows, see fuzz_rows.h.
 */
#include <zlib.h>

#include "fuzz_rows.h"
#include "profile.pb-c.h"
#include "report/pprof.h"

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

static void check_profile(const Perftools__Profiles__Profile *p, const struct report *rep,
			  bool cpu)
{
	FUZZ_CHECK(p->n_string_table > 0 && p->string_table[0][0] == '\0');
	FUZZ_CHECK(p->n_sample == rep->n);
	FUZZ_CHECK(p->n_sample_type == (cpu ? 2u : 1u));
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		FUZZ_CHECK(s->n_value == p->n_sample_type);
		for (size_t k = 0; k < s->n_location_id; k++)
			FUZZ_CHECK(s->location_id[k] >= 1 && s->location_id[k] <= p->n_location);
		for (size_t k = 0; k < s->n_label; k++)
			FUZZ_CHECK(s->label[k]->key > 0 &&
				   (uint64_t)s->label[k]->key < p->n_string_table &&
				   s->label[k]->str >= 0 &&
				   (uint64_t)s->label[k]->str < p->n_string_table);
	}
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		FUZZ_CHECK(l->id == i + 1 && l->n_line == 1);
		FUZZ_CHECK(l->line[0]->function_id >= 1 && l->line[0]->function_id <= p->n_function);
	}
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];

		FUZZ_CHECK(f->id == i + 1);
		FUZZ_CHECK(f->name >= 0 && (uint64_t)f->name < p->n_string_table);
		FUZZ_CHECK(f->filename >= 0 && (uint64_t)f->filename < p->n_string_table);
	}
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
