/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pprof's profile.proto, gzipped, as go tool pprof, Pyroscope and Parca
 * read it. Encoding is libprotobuf-c's (code generated from
 * lib/pprof/profile.proto), compression zlib's.
 *
 * Each distinct frame becomes a Location with one Line; functions are
 * (name, file) pairs so one Python function is one pprof function whatever
 * line it was at. Samples carry the process id and thread name as labels.
 */
#include "report/pprof.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "report/string_table.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

struct pprof_build {
	struct string_table strings, frames, functions;
	Profile profile;
	ValueType types[2], period_type;
	ValueType *type_ptrs[2];
	Perftools__Profiles__Mapping mapping;
	Perftools__Profiles__Mapping *mapping_ptr;
	Location *locations;
	Line *lines;
	Line **line_ptrs;
	Location **location_ptrs;
	Function *funcs;
	Function **func_ptrs;
	size_t nfuncs, cap_funcs;
	Sample *samples;
	Sample **sample_ptrs;
	Label *labels;
	Label **label_ptrs;
	uint64_t *location_ids;
	int64_t *values;
	uint64_t period_ns_value;
};

static int64_t str_index(struct pprof_build *b, const char *s)
{
	return string_table_intern(&b->strings, s, strlen(s));
}

/*
 * "qualname (file:line)" -> name, file, line; "name_[k]" -> name, kernel;
 * anything else is a name alone.
 */
static void split_frame(const char *frame, size_t len, char *name, size_t name_len,
			char *file, size_t file_len, long *line)
{
	const char *open = NULL, *colon = NULL;

	*line = 0;
	file[0] = '\0';
	if (len > 2 && frame[len - 1] == ')') {
		for (const char *p = frame + len - 1; p > frame; p--)
			if (*p == '(' && p[-1] == ' ') {
				open = p;
				break;
			}
		for (const char *p = frame + len - 1; open && p > open; p--)
			if (*p == ':') {
				colon = p;
				break;
			}
	}
	if (open && colon) {
		snprintf(name, name_len, "%.*s", (int)(open - 1 - frame), frame);
		snprintf(file, file_len, "%.*s", (int)(colon - open - 1), open + 1);
		*line = strtol(colon + 1, NULL, 10);
	} else if (len > 4 && memcmp(frame + len - 4, "_[k]", 4) == 0) {
		snprintf(name, name_len, "%.*s", (int)(len - 4), frame);
		snprintf(file, file_len, "[kernel]");
	} else {
		snprintf(name, name_len, "%.*s", (int)len, frame);
	}
}

/* Function id (1-based) of (name, file). */
static int64_t function_id(struct pprof_build *b, const char *name, const char *file, long line)
{
	char key[2400];
	int n = snprintf(key, sizeof(key), "%s%c%s", name, '\0', file);
	long idx = string_table_intern(&b->functions, key, (size_t)n < sizeof(key) ? (size_t)n : sizeof(key) - 1);

	if (idx < 0)
		return -1;
	if ((size_t)idx == b->nfuncs) {
		Function *f;

		if (b->nfuncs == b->cap_funcs) {
			size_t cap = b->cap_funcs ? b->cap_funcs * 2 : 256;
			Function *v = realloc(b->funcs, cap * sizeof(*v));

			if (!v)
				return -1;
			b->funcs = v;
			b->cap_funcs = cap;
		}
		f = &b->funcs[b->nfuncs++];
		perftools__profiles__function__init(f);
		f->id = (uint64_t)idx + 1;
		f->name = str_index(b, name);
		f->system_name = f->name;
		f->filename = str_index(b, file);
		f->start_line = line; /* the first line seen: the best we know */
	}
	return idx + 1;
}

