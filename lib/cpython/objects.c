/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/objects.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/code.h"
#include "sys/elf_image.h"
#include "sys/remote_mem.h"

#define REPR_ITEMS 5           /* items shown of a container */
#define REPR_DEPTH 2           /* containers inside containers, then [...] */
#define REPR_STR_CHARS 60      /* characters shown of a str */
#define REPR_BYTES 40          /* bytes shown of a bytes */
#define LONG_DIGITS_MAX 70     /* 30-bit digits converted (2100 bits) */
#define PLAUSIBLE_LEN (1LL << 40)
#define DICT_SCAN_MAX (1 << 16) /* entries looked at in one dict */

#define TPFLAGS_INLINE_VALUES (1UL << 2)
#define TPFLAGS_MANAGED_DICT (1UL << 4)

/* ---- set-up -------------------------------------------------------------- */

static int32_t have(int32_t v, int32_t fallback)
{
	return v != PY_OFFSET_ABSENT ? v : fallback;
}

static int derive_offsets(struct py_objects *o)
{
	const struct py_offsets *f = &o->p->off;

	o->hdr = f->object_type + 8;
	o->type_name = f->type_name;
	o->type_flags = f->type_flags;
	/* PyTypeObject is public: tp_basicsize follows tp_name, and with
	 * tp_flags 144 bytes after tp_name, tp_dictoffset is 264 after it. */
	o->type_basicsize = have(f->type_basicsize, f->type_name + 8);
	o->type_dictoffset = have(f->type_dictoffset, f->type_flags - f->type_name == 144
							      ? f->type_name + 264
							      : PY_OFFSET_ABSENT);
	o->cached_keys = f->heaptype_cached_keys;
	if (o->cached_keys == PY_OFFSET_ABSENT && o->rules->cached_keys_from_tp_name)
		o->cached_keys = f->type_name + o->rules->cached_keys_from_tp_name;
	o->var_size = have(f->varobject_size, o->hdr);
	o->tuple_items = f->tuple_items;
	o->list_items = f->list_items;
	o->float_value = f->float_value;
	o->long_tag = f->long_tag;
	o->long_digits = f->long_digits;
	/* ma_used, md_dict and ob_ref follow the header in every version;
	 * PySetObject is fill, used, mask, table after it. */
	o->dict_used = o->hdr;
	o->dict_keys = f->dict_keys;
	o->dict_values = f->dict_values;
	o->set_used = have(f->set_used, o->hdr + 8);
	o->set_mask = have(f->set_mask, o->hdr + 16);
	o->set_table = have(f->set_table, o->hdr + 24);
	o->cell_ref = have(f->cell_ref, o->hdr);
	o->module_dict = o->hdr;
	static const struct {
		const char *name;
		size_t at;
	} need[] = {
		{ "type_name", offsetof(struct py_objects, type_name) },
		{ "type_flags", offsetof(struct py_objects, type_flags) },
		{ "tuple_items", offsetof(struct py_objects, tuple_items) },
		{ "list_items", offsetof(struct py_objects, list_items) },
		{ "float_value", offsetof(struct py_objects, float_value) },
		{ "long_tag", offsetof(struct py_objects, long_tag) },
		{ "long_digits", offsetof(struct py_objects, long_digits) },
		{ "dict_keys", offsetof(struct py_objects, dict_keys) },
		{ "dict_values", offsetof(struct py_objects, dict_values) },
	};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		int32_t v = *(const int32_t *)((const char *)o + need[i].at);

		if (v < 0 || v > 4096) {
			snprintf(o->why, sizeof(o->why), "no offset for %s in this build", need[i].name);
			return -1;
		}
	}
	return 0;
}

