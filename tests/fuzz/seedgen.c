// SPDX-License-Identifier: Apache-2.0
/*
 * Writes seed inputs for the fuzz targets from real data (run by run.sh):
 *
 *   seedgen debug-offsets OUTDIR ELF...
 *       the _Py_DebugOffsets each 3.13+ interpreter starts _PyRuntime with
 *       (from the file's initialised data), as fuzz_debug_offsets inputs;
 *   seedgen mem OUTDIR LINETABLE_DIR [DEBUG_OFFSETS_SEED...]
 *       memory images of a small Python process (see fuzz_mem.h) for each
 *       version 3.8 to 3.15: _PyRuntime, an interpreter, two thread states,
 *       a frame chain with a shim, code objects with str names of every
 *       kind (one not compact) and real line tables. Offsets are the
 *       built-in tables (3.8 to 3.12) and the real interpreters' own
 *       _Py_DebugOffsets (3.13+), as the tools would use them. Written to
 *       OUTDIR/{fuzz_py_code,fuzz_code_names,fuzz_py_frames,fuzz_py_threads,
 *       fuzz_py_objects}.
 */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include "cpython/offsets_debug.h"
#include "sys/elf_image.h"
#include "fuzz_mem.h"
#include "fuzz_minors.h"
#include "cpython/gil.h"

