/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pprof's profile.proto, gzipped, as go tool pprof, Pyroscope and Parca
 * read it. Encoding is libprotobuf-c's (code generated from
 * lib/report/pprof/profile.proto), compression zlib's.
 *
 * Every frame of the report is one Location:
 *  - Python: no mapping and no address (there is no machine code to look
 *    up), one Line of the function (qualname, file; start_line is the def)
 *  - native: its address in the process, under a Mapping of the file it
 *    came from (start, limit, file offset, path, build-id), so a back end
 *    can symbolize it again; named frames also carry a Line. Unnamed ones
 *    carry none and stay apart by their address.
 *  - kernel: its address under one "[kernel.kallsyms]" mapping
 *  - markers ("[truncated]", ...): a Line of a function of that name
 *
 * Readers simplify names that look like demangled C++ ("<module>" would
 * lose its "<...>") unless a function's system_name differs from its name:
 * Python and marker functions have an empty system_name, so their names
 * come out as written.
 *
 * Samples carry the labels pid, thread, thread_name, comm,
 * python_version and, with --async, task (strings, as Pyroscope and Parca
 * index them).
 */
#include "report/pprof.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "report/string_table.h"
#include "sys/text_escape.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;

#define KERNEL_MAPPING "[kernel.kallsyms]"
#define LABELS_PER_SAMPLE 6

struct pprof_build {
	struct string_table strings, function_keys, mapping_keys;
	Profile profile;
	ValueType types[2], period_type;
	ValueType *type_ptrs[2];
	Location *locations;
	Location **location_ptrs;
	Line *lines;
	Line **line_ptrs;
	Function *funcs;
	Function **func_ptrs;
	Mapping *mappings;
	Mapping **mapping_ptrs;
	bool *mapping_unnamed; /* a location of the mapping has no function */
	Sample *samples;
	Sample **sample_ptrs;
	Label *labels;
	Label **label_ptrs;
	uint64_t *location_ids;
	int64_t *values;
};

/* Index of s in the string table, escaped as text sinks do: proto3 strings
 * must be UTF-8, and go tool pprof prints names to a terminal as they are. */
static int64_t str_index(struct pprof_build *b, const char *s)
{
	size_t len = strlen(s), need = text_escape(NULL, 0, s, NULL);
	char *esc;
	long idx;

	if (need == len) /* every escape is longer than the byte it stands for */
		return string_table_intern(&b->strings, s, len);
	esc = malloc(need + 1);
	if (!esc)
		return -1;
	text_escape(esc, need + 1, s, NULL);
	idx = string_table_intern(&b->strings, esc, need);
	free(esc);
	return idx;
}

/* Id (1-based) of the function (kind, name, file); -1 out of memory. */
static int64_t function_id(struct pprof_build *b, const struct report_frame *f)
{
	const char *name = report_frame_name(f), *file = f->file ? f->file : "";
	size_t nlen = strlen(name), flen = strlen(file);
	char *key = malloc(nlen + flen + 3);
	long idx;

	if (!key)
		return -1;
	key[0] = (char)('0' + f->kind);
	memcpy(key + 1, name, nlen + 1);
	memcpy(key + 2 + nlen, file, flen);
	idx = string_table_intern(&b->function_keys, key, nlen + flen + 2);
	free(key);
	if (idx < 0)
		return -1;
	if ((size_t)idx == b->profile.n_function) { /* new */
		Function *fn = &b->funcs[idx];

		perftools__profiles__function__init(fn);
		fn->id = (uint64_t)idx + 1;
		fn->name = str_index(b, name);
		/* empty for Python and markers: "already demangled" (see top) */
		fn->system_name = f->kind == REPORT_FRAME_NATIVE || f->kind == REPORT_FRAME_KERNEL
					  ? fn->name
					  : 0;
		fn->filename = str_index(b, file);
		fn->start_line = f->kind == REPORT_FRAME_PYTHON ? f->first_line : 0;
		b->func_ptrs[idx] = fn;
		b->profile.n_function++;
	}
	return idx + 1;
}

/* Id (1-based) of the mapping frame f lies in; 0 for Python and markers. */
static uint64_t mapping_id(struct pprof_build *b, const struct report_frame *f)
{
	char key[1200];
	int n;
	long idx;

	if (f->kind == REPORT_FRAME_KERNEL)
		n = snprintf(key, sizeof(key), "k");
	else if (f->kind == REPORT_FRAME_NATIVE && f->module)
		n = snprintf(key, sizeof(key), "n%llx-%llx@%llx %s %s",
			     (unsigned long long)f->map_start, (unsigned long long)f->map_end,
			     (unsigned long long)f->map_offset, f->build_id ? f->build_id : "",
			     f->module);
	else
		return 0; /* Python, markers, and machine code in no file */
	idx = string_table_intern(&b->mapping_keys, key,
				  (size_t)n < sizeof(key) ? (size_t)n : sizeof(key) - 1);
	if (idx < 0)
		return 0;
	if ((size_t)idx == b->profile.n_mapping) { /* new */
		Mapping *m = &b->mappings[idx];

		perftools__profiles__mapping__init(m);
		m->id = (uint64_t)idx + 1;
		if (f->kind == REPORT_FRAME_KERNEL) {
			m->filename = str_index(b, KERNEL_MAPPING);
		} else {
			m->memory_start = f->map_start;
			m->memory_limit = f->map_end;
			m->file_offset = f->map_offset;
			m->filename = str_index(b, f->module);
			m->build_id = f->build_id ? str_index(b, f->build_id) : 0;
		}
		b->mapping_ptrs[idx] = m;
		b->profile.n_mapping++;
	}
	return (uint64_t)idx + 1;
}