static int resolve_symbols(struct py_objects *o)
{
	static const struct {
		const char *sym;
		size_t at;
	} syms[] = {
		{ "_Py_NoneStruct", offsetof(struct py_objects, none) },
		{ "_Py_TrueStruct", offsetof(struct py_objects, true_obj) },
		{ "_Py_FalseStruct", offsetof(struct py_objects, false_obj) },
		{ "PyLong_Type", offsetof(struct py_objects, t_int) },
		{ "PyBool_Type", offsetof(struct py_objects, t_bool) },
		{ "PyFloat_Type", offsetof(struct py_objects, t_float) },
		{ "PyUnicode_Type", offsetof(struct py_objects, t_str) },
		{ "PyBytes_Type", offsetof(struct py_objects, t_bytes) },
		{ "PyTuple_Type", offsetof(struct py_objects, t_tuple) },
		{ "PyList_Type", offsetof(struct py_objects, t_list) },
		{ "PyDict_Type", offsetof(struct py_objects, t_dict) },
		{ "PySet_Type", offsetof(struct py_objects, t_set) },
		{ "PyFrozenSet_Type", offsetof(struct py_objects, t_frozenset) },
		{ "PyCell_Type", offsetof(struct py_objects, t_cell) },
		{ "PyModule_Type", offsetof(struct py_objects, t_module) },
	};
	struct elf_image img;

	if (py_process_open_interp(o->p, &img) < 0) {
		snprintf(o->why, sizeof(o->why), "cannot read %.120s", o->p->interp_open);
		return -1;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		uint64_t value, size;

		if (elf_image_symbol(&img, syms[i].sym, &value, &size) < 0) {
			snprintf(o->why, sizeof(o->why), "no %s symbol in %.100s", syms[i].sym,
				 o->p->interp_path);
			elf_image_close(&img);
			return -1;
		}
		*(uint64_t *)((char *)o + syms[i].at) = o->p->load_bias + value;
	}
	elf_image_close(&img);
	return 0;
}

int py_objects_init_layout(struct py_objects *o, struct py_process *p)
{
	memset(o, 0, sizeof(*o));
	o->p = p;
	o->rules = py_object_rules_for(p->version.minor, p->free_threaded);
	if (!o->rules) {
		snprintf(o->why, sizeof(o->why), "no object rules for Python %s", p->version_str);
		return -1;
	}
	return derive_offsets(o);
}

int py_objects_init(struct py_objects *o, struct py_process *p)
{
	if (py_objects_init_layout(o, p) < 0)
		return -1;
	return resolve_symbols(o);
}

/* ---- reading ------------------------------------------------------------- */

static int rd(const struct py_objects *o, uint64_t addr, void *buf, size_t len)
{
	return remote_read(o->p->pid, addr, buf, len);
}

static int rd64(const struct py_objects *o, uint64_t addr, uint64_t *v)
{
	return remote_read_u64(o->p->pid, addr, v);
}

uint64_t py_obj_type(const struct py_objects *o, uint64_t addr)
{
	uint64_t type = 0;

	if (!addr || rd64(o, addr + (uint64_t)o->p->off.object_type, &type) < 0)
		return 0;
	return type;
}

int py_type_name(const struct py_objects *o, uint64_t type, char *buf, size_t len)
{
	uint64_t name = 0;
	size_t n = 0;

	if (len < 2 || !type || rd64(o, type + (uint64_t)o->type_name, &name) < 0 || !name)
		return -1;
	/* a C string of unknown length: in small pieces, a page end may follow */
	while (n + 1 < len) {
		char chunk[16];
		size_t want = sizeof(chunk) < len - 1 - n ? sizeof(chunk) : len - 1 - n;

		if (rd(o, name + n, chunk, want) < 0) {
			if (rd(o, name + n, chunk, 1) < 0)
				return -1;
			want = 1;
		}
		for (size_t i = 0; i < want; i++) {
			unsigned char c = (unsigned char)chunk[i];

			if (!c) {
				buf[n] = '\0';
				return n ? 0 : -1;
			}
			if (c < 0x20 || c >= 0x7f)
				return -1; /* type names are plain ASCII identifiers */
			buf[n++] = (char)c;
		}
	}
	buf[n] = '\0';
	return 0;
}

/* Whether the object at addr is exactly of type t (no subclasses). */
static bool is_type(const struct py_objects *o, uint64_t addr, uint64_t t)
{
	return py_obj_type(o, addr) == t;
}

/* ---- a bounded output buffer --------------------------------------------- */

struct out {
	char *buf;
	size_t len, used;
	bool full;
};

static void put(struct out *w, const char *s, size_t n)
{
	if (w->full)
		return;
	if (w->used + n + 1 > w->len) {
		n = w->len - 1 - w->used;
		w->full = true;
	}
	memcpy(w->buf + w->used, s, n);
	w->used += n;
	w->buf[w->used] = '\0';
}

static void puts_(struct out *w, const char *s)
{
	put(w, s, strlen(s));
}