static void write_file(const char *dir, const char *name, const void *a, size_t alen,
		       const void *b, size_t blen)
{
	char path[4096];
	FILE *f;

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen) ||
	    fclose(f) != 0) {
		fprintf(stderr, "seedgen: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* ---- debug-offsets ---------------------------------------------------- */

static int cmd_debug_offsets(const char *out, int argc, char **argv)
{
	int written = 0;

	for (int i = 0; i < argc; i++) {
		struct elf_image img;
		uint8_t raw[DEBUG_OFFSETS_MAX_BYTES];
		uint64_t addr, size, hex;
		size_t need;
		uint8_t sel;
		char name[256];
		const char *base = strrchr(argv[i], '/');
		int minor;

		if (elf_image_open(&img, argv[i]) != 0)
			continue;
		if ((elf_image_symbol(&img, "_PyRuntime", &addr, &size) == 0 ||
		     elf_image_section(&img, ".PyRuntime", &addr, &size) == 0) &&
		    elf_image_read_vaddr(&img, addr, raw, 16) == 0 &&
		    memcmp(raw, DEBUG_OFFSETS_COOKIE, 8) == 0) {
			memcpy(&hex, raw + 8, 8);
			minor = (int)((hex >> 16) & 0xff);
			need = debug_offsets_size(minor);
			if (need && elf_image_read_vaddr(&img, addr, raw, need) == 0) {
				sel = (uint8_t)(minor - 12);
				snprintf(name, sizeof(name), "%s-3.%d", base ? base + 1 : argv[i], minor);
				write_file(out, name, &sel, 1, raw, need);
				written++;
			}
		}
		elf_image_close(&img);
	}
	printf("seedgen: %d _Py_DebugOffsets tables\n", written);
	return 0;
}

/* ---- memory images ---------------------------------------------------- */

#define IMAGE_MAX (1 << 16)

struct image {
	struct fuzz_mem_header h;
	uint8_t buf[IMAGE_MAX]; /* buf[0] is at FUZZ_BASE + sizeof(h) */
	size_t used;
	struct py_offsets o;
	int minor;
	bool ft;
};

static uint64_t im_alloc(struct image *im, size_t n)
{
	uint64_t a;

	im->used = (im->used + 15) & ~(size_t)15;
	if (im->used + n > sizeof(im->buf)) {
		fprintf(stderr, "seedgen: image too large\n");
		exit(1);
	}
	a = FUZZ_BASE + sizeof(im->h) + im->used;
	im->used += n;
	return a;
}

static void im_put(struct image *im, uint64_t addr, int32_t off, const void *v, size_t n)
{
	if (off < 0)
		return;
	memcpy(im->buf + (addr - FUZZ_BASE - sizeof(im->h)) + off, v, n);
}

static void put64(struct image *im, uint64_t addr, int32_t off, uint64_t v)
{
	im_put(im, addr, off, &v, 8);
}

static void put32(struct image *im, uint64_t addr, int32_t off, uint32_t v)
{
	im_put(im, addr, off, &v, 4);
}

static void put8(struct image *im, uint64_t addr, int32_t off, uint8_t v)
{
	im_put(im, addr, off, &v, 1);
}

/* Bytes an object needs to hold every listed field. */
static size_t span(const int32_t *fields, size_t n)
{
	int32_t max = 0;

	for (size_t i = 0; i < n; i++)
		if (fields[i] > max)
			max = fields[i];
	return (size_t)max + 8;
}

static size_t utf8_decode(const char *s, uint32_t *cps, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p && n < max) {
		uint32_t cp = *p;
		int more = cp >= 0xf0 ? 3 : cp >= 0xe0 ? 2 : cp >= 0xc0 ? 1 : 0;

		cp &= more ? 0x3f >> more : 0x7f;
		p++;
		for (; more && *p; more--, p++)
			cp = cp << 6 | (*p & 0x3f);
		cps[n++] = cp;
	}
	return n;
}

static uint64_t make_str(struct image *im, const char *utf8, bool compact)
{
	const struct py_offsets *o = &im->o;
	uint32_t cps[2048], maxcp = 0, state, shift;
	size_t n = utf8_decode(utf8, cps, 2048), kind, header;
	uint64_t obj, data, hash = 1469598103934665603ULL;
	bool ascii;

	for (size_t i = 0; i < n; i++) {
		if (cps[i] > maxcp)
			maxcp = cps[i];
		hash = (hash ^ cps[i]) * 1099511628211ULL;
	}
	kind = maxcp < 0x100 ? 1 : maxcp < 0x10000 ? 2 : 4;
	ascii = maxcp < 0x80 && compact;
	header = (size_t)(ascii ? o->unicode_ascii_size : o->unicode_compact_size);
	if (compact) {
		obj = im_alloc(im, header + (n + 1) * kind);
		data = obj + header;
	} else {
		obj = im_alloc(im, (size_t)o->unicode_compact_size + 8);
		data = im_alloc(im, (n + 1) * kind);
		put64(im, obj, o->unicode_compact_size, data);
	}
	put64(im, obj, o->object_type, FUZZ_TYPE_UNICODE);
	put64(im, obj, o->unicode_length, n);
	put64(im, obj, o->unicode_length + 8, hash);
	shift = im->ft && im->minor >= 14 ? 8 : 2;
	state = 1u | (uint32_t)kind << shift | (uint32_t)compact << (shift + 3) |
		(uint32_t)ascii << (shift + 4) | (im->minor <= 11 ? 1u << (shift + 5) : 0);
	put32(im, obj, o->unicode_state, state);
	for (size_t i = 0; i < n; i++)
		im_put(im, data, (int32_t)(i * kind), &cps[i], kind);
	return obj;
}

static uint64_t make_bytes(struct image *im, const uint8_t *b, size_t n)
{
	uint64_t obj = im_alloc(im, (size_t)im->o.bytes_data + n + 1);

	put64(im, obj, im->o.object_type, FUZZ_TYPE_BYTES);
	put64(im, obj, im->o.bytes_size, n);
	im_put(im, obj, im->o.bytes_data, b, n);
	return obj;
}

struct linetable {
	uint8_t tab[4096];
	size_t len;
	int firstlineno;
};

static uint64_t make_code(struct image *im, const char *name, const char *file, bool compact,
			  const struct linetable *lt)
{
	const struct py_offsets *o = &im->o;
	int32_t fields[] = { o->object_type, o->code_filename, o->code_name, o->code_qualname,
			     o->code_firstlineno, o->code_linetable, o->code_tlbc };
	size_t size = span(fields, sizeof(fields) / sizeof(fields[0]));
	uint64_t code, sname, sfile, table;

	if (o->code_adaptive >= 0 && (size_t)o->code_adaptive + 256 > size)
		size = (size_t)o->code_adaptive + 256; /* the bytecode */
	code = im_alloc(im, size);
	sname = make_str(im, name, compact);
	sfile = make_str(im, file, true);
	table = make_bytes(im, lt->tab, lt->len);
	put64(im, code, o->object_type, FUZZ_TYPE_CODE);
	put64(im, code, o->code_name, sname);
	if (o->code_qualname >= 0)
		put64(im, code, o->code_qualname, sname);
	put64(im, code, o->code_filename, sfile);
	put64(im, code, o->code_linetable, table);
	put32(im, code, o->code_firstlineno, (uint32_t)lt->firstlineno);
	return code;
}

/* A frame running code at instruction k (code units); shim: owner 3. */
static uint64_t make_frame(struct image *im, uint64_t code, int k, uint64_t previous, bool shim,
			   bool entry)
{
	const struct py_offsets *o = &im->o;
	int32_t fields[] = { o->frame_previous, o->frame_code, o->frame_instr, o->frame_owner,
			     o->frame_is_entry, o->frame_tlbc_index };
	uint64_t f = im_alloc(im, span(fields, sizeof(fields) / sizeof(fields[0])));

	put64(im, f, o->frame_previous, previous);
	/* 3.14+: a _PyStackRef, tag bits low */
	put64(im, f, o->frame_code, code | (im->minor >= 14 && !shim ? 1 : 0));
	if (im->minor <= 10)
		put32(im, f, o->frame_instr, (uint32_t)(im->minor == 10 ? k : 2 * k));
	else
		put64(im, f, o->frame_instr, code + (uint64_t)o->code_adaptive + 2 * (uint64_t)k);
	if (o->frame_owner >= 0)
		put8(im, f, o->frame_owner, shim ? 3 : 0);
	if (o->frame_is_entry >= 0)
		put8(im, f, o->frame_is_entry, entry);
	return f;
}

static void load_linetables(const char *dir, int minor, struct linetable *out, int n)
{
	static const uint8_t lnotab[] = { 6, 2, 4, 1 };
	static const uint8_t t310[] = { 6, 0, 4, 0x80, 4, 3 };
	static const uint8_t t311[] = { 0x80 | 1, 0x00, 0x80 | (11 << 3), 0x00, 0x00,
					0x80 | (15 << 3), 0x80 | (13 << 3) | 1, 10 };
	struct dirent **names = NULL;
	int count = dir ? scandir(dir, &names, NULL, alphasort) : -1, got = 0;

	/* real tables of this version, the larger the better */
	for (int i = 0; i < count; i++) {
		char path[4096];
		uint8_t buf[4096 + 13];
		size_t len;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		f = names[i]->d_name[0] != '.' && got < n ? fopen(path, "rb") : NULL;
		if (f) {
			len = fread(buf, 1, sizeof(buf), f);
			fclose(f);
			if (len > 13 + 8 && len < sizeof(buf) && FUZZ_MINOR_ANY(buf[0]) == minor) {
				memcpy(&out[got].firstlineno, buf + 1, 4);
				out[got].len = len - 13;
				memcpy(out[got].tab, buf + 13, out[got].len);
				got++;
			}
		}
		free(names[i]);
	}
	free(names);
	for (; got < n; got++) {
		const uint8_t *t = minor <= 9 ? lnotab : minor == 10 ? t310 : t311;
		size_t len = minor <= 9 ? sizeof(lnotab) : minor == 10 ? sizeof(t310) : sizeof(t311);

		memcpy(out[got].tab, t, len);
		out[got].len = len;
		out[got].firstlineno = 10 * (got + 1);
	}
}

struct scenario {
	uint64_t runtime, tstate, codes[3], names[3];
};

static void build(struct image *im, const char *ltdir, struct scenario *sc)
{
	const struct py_offsets *o = &im->o;
	struct linetable lt[3];
	uint64_t f0, f1, f2, f3, ts1, ts2, interp, runtime, gil, cf, pthread;
	int32_t tfields[] = { o->tstate_next, o->tstate_interp, o->tstate_frame,
			      o->tstate_thread_id, o->tstate_native_thread_id };
	int32_t ifields[] = { o->interp_next, o->interp_threads_head, o->interp_ceval_gil };
	int32_t gfields[] = { o->gil_last_holder, o->gil_locked, o->gil_switch_number };
	char longname[1500];

	load_linetables(ltdir, im->minor, lt, 3);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memcpy(longname, "very_long_", 10);
	sc->codes[0] = make_code(im, "<module>", "/srv/app/main.py", true, &lt[0]);
	sc->codes[1] = make_code(im, "Outer.<locals>.inner_\xc3\xbc", "/home/j\xc3\xb6rg/app.py", false,
				 &lt[1]);
	sc->codes[2] = make_code(im, "\xe5\x87\xa6\xe7\x90\x86", "/tmp/\xf0\x9f\x98\x80.py", true,
				 &lt[2]);
	for (int i = 0; i < 3; i++)
		memcpy(&sc->names[i],
		       im->buf + (sc->codes[i] - FUZZ_BASE - sizeof(im->h)) + o->code_name, 8);
	(void)make_code(im, longname, "", true, &lt[0]);

	/* leaf first: codes[2] <- (shim) <- codes[1] <- codes[0] */
	f3 = make_frame(im, sc->codes[0], 0, 0, false, true);
	f2 = make_frame(im, sc->codes[1], 3, f3, false, im->minor < 12);
	f1 = im->minor >= 12 ? make_frame(im, 0, 0, f2, true, false) : f2;
	f0 = make_frame(im, sc->codes[2], 1, f1, false, false);

	gil = 0;
	if (o->interp_ceval_gil >= 0 && o->runtime_gil < 0)
		gil = im_alloc(im, span(gfields, 3) + PY_GIL_STRUCT_SIZE);
	runtime = im_alloc(im, (size_t)(o->runtime_gil >= 0 ? o->runtime_gil : 0) +
				       PY_GIL_STRUCT_SIZE + (size_t)o->runtime_interpreters_head + 8);
	if (o->runtime_gil >= 0)
		gil = runtime + (uint64_t)o->runtime_gil;
	interp = im_alloc(im, span(ifields, 3));
	ts1 = im_alloc(im, span(tfields, 5));
	ts2 = im_alloc(im, span(tfields, 5));
	pthread = im_alloc(im, 0x2d0 + 8);
	put32(im, pthread, 0x2d0, 4242);

	put64(im, runtime, o->runtime_interpreters_head, interp);
	put64(im, interp, o->interp_next, 0);
	put64(im, interp, o->interp_threads_head, ts1);
	if (o->interp_ceval_gil >= 0)
		put64(im, interp, o->interp_ceval_gil, gil);
	if (gil) {
		put64(im, gil, 0, 5000);
		put64(im, gil, o->gil_last_holder, ts1);
		put32(im, gil, o->gil_locked, 1);
		put64(im, gil, o->gil_switch_number, 42);
	}
	for (int t = 0; t < 2; t++) {
		uint64_t ts = t ? ts2 : ts1, frame = t ? 0 : f0;

		put64(im, ts, o->tstate_next, t ? 0 : ts2);
		put64(im, ts, o->tstate_interp, interp);
		if (o->cframe_current_frame >= 0) {
			cf = im_alloc(im, (size_t)o->cframe_current_frame + 8);
			put64(im, cf, o->cframe_current_frame, frame);
			put64(im, ts, o->tstate_frame, cf);
		} else {
			put64(im, ts, o->tstate_frame, frame);
		}
		put64(im, ts, o->tstate_thread_id, pthread);
		if (o->tstate_native_thread_id >= 0)
			put64(im, ts, o->tstate_native_thread_id, 4242 + (uint64_t)t);
	}
	sc->runtime = runtime;
	sc->tstate = ts1;
}

static void emit(struct image *im, const char *out, const char *target, const char *tag,
		 uint8_t flags, uint16_t count, uint32_t arg32, uint64_t root, uint64_t arg64)
{
	char dir[4096], name[128];

	im->h.minor = (uint8_t)(im->minor - 8);
	im->h.flags = flags | (im->ft ? FUZZ_FREE_THREADED : 0);
	im->h.count = count;
	im->h.arg32 = arg32;
	im->h.root = root;
	im->h.arg64 = arg64;
	memcpy(im->h.off, &im->o, sizeof(im->h.off));
	snprintf(dir, sizeof(dir), "%s/%s", out, target);
	snprintf(name, sizeof(name), "3.%d%s-%s", im->minor, im->ft ? "t" : "", tag);
	write_file(dir, name, &im->h, sizeof(im->h), im->buf, im->used);
}

static void emit_all(struct image *im, const char *out, const char *ltdir)
{
	struct scenario sc;

	if (py_offsets_missing(&im->o, im->minor)) {
		fprintf(stderr, "seedgen: 3.%d offsets lack %s\n", im->minor,
			py_offsets_missing(&im->o, im->minor));
		return;
	}
	im->used = 0;
	memset(im->buf, 0, sizeof(im->buf));
	build(im, ltdir, &sc);
	for (int i = 0; i < 3; i++) {
		char tag[16];

		snprintf(tag, sizeof(tag), "code%d", i);
		emit(im, out, "fuzz_py_code", tag, 0, 0, i ? 64 : 512, sc.codes[i],
		     sc.names[(i + 1) % 3]);
	}
	emit(im, out, "fuzz_code_names", "ident", 0, 0, 1400 | 6u << 11, sc.codes[0], sc.codes[1]);
	emit(im, out, "fuzz_code_names", "grow", 0, 700, 60 | 2u << 11, sc.codes[2], sc.codes[1]);
	emit(im, out, "fuzz_code_names", "raw", FUZZ_RAW_IDENT, 3, 1400, sc.codes[1], 77);
	emit(im, out, "fuzz_py_frames", "all", 0, 64, 0x2d0, sc.tstate, 0);
	emit(im, out, "fuzz_py_frames", "two", 0, 2, 0x2d0, sc.tstate, 0);
	emit(im, out, "fuzz_py_threads", "gil", FUZZ_GIL, 64, 0x2d0, sc.runtime, 0);
	emit(im, out, "fuzz_py_threads", "one", 0, 1, 0x2d0, sc.runtime, 0);
	emit(im, out, "fuzz_py_objects", "str", 0, 0, 0, sc.names[0], sc.codes[0]);
	emit(im, out, "fuzz_py_objects", "code", 0, 0, 0, sc.codes[1], sc.codes[1]);
}

static int cmd_mem(const char *out, const char *ltdir, int argc, char **argv)
{
	static struct image im;

	for (int minor = 8; minor <= 12; minor++) {
		im.minor = minor;
		im.ft = false;
		if (py_offsets_builtin_table(minor, &im.o) == 0)
			emit_all(&im, out, ltdir);
	}
	for (int i = 0; i < argc; i++) {
		uint8_t raw[1 + DEBUG_OFFSETS_MAX_BYTES];
		uint64_t hex;
		bool ft;
		char err[160];
		size_t len;
		FILE *f = fopen(argv[i], "rb");

		if (!f)
			continue;
		len = fread(raw, 1, sizeof(raw), f);
		fclose(f);
		if (len < 1)
			continue;
		im.minor = FUZZ_MINOR_DEBUG(raw[0]);
		if (debug_offsets_decode(raw + 1, len - 1, im.minor, &im.o, &hex, &ft, err,
					 sizeof(err)) != 0) {
			fprintf(stderr, "seedgen: %s: %s\n", argv[i], err);
			continue;
		}
		for (int t = 0; t < 2; t++) {
			im.ft = ft || t; /* and as if free-threaded: other str layout */
			emit_all(&im, out, ltdir);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "debug-offsets") == 0)
		return cmd_debug_offsets(argv[2], argc - 3, argv + 3);
	if (argc >= 4 && strcmp(argv[1], "mem") == 0)
		return cmd_mem(argv[2], argv[3], argc - 4, argv + 4);
	fprintf(stderr, "usage: seedgen debug-offsets OUTDIR ELF...\n"
			"       seedgen mem OUTDIR LINETABLE_DIR [DEBUG_OFFSETS_SEED...]\n");
	return 2;
}