/*
 * Readers name a profile after its first mapping ("File: python3.11"): the
 * interpreter's file, its mapping if native frames are in it, else one of
 * its own that no location uses.
 */
static void add_main_mapping(struct pprof_build *b, const struct report *rep)
{
	const char *interp = rep->nprocs ? rep->procs[0].interp_path : NULL;
	Mapping *m = &b->mappings[0];

	if (!interp)
		return;
	for (size_t i = 0; i < rep->nframes; i++)
		if (rep->frames[i].kind == REPORT_FRAME_NATIVE && rep->frames[i].module &&
		    strcmp(rep->frames[i].module, interp) == 0) {
			mapping_id(b, &rep->frames[i]);
			return;
		}
	perftools__profiles__mapping__init(m);
	m->id = 1;
	m->filename = str_index(b, interp);
	m->has_functions = true; /* nothing in it to look up */
	b->mapping_ptrs[0] = m;
	b->profile.n_mapping = 1;
	/* a key no frame has: the mapping stays apart */
	string_table_intern(&b->mapping_keys, "main", 4);
}

static int add_locations(struct pprof_build *b, const struct report *rep)
{
	size_t n = rep->nframes;

	b->locations = calloc(n + 1, sizeof(*b->locations));
	b->location_ptrs = calloc(n + 1, sizeof(*b->location_ptrs));
	b->lines = calloc(n + 1, sizeof(*b->lines));
	b->line_ptrs = calloc(n + 1, sizeof(*b->line_ptrs));
	b->funcs = calloc(n + 1, sizeof(*b->funcs));
	b->func_ptrs = calloc(n + 1, sizeof(*b->func_ptrs));
	b->mappings = calloc(n + 1, sizeof(*b->mappings));
	b->mapping_ptrs = calloc(n + 1, sizeof(*b->mapping_ptrs));
	b->mapping_unnamed = calloc(n + 1, sizeof(*b->mapping_unnamed));
	if (!b->locations || !b->location_ptrs || !b->lines || !b->line_ptrs || !b->funcs ||
	    !b->func_ptrs || !b->mappings || !b->mapping_ptrs || !b->mapping_unnamed)
		return -1;
	add_main_mapping(b, rep);
	for (size_t i = 0; i < n; i++) {
		const struct report_frame *f = &rep->frames[i];
		Location *l = &b->locations[i];
		bool named = f->name || f->kind == REPORT_FRAME_PYTHON || f->kind == REPORT_FRAME_MARKER;

		perftools__profiles__location__init(l);
		l->id = i + 1;
		l->mapping_id = mapping_id(b, f);
		if (f->kind == REPORT_FRAME_NATIVE || f->kind == REPORT_FRAME_KERNEL)
			l->address = f->addr;
		if (named) {
			int64_t fid = function_id(b, f);

			if (fid < 0)
				return -1;
			perftools__profiles__line__init(&b->lines[i]);
			b->lines[i].function_id = (uint64_t)fid;
			b->lines[i].line = f->kind == REPORT_FRAME_PYTHON && f->line > 0 ? f->line : 0;
			b->line_ptrs[i] = &b->lines[i];
			l->n_line = 1;
			l->line = &b->line_ptrs[i];
		} else if (l->mapping_id) {
			b->mapping_unnamed[l->mapping_id - 1] = true;
		}
		b->location_ptrs[i] = l;
	}
	/* a mapping whose frames all have names needs no symbolizing; one
	 * with unnamed frames says so, and readers look its file up */
	for (size_t i = 0; i < b->profile.n_mapping; i++)
		b->mappings[i].has_functions = !b->mapping_unnamed[i];
	b->profile.location = b->location_ptrs;
	b->profile.n_location = n;
	b->profile.function = b->func_ptrs;
	b->profile.mapping = b->mapping_ptrs;
	return 0;
}

static void set_label(struct pprof_build *b, Label *l, const char *key, const char *value)
{
	perftools__profiles__label__init(l);
	l->key = str_index(b, key);
	l->str = str_index(b, value);
}