static void putf(struct out *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(struct out *w, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(w, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* ---- int ------------------------------------------------------------------ */

/* Digit count and sign of an int; -1 if unreadable. */
static int long_shape(const struct py_objects *o, uint64_t addr, size_t *ndigits, int *sign)
{
	int64_t tag = 0;

	if (rd(o, addr + (uint64_t)o->long_tag, &tag, 8) < 0)
		return -1;
	if (o->rules->long_model == PY_LONG_OB_SIZE) {
		if (tag < -PLAUSIBLE_LEN || tag > PLAUSIBLE_LEN)
			return -1;
		*sign = tag < 0 ? -1 : tag > 0;
		*ndigits = (size_t)(tag < 0 ? -tag : tag);
	} else {
		uint64_t t = (uint64_t)tag;

		*sign = (t & 3) == 0 ? 1 : (t & 3) == 1 ? 0 : (t & 3) == 2 ? -1 : 2;
		*ndigits = (size_t)(t >> 3);
		if (*sign == 2 || t >> 3 > (uint64_t)PLAUSIBLE_LEN)
			return -1;
		if (*sign == 0)
			*ndigits = 0;
	}
	return 0;
}

static int long_digits(const struct py_objects *o, uint64_t addr, size_t n, uint32_t *d)
{
	if (rd(o, addr + (uint64_t)o->long_digits, d, n * 4) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (d[i] >> 30)
			return -1; /* 30-bit digits: the top bits are always clear */
	return 0;
}

int py_obj_u64(const struct py_objects *o, uint64_t addr, uint64_t *value)
{
	uint32_t d[3] = { 0 };
	size_t n;
	int sign;

	if (!is_type(o, addr, o->t_int) || long_shape(o, addr, &n, &sign) < 0 || sign < 0 ||
	    n > 3 || long_digits(o, addr, n, d) < 0)
		return -1;
	if (n == 3 && d[2] > 0xf)
		return -1;
	*value = (uint64_t)d[0] | (uint64_t)d[1] << 30 | (uint64_t)d[2] << 60;
	return 0;
}

/* Decimal text of an int of n digits (base 2^30), long ones cut. */
static int repr_int(const struct py_objects *o, uint64_t addr, struct out *w)
{
	uint32_t digits[LONG_DIGITS_MAX];
	uint32_t chunks[LONG_DIGITS_MAX * 2]; /* base 1e9, least significant first */
	size_t n, nchunks = 0;
	int sign;
	char text[LONG_DIGITS_MAX * 2 * 9 + 2];
	size_t tl = 0;

	if (long_shape(o, addr, &n, &sign) < 0)
		return -1;
	if (n > LONG_DIGITS_MAX) {
		putf(w, "<int of %zu bits>", n * 30);
		return 0;
	}
	if (long_digits(o, addr, n, digits) < 0)
		return -1;
	/* repeated division of the digit array by 1e9 */
	while (n) {
		uint64_t rem = 0;

		for (size_t i = n; i-- > 0;) {
			uint64_t cur = rem << 30 | digits[i];

			digits[i] = (uint32_t)(cur / 1000000000u);
			rem = cur % 1000000000u;
		}
		chunks[nchunks++] = (uint32_t)rem;
		while (n && digits[n - 1] == 0)
			n--;
	}
	if (sign < 0)
		text[tl++] = '-';
	if (!nchunks) {
		text[tl++] = '0';
	} else {
		tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "%u", chunks[nchunks - 1]);
		for (size_t i = nchunks - 1; i-- > 0;)
			tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "%09u", chunks[i]);
	}
	text[tl] = '\0';
	if (tl > 40)
		putf(w, "%.20s...(%zu digits)", text, tl - (sign < 0));
	else
		puts_(w, text);
	return 0;
}

/* ---- float ---------------------------------------------------------------- */

/* repr(float): the shortest digits that read back the same, laid out as
 * Python does (exponent form below 1e-4 and from 1e16 on). */
static void format_float(double v, struct out *w)
{
	char buf[40], digits[24];
	int exp = 0, nd = 0, prec;

	if (isnan(v)) {
		puts_(w, "nan");
		return;
	}
	if (isinf(v)) {
		puts_(w, v < 0 ? "-inf" : "inf");
		return;
	}
	for (prec = 0; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* buf: [-]d[.ddd]e[+-]xx */
	{
		const char *s = buf + (buf[0] == '-');
		const char *e = strchr(s, 'e');

		for (const char *c = s; c < e; c++)
			if (*c != '.')
				digits[nd++] = *c;
		digits[nd] = '\0';
		exp = atoi(e + 1);
	}
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = '\0';
	if (signbit(v))
		puts_(w, "-");
	if (exp < -4 || exp >= 16) {
		put(w, digits, 1);
		if (nd > 1) {
			puts_(w, ".");
			put(w, digits + 1, (size_t)nd - 1);
		}
		putf(w, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
	} else if (exp < 0) {
		puts_(w, "0.");
		for (int i = 0; i < -exp - 1; i++)
			puts_(w, "0");
		put(w, digits, (size_t)nd);
	} else {
		for (int i = 0; i <= exp; i++)
			put(w, i < nd ? &digits[i] : "0", 1);
		puts_(w, ".");
		if (nd > exp + 1)
			put(w, digits + exp + 1, (size_t)(nd - exp - 1));
		else
			puts_(w, "0");
	}
}

/* ---- str and bytes --------------------------------------------------------- */

/* Up to max code points of a str; its full length in *length. */
static int read_str(const struct py_objects *o, uint64_t addr, uint32_t *cps, size_t max,
		    size_t *got, int64_t *length)
{
	const struct py_process *p = o->p;
	uint8_t raw[REPR_STR_CHARS * 4 + 16];
	uint32_t state = 0;
	unsigned kind, compact, ascii, shift;
	uint64_t data;
	size_t n;

	if (max * 4 > sizeof(raw))
		max = sizeof(raw) / 4;
	if (rd(o, addr + (uint64_t)p->off.unicode_length, length, 8) < 0 ||
	    rd(o, addr + (uint64_t)p->off.unicode_state, &state, 4) < 0 || *length < 0 ||
	    *length > PLAUSIBLE_LEN)
		return -1;
	shift = (unsigned)p->rules->str_state_interned_bits;
	kind = (state >> shift) & 7;
	compact = (state >> (shift + 3)) & 1;
	ascii = (state >> (shift + 4)) & 1;
	if (kind != 1 && kind != 2 && kind != 4)
		return -1;
	if (compact)
		data = addr + (uint64_t)(ascii ? p->off.unicode_ascii_size : p->off.unicode_compact_size);
	else if (rd64(o, addr + (uint64_t)p->off.unicode_compact_size, &data) < 0)
		return -1;
	n = (size_t)*length < max ? (size_t)*length : max;
	if (rd(o, data, raw, n * kind) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (kind == 1)
			cps[i] = raw[i];
		else if (kind == 2)
			cps[i] = (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8;
		else
			memcpy(&cps[i], raw + 4 * i, 4);
		if (cps[i] > 0x10ffff || (ascii && cps[i] > 0x7f))
			return -1;
	}
	*got = n;
	return 0;
}

int py_obj_str(const struct py_objects *o, uint64_t addr, char *buf, size_t len)
{
	uint32_t cps[REPR_STR_CHARS];
	size_t got, used = 0;
	int64_t length;

	if (len < 5 || !is_type(o, addr, o->t_str) ||
	    read_str(o, addr, cps, REPR_STR_CHARS, &got, &length) < 0)
		return -1;
	for (size_t i = 0; i < got; i++) {
		char enc[4];
		size_t n = utf8_encode(cps[i] < 0x20 || cps[i] == 0x7f ? 0xfffd : cps[i], enc);

		if (used + n + 4 > len) {
			length = (int64_t)got + 1; /* force the cut mark */
			break;
		}
		memcpy(buf + used, enc, n);
		used += n;
	}
	if ((size_t)length > got && used + 4 <= len) {
		memcpy(buf + used, "...", 3);
		used += 3;
	}
	buf[used] = '\0';
	return 0;
}

/* One character as repr() writes it inside quotes. Printable non-ASCII
 * stays as it is (approximated: everything but C0/C1 controls, line and
 * paragraph separators and surrogates). */
static void put_char(struct out *w, uint32_t c, char quote, bool bytes)
{
	char enc[4];

	if (c == (uint32_t)quote || c == '\\')
		putf(w, "\\%c", (char)c);
	else if (c == '\n')
		puts_(w, "\\n");
	else if (c == '\r')
		puts_(w, "\\r");
	else if (c == '\t')
		puts_(w, "\\t");
	else if (c < 0x20 || c == 0x7f || (bytes && c > 0x7f) || (c >= 0x80 && c < 0xa0))
		putf(w, "\\x%02x", c);
	else if (c == 0xad || c == 0x2028 || c == 0x2029 || (c >= 0xd800 && c <= 0xdfff))
		putf(w, c > 0xff ? "\\u%04x" : "\\x%02x", c);
	else
		put(w, enc, utf8_encode(c, enc));
}

static char pick_quote(const uint32_t *c, size_t n)
{
	bool single = false, dbl = false;

	for (size_t i = 0; i < n; i++) {
		single |= c[i] == '\'';
		dbl |= c[i] == '"';
	}
	return single && !dbl ? '"' : '\'';
}

static int repr_str(const struct py_objects *o, uint64_t addr, struct out *w)
{
	uint32_t cps[REPR_STR_CHARS];
	size_t got;
	int64_t length;
	char q;

	if (read_str(o, addr, cps, REPR_STR_CHARS, &got, &length) < 0)
		return -1;
	q = pick_quote(cps, got);
	put(w, &q, 1);
	for (size_t i = 0; i < got; i++)
		put_char(w, cps[i], q, false);
	put(w, &q, 1);
	if ((size_t)length > got)
		putf(w, "...(%lld chars)", (long long)length);
	return 0;
}

static int repr_bytes(const struct py_objects *o, uint64_t addr, struct out *w)
{
	uint8_t data[REPR_BYTES];
	uint32_t cps[REPR_BYTES];
	int64_t size = 0;
	size_t n;
	char q;

	if (rd(o, addr + (uint64_t)o->p->off.bytes_size, &size, 8) < 0 || size < 0 ||
	    size > PLAUSIBLE_LEN)
		return -1;
	n = (size_t)size < sizeof(data) ? (size_t)size : sizeof(data);
	if (rd(o, addr + (uint64_t)o->p->off.bytes_data, data, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		cps[i] = data[i];
	q = pick_quote(cps, n);
	puts_(w, "b");
	put(w, &q, 1);
	for (size_t i = 0; i < n; i++)
		put_char(w, cps[i], q, true);
	put(w, &q, 1);
	if ((size_t)size > n)
		putf(w, "...(%lld bytes)", (long long)size);
	return 0;
}

/* ---- containers ------------------------------------------------------------ */

static int repr_obj(const struct py_objects *o, uint64_t addr, struct out *w, int depth);

static void repr_item(const struct py_objects *o, uint64_t addr, struct out *w, int depth)
{
	size_t mark = w->used;

	if (repr_obj(o, addr, w, depth) < 0) {
		w->used = mark;
		w->buf[mark] = '\0';
		w->full = false;
		puts_(w, "<unreadable>");
	}
}

/* Items of a tuple or list: a pointer array of length n at items. */
static int repr_sequence(const struct py_objects *o, uint64_t items, int64_t n, struct out *w,
			 int depth, const char *open, const char *close)
{
	uint64_t item[REPR_ITEMS];
	size_t shown = n < REPR_ITEMS ? (size_t)n : REPR_ITEMS;

	if (n < 0 || n > PLAUSIBLE_LEN || (shown && rd(o, items, item, shown * 8) < 0))
		return -1;
	puts_(w, open);
	if (depth >= REPR_DEPTH && n) {
		putf(w, "...%lld items%s", (long long)n, close);
		return 0;
	}
	for (size_t i = 0; i < shown; i++) {
		if (i)
			puts_(w, ", ");
		repr_item(o, item[i], w, depth + 1);
	}
	if ((size_t)n > shown)
		putf(w, ", ...%lld items", (long long)n);
	else if (n == 1 && open[0] == '(')
		puts_(w, ",");
	puts_(w, close);
	return 0;
}

static int repr_tuple(const struct py_objects *o, uint64_t addr, struct out *w, int depth)
{
	int64_t n = 0;

	if (rd(o, addr + (uint64_t)o->var_size, &n, 8) < 0)
		return -1;
	return repr_sequence(o, addr + (uint64_t)o->tuple_items, n, w, depth, "(", ")");
}

static int repr_list(const struct py_objects *o, uint64_t addr, struct out *w, int depth)
{
	int64_t n = 0;
	uint64_t items = 0;

	if (rd(o, addr + (uint64_t)o->var_size, &n, 8) < 0 ||
	    rd64(o, addr + (uint64_t)o->list_items, &items) < 0 || (n > 0 && !items))
		return -1;
	return repr_sequence(o, items, n, w, depth, "[", "]");
}

/* ---- dicts ------------------------------------------------------------------ */

/* Where a keys object keeps its entries, and how they look. */
struct dict_layout {
	uint64_t entries;
	size_t entry_size, key_at, value_at;
	int64_t nentries;
	uint64_t values; /* split dict: the values array; 0 if combined */
};

static int dict_layout(const struct py_objects *o, uint64_t keys, uint64_t values,
		       struct dict_layout *l)
{
	uint8_t h[40];

	memset(l, 0, sizeof(*l));
	if (!keys || rd(o, keys, h, sizeof(h)) < 0)
		return -1;
	if (o->rules->dict_keys == PY_DICT_KEYS_SIZE) {
		int64_t size, nentries;
		unsigned ix;

		memcpy(&size, h + 8, 8);
		memcpy(&nentries, h + 32, 8);
		if (size < 8 || (size & (size - 1)) || size > (1LL << 32) || nentries < 0 ||
		    nentries > size)
			return -1;
		ix = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
		l->entries = keys + 40 + (uint64_t)size * ix;
		l->entry_size = 24;
		l->key_at = 8;
		l->value_at = 16;
		l->nentries = nentries;
	} else {
		unsigned log2_size = h[8], log2_index_bytes = h[9], kind = h[10];
		int64_t nentries;

		memcpy(&nentries, h + 24, 8);
		if (log2_size < 3 || log2_size > 32 || log2_index_bytes < log2_size ||
		    log2_index_bytes > log2_size + 3 || kind > 2 || nentries < 0 ||
		    nentries > (1LL << log2_size))
			return -1;
		l->entries = keys + 32 + (1ULL << log2_index_bytes);
		l->entry_size = kind == 0 ? 24 : 16;
		l->key_at = kind == 0 ? 8 : 0;
		l->value_at = kind == 0 ? 16 : 8;
		l->nentries = nentries;
	}
	if (values)
		l->values = values +
			    (o->rules->dict_values == PY_DICT_VALUES_HEADED ? 8 : 0);
	return 0;
}

/* Entry i's key and value (value from the split array when there is one). */
static int dict_entry(const struct py_objects *o, const struct dict_layout *l, int64_t i,
		      uint64_t *key, uint64_t *value)
{
	uint8_t e[24];

	if (rd(o, l->entries + (uint64_t)i * l->entry_size, e, l->entry_size) < 0)
		return -1;
	memcpy(key, e + l->key_at, 8);
	if (l->values)
		return rd64(o, l->values + 8 * (uint64_t)i, value);
	memcpy(value, e + l->value_at, 8);
	return 0;
}

static long dict_each(const struct py_objects *o, uint64_t dict, size_t max, py_dict_fn fn,
		      void *arg)
{
	uint64_t keys = 0, values = 0;
	int64_t used = 0;
	struct dict_layout l;
	size_t seen = 0;

	if (rd(o, dict + (uint64_t)o->dict_used, &used, 8) < 0 ||
	    rd64(o, dict + (uint64_t)o->dict_keys, &keys) < 0 ||
	    rd64(o, dict + (uint64_t)o->dict_values, &values) < 0 || used < 0 ||
	    used > PLAUSIBLE_LEN || dict_layout(o, keys, values, &l) < 0)
		return -1;
	for (int64_t i = 0; i < l.nentries && i < DICT_SCAN_MAX && seen < max; i++) {
		uint64_t k, v;

		if (dict_entry(o, &l, i, &k, &v) < 0)
			return -1;
		if (!k || !v)
			continue; /* deleted, or a split dict's unused slot */
		seen++;
		if (fn(k, v, arg))
			break;
	}
	return (long)used;
}

long py_dict_each(const struct py_objects *o, uint64_t dict, size_t max, py_dict_fn fn, void *arg)
{
	if (!is_type(o, dict, o->t_dict))
		return -1;
	return dict_each(o, dict, max, fn, arg);
}

/* A str key equal to name (same length first: one read, then the text). */
static bool key_is(const struct py_objects *o, uint64_t key, const char *name)
{
	char buf[128];
	int64_t length = 0;

	if (rd(o, key + (uint64_t)o->p->off.unicode_length, &length, 8) < 0 ||
	    length != (int64_t)strlen(name) || !is_type(o, key, o->t_str))
		return false;
	return py_read_string(o->p, key, buf, sizeof(buf)) == 0 && strcmp(buf, name) == 0;
}

struct find {
	const struct py_objects *o;
	const char *name;
	uint64_t value;
	bool found;
};

static int find_key(uint64_t key, uint64_t value, void *arg)
{
	struct find *f = arg;

	if (!key_is(f->o, key, f->name))
		return 0;
	f->value = value;
	f->found = true;
	return 1;
}

int py_dict_get(const struct py_objects *o, uint64_t dict, const char *name, uint64_t *value)
{
	struct find f = { o, name, 0, false };

	if (py_dict_each(o, dict, DICT_SCAN_MAX, find_key, &f) < 0 || !f.found)
		return -1;
	*value = f.value;
	return 0;
}

struct dict_repr {
	const struct py_objects *o;
	struct out *w;
	int depth;
	size_t n;
};

static int dict_item_repr(uint64_t key, uint64_t value, void *arg)
{
	struct dict_repr *r = arg;

	if (r->n++)
		puts_(r->w, ", ");
	repr_item(r->o, key, r->w, r->depth + 1);
	puts_(r->w, ": ");
	repr_item(r->o, value, r->w, r->depth + 1);
	return 0;
}

static int repr_dict(const struct py_objects *o, uint64_t addr, struct out *w, int depth)
{
	struct dict_repr r = { o, w, depth, 0 };
	size_t mark = w->used;
	int64_t used = 0;
	long n;

	if (depth >= REPR_DEPTH) {
		if (rd(o, addr + (uint64_t)o->dict_used, &used, 8) < 0 || used < 0 ||
		    used > PLAUSIBLE_LEN)
			return -1;
		if (used)
			putf(w, "{...%lld items}", (long long)used);
		else
			puts_(w, "{}");
		return 0;
	}
	puts_(w, "{");
	n = dict_each(o, addr, REPR_ITEMS, dict_item_repr, &r);
	if (n < 0) {
		w->used = mark;
		w->buf[mark] = '\0';
		return -1;
	}
	if ((size_t)n > r.n)
		putf(w, ", ...%ld items", n);
	puts_(w, "}");
	return 0;
}

/* ---- sets ----------------------------------------------------------------- */

static int repr_set(const struct py_objects *o, uint64_t addr, struct out *w, int depth,
		    bool frozen)
{
	int64_t used = 0, mask = 0;
	uint64_t table = 0;
	size_t shown = 0;

	if (rd(o, addr + (uint64_t)o->set_used, &used, 8) < 0 ||
	    rd(o, addr + (uint64_t)o->set_mask, &mask, 8) < 0 ||
	    rd64(o, addr + (uint64_t)o->set_table, &table) < 0 || used < 0 || mask < 7 ||
	    (mask & (mask + 1)) || used > mask + 1 || !table)
		return -1;
	if (!used) {
		puts_(w, frozen ? "frozenset()" : "set()");
		return 0;
	}
	puts_(w, frozen ? "frozenset({" : "{");
	if (depth >= REPR_DEPTH) {
		putf(w, "...%lld items}%s", (long long)used, frozen ? ")" : "");
		return 0;
	}
	for (int64_t i = 0; i <= mask && i < DICT_SCAN_MAX && shown < REPR_ITEMS; i++) {
		uint64_t e[2]; /* key, hash */

		if (rd(o, table + 16 * (uint64_t)i, e, sizeof(e)) < 0)
			return -1;
		if (!e[0] || e[1] == (uint64_t)-1)
			continue; /* empty, or the dummy of a removed key */
		if (shown++)
			puts_(w, ", ");
		repr_item(o, e[0], w, depth + 1);
	}
	if ((size_t)used > shown)
		putf(w, ", ...%lld items", (long long)used);
	puts_(w, frozen ? "})" : "}");
	return 0;
}

/* ---- dispatch ---------------------------------------------------------------- */

static int repr_other(const struct py_objects *o, uint64_t addr, uint64_t type, struct out *w)
{
	char name[80];

	if (py_type_name(o, type, name, sizeof(name)) < 0)
		return -1;
	putf(w, "<%s at 0x%llx>", name, (unsigned long long)addr);
	return 0;
}

static int repr_obj(const struct py_objects *o, uint64_t addr, struct out *w, int depth)
{
	uint64_t type;

	if (!addr)
		return -1;
	if (addr == o->none) {
		puts_(w, "None");
		return 0;
	}
	if (addr == o->true_obj || addr == o->false_obj) {
		puts_(w, addr == o->true_obj ? "True" : "False");
		return 0;
	}
	type = py_obj_type(o, addr);
	if (!type)
		return -1;
	if (type == o->t_int)
		return repr_int(o, addr, w);
	if (type == o->t_float) {
		double v;

		if (rd(o, addr + (uint64_t)o->float_value, &v, 8) < 0)
			return -1;
		format_float(v, w);
		return 0;
	}
	if (type == o->t_str)
		return repr_str(o, addr, w);
	if (type == o->t_bytes)
		return repr_bytes(o, addr, w);
	if (type == o->t_tuple)
		return repr_tuple(o, addr, w, depth);
	if (type == o->t_list)
		return repr_list(o, addr, w, depth);
	if (type == o->t_dict)
		return repr_dict(o, addr, w, depth);
	if (type == o->t_set || type == o->t_frozenset)
		return repr_set(o, addr, w, depth, type == o->t_frozenset);
	return repr_other(o, addr, type, w);
}

int py_obj_repr(const struct py_objects *o, uint64_t addr, char *buf, size_t len)
{
	struct out w = { buf, len, 0, false };

	if (len < 16)
		return -1;
	buf[0] = '\0';
	if (repr_obj(o, addr, &w, 0) < 0) {
		snprintf(buf, len, "<unreadable>");
		return -1;
	}
	if (w.full && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return 0;
}

/* ---- attributes ------------------------------------------------------------- */

/* Where an instance keeps its attributes: a dict, or an array of values
 * indexed like its type's shared keys (ht_cached_keys). */
struct instance_storage {
	uint64_t type, dict, values;
};

static int dict_at(const struct py_objects *o, uint64_t ptr_at, struct instance_storage *s)
{
	return rd64(o, ptr_at, &s->dict) < 0 || !s->dict ? -1 : 0;
}

static int instance_storage(const struct py_objects *o, uint64_t obj, struct instance_storage *s)
{
	uint64_t flags = 0, slot = 0;
	int64_t dictoffset = 0, basicsize = 0;
	const struct py_object_rules *r = o->rules;

	memset(s, 0, sizeof(*s));
	s->type = py_obj_type(o, obj);
	if (!s->type || rd64(o, s->type + (uint64_t)o->type_flags, &flags) < 0)
		return -1;
	if (r->instance_dict == PY_INSTANCE_DICTOFFSET || !(flags & TPFLAGS_MANAGED_DICT)) {
		if (o->type_dictoffset < 0 ||
		    rd(o, s->type + (uint64_t)o->type_dictoffset, &dictoffset, 8) < 0 ||
		    dictoffset <= 0 || dictoffset > 1 << 20)
			return -1;
		return dict_at(o, obj + (uint64_t)dictoffset, s);
	}
	switch (r->instance_dict) {
	case PY_INSTANCE_MANAGED_311:
		if (rd64(o, obj - 32, &slot) < 0)
			return -1;
		if (slot) {
			s->values = slot;
			return 0;
		}
		return dict_at(o, obj - 24, s);
	case PY_INSTANCE_MANAGED_312:
		if (rd64(o, obj - 24, &slot) < 0 || !slot)
			return -1;
		if (slot & 1)
			s->values = slot + 1;
		else
			s->dict = slot;
		return 0;
	case PY_INSTANCE_INLINE_313:
		if (flags & TPFLAGS_INLINE_VALUES) {
			uint8_t head[4]; /* capacity, size, embedded, valid */

			if (rd(o, s->type + (uint64_t)o->type_basicsize, &basicsize, 8) < 0 ||
			    basicsize < o->hdr || basicsize > 1 << 16 ||
			    rd(o, obj + (uint64_t)basicsize, head, sizeof(head)) < 0)
				return -1;
			if (head[3]) {
				s->values = obj + (uint64_t)basicsize + 8;
				return 0;
			}
		}
		return dict_at(o, obj + (uint64_t)(int64_t)r->managed_dict_offset, s);
	case PY_INSTANCE_DICTOFFSET:
		break;
	}
	return -1;
}

/* Each (name, value) of shared-keys storage; fn returns non-zero to stop. */
static int each_cached(const struct py_objects *o, const struct instance_storage *s, size_t max,
		       py_dict_fn fn, void *arg)
{
	uint64_t keys = 0;
	struct dict_layout l;
	size_t seen = 0;

	if (o->cached_keys < 0 || rd64(o, s->type + (uint64_t)o->cached_keys, &keys) < 0 || !keys ||
	    dict_layout(o, keys, 0, &l) < 0)
		return -1;
	for (int64_t i = 0; i < l.nentries && i < 4096 && seen < max; i++) {
		uint64_t k = 0, v = 0;

		if (rd64(o, l.entries + (uint64_t)i * l.entry_size + l.key_at, &k) < 0 ||
		    rd64(o, s->values + 8 * (uint64_t)i, &v) < 0)
			return -1;
		if (!k || !v)
			continue;
		seen++;
		if (fn(k, v, arg))
			break;
	}
	return 0;
}

int py_obj_attr(const struct py_objects *o, uint64_t obj, const char *name, uint64_t *value)
{
	struct instance_storage s;
	struct find f = { o, name, 0, false };

	if (instance_storage(o, obj, &s) < 0)
		return -1;
	if (s.dict)
		return py_dict_get(o, s.dict, name, value);
	if (each_cached(o, &s, 4096, find_key, &f) < 0 || !f.found)
		return -1;
	*value = f.value;
	return 0;
}

int py_obj_attrs_each(const struct py_objects *o, uint64_t obj, size_t max, py_dict_fn fn,
		      void *arg)
{
	struct instance_storage s;

	if (instance_storage(o, obj, &s) < 0)
		return -1;
	if (s.dict)
		return py_dict_each(o, s.dict, max, fn, arg) < 0 ? -1 : 0;
	return each_cached(o, &s, max, fn, arg);
}

int py_module_dict(const struct py_objects *o, uint64_t module, uint64_t *dict)
{
	if (!is_type(o, module, o->t_module) || rd64(o, module + (uint64_t)o->module_dict, dict) < 0 ||
	    !is_type(o, *dict, o->t_dict))
		return -1;
	return 0;
}
