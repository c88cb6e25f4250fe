/* SPDX-License-Identifier: Apache-2.0 */
/* Short repr()s of objects, for locals and arguments (pydump -l). */
#include "cpython/objects.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/str_object.h"
#include "sys/remote_mem.h"
#include "sys/plural.h"

#define REPR_ITEMS 5           /* items shown of a container */
#define REPR_DEPTH 2           /* containers inside containers, then [...] */
#define REPR_STR_CHARS 60      /* characters shown of a str */
#define REPR_BYTES 40          /* bytes shown of a bytes */
#define LONG_DIGITS_MAX 70     /* 30-bit digits converted (2100 bits) */
#define PLAUSIBLE_LEN (1LL << 40)

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

/* Decimal text of an int of n digits (base 2^30), long ones cut. */
static int repr_int(const struct py_objects *o, uint64_t addr, struct out *w)
{
	uint32_t digits[LONG_DIGITS_MAX];
	uint32_t chunks[LONG_DIGITS_MAX * 2]; /* base 1e9, least significant first */
	size_t n, nchunks = 0;
	int sign;
	char text[LONG_DIGITS_MAX * 2 * 9 + 2];
	size_t tl = 0;

	if (py_long_shape(o, addr, &n, &sign) < 0)
		return -1;
	if (n > LONG_DIGITS_MAX) {
		putf(w, "<int of %zu bits>", n * 30);
		return 0;
	}
	if (py_long_digits(o, addr, n, digits) < 0)
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
	struct py_str_view v;
	size_t got;
	char q;

	if (py_str_view_read(o->p, addr, &v) < 0 ||
	    py_str_code_points(o->p, &v, cps, REPR_STR_CHARS, &got) < 0)
		return -1;
	q = pick_quote(cps, got);
	put(w, &q, 1);
	for (size_t i = 0; i < got; i++)
		put_char(w, cps[i], q, false);
	put(w, &q, 1);
	if ((size_t)v.length > got)
		putf(w, "...(%lld chars)", (long long)v.length);
	return 0;
}

static int repr_bytes(const struct py_objects *o, uint64_t addr, struct out *w)
{
	uint8_t data[REPR_BYTES];
	uint32_t cps[REPR_BYTES];
	int64_t size = 0;
	size_t n;
	char q;

	if (remote_read(o->p->pid, addr + (uint64_t)o->p->off.bytes_size, &size, 8) < 0 || size < 0 ||
	    size > PLAUSIBLE_LEN)
		return -1;
	n = (size_t)size < sizeof(data) ? (size_t)size : sizeof(data);
	if (remote_read(o->p->pid, addr + (uint64_t)o->p->off.bytes_data, data, n) < 0)
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

static int repr_sequence(const struct py_objects *o, uint64_t addr, struct out *w, int depth,
			 const char *open, const char *close)
{
	uint64_t item[REPR_ITEMS];
	int64_t n = 0;
	int shown = py_sequence(o, addr, item, REPR_ITEMS, &n);

	if (shown < 0)
		return -1;
	puts_(w, open);
	if (depth >= REPR_DEPTH && n) {
		putf(w, "...%lld %s%s", (long long)n, plural((unsigned long long)n, "item", "items"),
		     close);
		return 0;
	}
	for (int i = 0; i < shown; i++) {
		if (i)
			puts_(w, ", ");
		repr_item(o, item[i], w, depth + 1);
	}
	if (n > shown)
		putf(w, ", ...%lld %s", (long long)n, plural((unsigned long long)n, "item", "items"));
	else if (n == 1 && open[0] == '(')
		puts_(w, ",");
	puts_(w, close);
	return 0;
}

struct items_repr {
	const struct py_objects *o;
	struct out *w;
	int depth;
	size_t n;
};

static int dict_item_repr(uint64_t key, uint64_t value, void *arg)
{
	struct items_repr *r = arg;

	if (r->n++)
		puts_(r->w, ", ");
	repr_item(r->o, key, r->w, r->depth + 1);
	puts_(r->w, ": ");
	repr_item(r->o, value, r->w, r->depth + 1);
	return 0;
}

static int set_item_repr(uint64_t key, uint64_t value, void *arg)
{
	struct items_repr *r = arg;

	(void)value;
	if (r->n++)
		puts_(r->w, ", ");
	repr_item(r->o, key, r->w, r->depth + 1);
	return 0;
}

/* A dict or set: "{...N items}" when deep, else its first items. */
static int repr_items(const struct py_objects *o, uint64_t addr, struct out *w, int depth,
		      bool dict, const char *open, const char *close)
{
	struct items_repr r = { o, w, depth, 0 };
	size_t mark = w->used;
	long n = dict ? py_dict_len(o, addr) : py_set_len(o, addr);

	if (n < 0)
		return -1;
	if (!n) {
		puts_(w, dict ? "{}" : open[0] == 'f' ? "frozenset()" : "set()");
		return 0;
	}
	puts_(w, open);
	if (depth >= REPR_DEPTH) {
		putf(w, "...%ld %s%s", n, plural((unsigned long long)n, "item", "items"), close);
		return 0;
	}
	if ((dict ? py_dict_each(o, addr, REPR_ITEMS, dict_item_repr, &r)
		  : py_set_each(o, addr, REPR_ITEMS, set_item_repr, &r)) < 0) {
		w->used = mark;
		w->buf[mark] = '\0';
		return -1;
	}
	if ((size_t)n > r.n)
		putf(w, ", ...%ld %s", n, plural((unsigned long long)n, "item", "items"));
	puts_(w, close);
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

		if (remote_read(o->p->pid, addr + (uint64_t)o->float_value, &v, 8) < 0)
			return -1;
		format_float(v, w);
		return 0;
	}
	if (type == o->t_str)
		return repr_str(o, addr, w);
	if (type == o->t_bytes)
		return repr_bytes(o, addr, w);
	if (type == o->t_tuple)
		return repr_sequence(o, addr, w, depth, "(", ")");
	if (type == o->t_list)
		return repr_sequence(o, addr, w, depth, "[", "]");
	if (type == o->t_dict)
		return repr_items(o, addr, w, depth, true, "{", "}");
	if (type == o->t_set)
		return repr_items(o, addr, w, depth, false, "{", "}");
	if (type == o->t_frozenset)
		return repr_items(o, addr, w, depth, false, "frozenset({", "})");
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