static int add_frames(struct pprof_build *b, const struct report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		const char *p = rep->rows[i].frames;

		while (*p) {
			const char *end = strchr(p, ';');
			size_t len = end ? (size_t)(end - p) : strlen(p);

			if (string_table_intern(&b->frames, p, len) < 0)
				return -1;
			p += len + (end != NULL);
		}
	}
	b->locations = calloc(b->frames.n + 1, sizeof(*b->locations));
	b->lines = calloc(b->frames.n + 1, sizeof(*b->lines));
	b->line_ptrs = calloc(b->frames.n + 1, sizeof(*b->line_ptrs));
	b->location_ptrs = calloc(b->frames.n + 1, sizeof(*b->location_ptrs));
	if (!b->locations || !b->lines || !b->line_ptrs || !b->location_ptrs)
		return -1;
	for (size_t i = 0; i < b->frames.n; i++) {
		char name[1200], file[1200];
		long line;
		int64_t fid;

		split_frame(b->frames.v[i], b->frames.lens[i], name, sizeof(name), file,
			    sizeof(file), &line);
		fid = function_id(b, name, file, line);
		if (fid < 0)
			return -1;
		perftools__profiles__line__init(&b->lines[i]);
		b->lines[i].function_id = (uint64_t)fid;
		b->lines[i].line = line;
		b->line_ptrs[i] = &b->lines[i];
		perftools__profiles__location__init(&b->locations[i]);
		b->locations[i].id = i + 1;
		b->locations[i].mapping_id = 1;
		b->locations[i].n_line = 1;
		b->locations[i].line = &b->line_ptrs[i];
		b->location_ptrs[i] = &b->locations[i];
	}
	b->func_ptrs = calloc(b->nfuncs + 1, sizeof(*b->func_ptrs));
	if (!b->func_ptrs)
		return -1;
	for (size_t i = 0; i < b->nfuncs; i++)
		b->func_ptrs[i] = &b->funcs[i];
	return 0;
}

static int add_samples(struct pprof_build *b, const struct report *rep, bool cpu)
{
	size_t nloc = 0, at = 0;
	int64_t pid_key = str_index(b, "pid"), comm_key = str_index(b, "thread_name");

	for (size_t i = 0; i < rep->n; i++)
		nloc += (size_t)(rep->rows[i].nuser + rep->rows[i].nkernel) + 2;
	b->samples = calloc(rep->n + 1, sizeof(*b->samples));
	b->sample_ptrs = calloc(rep->n + 1, sizeof(*b->sample_ptrs));
	b->labels = calloc(2 * rep->n + 1, sizeof(*b->labels));
	b->label_ptrs = calloc(2 * rep->n + 1, sizeof(*b->label_ptrs));
	b->location_ids = calloc(nloc + 1, sizeof(*b->location_ids));
	b->values = calloc(2 * rep->n + 1, sizeof(*b->values));
	if (!b->samples || !b->sample_ptrs || !b->labels || !b->label_ptrs || !b->location_ids ||
	    !b->values)
		return -1;
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = &rep->rows[i];
		Sample *s = &b->samples[i];
		uint64_t *ids = &b->location_ids[at];
		size_t n = 0;

		perftools__profiles__sample__init(s);
		for (const char *p = r->frames; *p && at + n < nloc;) {
			const char *end = strchr(p, ';');
			size_t len = end ? (size_t)(end - p) : strlen(p);

			ids[n++] = (uint64_t)string_table_intern(&b->frames, p, len) + 1;
			p += len + (end != NULL);
		}
		/* rows are root first; pprof wants the leaf first */
		for (size_t k = 0; k < n / 2; k++) {
			uint64_t t = ids[k];

			ids[k] = ids[n - 1 - k];
			ids[n - 1 - k] = t;
		}
		s->location_id = ids;
		s->n_location_id = n;
		at += n;
		s->value = &b->values[2 * i];
		if (cpu) {
			b->values[2 * i] = (int64_t)r->value;
			b->values[2 * i + 1] = (int64_t)(r->value * rep->period_ns);
			s->n_value = 2;
		} else {
			b->values[2 * i] = (int64_t)(r->value * 1000); /* us -> ns */
			s->n_value = 1;
		}
		perftools__profiles__label__init(&b->labels[2 * i]);
		b->labels[2 * i].key = pid_key;
		b->labels[2 * i].num = r->pid;
		perftools__profiles__label__init(&b->labels[2 * i + 1]);
		b->labels[2 * i + 1].key = comm_key;
		b->labels[2 * i + 1].str = str_index(b, r->comm);
		b->label_ptrs[2 * i] = &b->labels[2 * i];
		b->label_ptrs[2 * i + 1] = &b->labels[2 * i + 1];
		s->label = &b->label_ptrs[2 * i];
		s->n_label = 2;
		b->sample_ptrs[i] = s;
	}
	return 0;
}