/* cpu: samples and CPU time; else one value, r->value * scale (us to ns,
 * or bytes as they are) */
static int add_samples(struct pprof_build *b, const struct report *rep, bool cpu,
		       int64_t scale)
{
	size_t nloc = 0, at = 0;

	for (size_t i = 0; i < rep->n; i++)
		nloc += (size_t)rep->rows[i].nframes;
	b->samples = calloc(rep->n + 1, sizeof(*b->samples));
	b->sample_ptrs = calloc(rep->n + 1, sizeof(*b->sample_ptrs));
	b->labels = calloc(LABELS_PER_SAMPLE * rep->n + 1, sizeof(*b->labels));
	b->label_ptrs = calloc(LABELS_PER_SAMPLE * rep->n + 1, sizeof(*b->label_ptrs));
	b->location_ids = calloc(nloc + 1, sizeof(*b->location_ids));
	b->values = calloc(2 * rep->n + 1, sizeof(*b->values));
	if (!b->samples || !b->sample_ptrs || !b->labels || !b->label_ptrs || !b->location_ids ||
	    !b->values)
		return -1;
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = &rep->rows[i];
		const struct report_proc *p = report_find_proc(rep, r->pid);
		Sample *s = &b->samples[i];
		uint64_t *ids = &b->location_ids[at];
		Label *lab = &b->labels[LABELS_PER_SAMPLE * i];
		Label **labp = &b->label_ptrs[LABELS_PER_SAMPLE * i];
		size_t nl = 0;
		char num[24];

		perftools__profiles__sample__init(s);
		/* rows are root first; pprof wants the leaf first */
		for (int k = 0; k < r->nframes; k++)
			ids[k] = (uint64_t)r->frames[r->nframes - 1 - k] + 1;
		s->location_id = ids;
		s->n_location_id = (size_t)r->nframes;
		at += (size_t)r->nframes;
		s->value = &b->values[2 * i];
		if (cpu) {
			b->values[2 * i] = (int64_t)r->value;
			b->values[2 * i + 1] = (int64_t)(r->value * rep->period_ns);
			s->n_value = 2;
		} else {
			b->values[2 * i] = (int64_t)(r->value * (uint64_t)scale); /* unsigned: wraps, no UB */
			s->n_value = 1;
		}
		snprintf(num, sizeof(num), "%d", (int)r->pid);
		set_label(b, &lab[nl++], "pid", num);
		if (r->tid) {
			snprintf(num, sizeof(num), "%d", (int)r->tid);
			set_label(b, &lab[nl++], "thread", num);
		}
		set_label(b, &lab[nl++], "thread_name", report_row_thread_name(r));
		if (p && p->comm[0])
			set_label(b, &lab[nl++], "comm", p->comm);
		if (p && p->python_version[0])
			set_label(b, &lab[nl++], "python_version", p->python_version);
		if (r->task)
			set_label(b, &lab[nl++], "task", r->task);
		for (size_t k = 0; k < nl; k++)
			labp[k] = &lab[k];
		s->label = labp;
		s->n_label = nl;
		b->sample_ptrs[i] = s;
	}
	b->profile.sample = b->sample_ptrs;
	b->profile.n_sample = rep->n;
	return 0;
}

static void set_types(struct pprof_build *b, bool cpu, bool bytes, uint64_t period_ns,
		      const char *bytes_type)
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
		p->period = (int64_t)period_ns;
		p->n_sample_type = 2;
	} else if (bytes) {
		/* pymem: bytes made resident (pprof's heap profiles say "space") */
		b->types[0].type = str_index(b, bytes_type ? bytes_type : "resident_space");
		b->types[0].unit = str_index(b, "bytes");
		b->period_type = b->types[0];
		p->period = 1;
		p->n_sample_type = 1;
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
	string_table_free(&b->function_keys);
	string_table_free(&b->mapping_keys);
	free(b->locations);
	free(b->location_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->funcs);
	free(b->func_ptrs);
	free(b->mappings);
	free(b->mapping_ptrs);
	free(b->mapping_unnamed);
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
	bool cpu = strcmp(unit, "samples") == 0, bytes = strcmp(unit, "bytes") == 0;
	uint8_t *data = NULL;
	int64_t comment;
	size_t len;
	int rc = -1;

	if (!b)
		return -1;
	perftools__profiles__profile__init(&b->profile);
	str_index(b, ""); /* string 0 must be empty */
	set_types(b, cpu, bytes, rep->period_ns, rep->bytes_type);
	if (add_locations(b, rep) < 0 || add_samples(b, rep, cpu, bytes ? 1 : 1000) < 0)
		goto out;
	b->profile.time_nanos = (int64_t)rep->start_realtime_ns;
	b->profile.duration_nanos = (int64_t)rep->duration_ns;
	if (rep->target[0]) {
		comment = str_index(b, rep->target);
		b->profile.comment = &comment;
		b->profile.n_comment = 1;
	}
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