static void set_types(struct pprof_build *b, bool cpu)
{
	Profile *p = &b->profile;

	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&b->types[i]);
		b->type_ptrs[i] = &b->types[i];
	}
	perftools__profiles__value_type__init(&b->period_type);
	if (cpu) {
		b->types[0].type = str_index(b, "samples");
		b->types[0].unit = str_index(b, "count");
		b->types[1].type = str_index(b, "cpu");
		b->types[1].unit = str_index(b, "nanoseconds");
		b->period_type = b->types[1];
		p->period = (int64_t)b->period_ns_value;
		p->n_sample_type = 2;
	} else {
		b->types[0].type = str_index(b, "off_cpu");
		b->types[0].unit = str_index(b, "nanoseconds");
		b->period_type = b->types[0];
		p->period = 1;
		p->n_sample_type = 1;
	}
	p->sample_type = b->type_ptrs;
	p->period_type = &b->period_type;
}

/* gzip (as pprof files usually are) straight to out. */
static int write_gzip(FILE *out, const uint8_t *data, size_t len)
{
	z_stream z = { 0 };
	uint8_t buf[65536];
	int rc;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (uint8_t *)data;
	z.avail_in = (uInt)len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		rc = deflate(&z, Z_FINISH);
		if (rc == Z_STREAM_ERROR)
			break;
		if (fwrite(buf, 1, sizeof(buf) - z.avail_out, out) != sizeof(buf) - z.avail_out) {
			rc = Z_STREAM_ERROR;
			break;
		}
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -1;
}

static void build_free(struct pprof_build *b)
{
	string_table_free(&b->strings);
	string_table_free(&b->frames);
	string_table_free(&b->functions);
	free(b->locations);
	free(b->lines);
	free(b->line_ptrs);
	free(b->location_ptrs);
	free(b->funcs);
	free(b->func_ptrs);
	free(b->samples);
	free(b->sample_ptrs);
	free(b->labels);
	free(b->label_ptrs);
	free(b->location_ids);
	free(b->values);
}

int report_write_pprof(const struct report *rep, FILE *out, const char *unit)
{
	struct pprof_build *b = calloc(1, sizeof(*b));
	bool cpu = strcmp(unit, "samples") == 0;
	uint8_t *data = NULL;
	size_t len;
	int rc = -1;

	if (!b)
		return -1;
	perftools__profiles__profile__init(&b->profile);
	str_index(b, ""); /* string 0 must be empty */
	b->period_ns_value = rep->period_ns;
	set_types(b, cpu);
	if (add_frames(b, rep) < 0 || add_samples(b, rep, cpu) < 0)
		goto out;
	/* One mapping that says frames come symbolized: nothing to look up. */
	perftools__profiles__mapping__init(&b->mapping);
	b->mapping.id = 1;
	b->mapping.filename = str_index(b, "[python]");
	b->mapping.has_functions = b->mapping.has_filenames = 1;
	b->mapping.has_line_numbers = 1;
	b->mapping_ptr = &b->mapping;
	b->profile.mapping = &b->mapping_ptr;
	b->profile.n_mapping = 1;
	b->profile.location = b->location_ptrs;
	b->profile.n_location = b->frames.n;
	b->profile.function = b->func_ptrs;
	b->profile.n_function = b->nfuncs;
	b->profile.sample = b->sample_ptrs;
	b->profile.n_sample = rep->n;
	b->profile.time_nanos = (int64_t)rep->start_realtime_ns;
	b->profile.duration_nanos = (int64_t)rep->duration_ns;
	/* the string table last: everything above added to it */
	b->profile.string_table = b->strings.v;
	b->profile.n_string_table = b->strings.n;
	len = perftools__profiles__profile__get_packed_size(&b->profile);
	data = malloc(len ? len : 1);
	if (!data)
		goto out;
	perftools__profiles__profile__pack(&b->profile, data);
	rc = write_gzip(out, data, len);
	if (ferror(out))
		rc = -1;
out:
	free(data);
	build_free(b);
	free(b);
	return rc;
}
