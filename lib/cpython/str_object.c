/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/str_object.h"

#include <string.h>

#include "cpython/rules.h"
#include "sys/remote_mem.h"

#define STR_PLAUSIBLE (1LL << 40) /* a longer length is garbage */
#define NAME_PLAUSIBLE (1 << 20) /* a longer "name" or "file name" is garbage */

size_t utf8_encode(uint32_t cp, char out[4])
{
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int py_str_view_read(const struct py_process *p, uint64_t addr, struct py_str_view *v)
{
	const struct py_offsets *off = &p->off;
	unsigned shift = (unsigned)p->rules->str_state_interned_bits;
	uint32_t state = 0;
	bool compact;

	memset(v, 0, sizeof(*v));
	if (!addr || off->unicode_length < 0 || off->unicode_state < 0 ||
	    remote_read(p->pid, addr + (uint64_t)off->unicode_length, &v->length, 8) < 0 ||
	    remote_read(p->pid, addr + (uint64_t)off->unicode_state, &state, 4) < 0 ||
	    v->length < 0 || v->length > STR_PLAUSIBLE)
		return -1;
	v->kind = (state >> shift) & 7;
	compact = (state >> (shift + 3)) & 1;
	v->ascii = (state >> py_rules_str_ascii_bit(p->rules)) & 1;
	if ((v->kind != 1 && v->kind != 2 && v->kind != 4) || (v->ascii && v->kind != 1))
		return -1;
	if (compact)
		v->data = addr + (uint64_t)(v->ascii ? off->unicode_ascii_size
						     : off->unicode_compact_size);
	else if (remote_read_u64(p->pid, addr + (uint64_t)off->unicode_compact_size, &v->data) < 0)
		return -1; /* legacy string: data.any pointer follows the compact header */
	return 0;
}

int py_str_code_points(const struct py_process *p, const struct py_str_view *v, uint32_t *cps,
		       size_t max, size_t *got)
{
	uint8_t raw[256 * 4];
	size_t n = (size_t)v->length < max ? (size_t)v->length : max;

	*got = 0;
	for (size_t at = 0; at < n;) { /* in pieces of raw's size */
		size_t piece = n - at < sizeof(raw) / v->kind ? n - at : sizeof(raw) / v->kind;

		if (remote_read(p->pid, v->data + at * v->kind, raw, piece * v->kind) < 0)
			return -1;
		for (size_t i = 0; i < piece; i++) {
			uint32_t cp;

			if (v->kind == 1)
				cp = raw[i];
			else if (v->kind == 2)
				cp = (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8;
			else
				memcpy(&cp, raw + 4 * i, 4);
			if (cp > 0x10ffff || (v->ascii && cp > 0x7f))
				return -1;
			cps[at + i] = cp;
		}
		at += piece;
	}
	*got = n;
	return 0;
}

int py_read_string(const struct py_process *p, uint64_t addr, char *buf, size_t len)
{
	uint32_t cps[PY_STR_CHARS_MAX];
	struct py_str_view v;
	uint64_t type = 0;
	size_t got, out = 0;
	bool cut;

	if (len < 8)
		return -1;
	buf[0] = '\0';
	if (!addr || remote_read_u64(p->pid, addr + (uint64_t)p->off.object_type, &type) < 0 ||
	    type != p->unicode_type || py_str_view_read(p, addr, &v) < 0 ||
	    v.length > NAME_PLAUSIBLE || py_str_code_points(p, &v, cps, PY_STR_CHARS_MAX, &got) < 0)
		return -1;
	cut = (size_t)v.length > got;
	for (size_t i = 0; i < got; i++) {
		char enc[4];
		size_t n = utf8_encode(cps[i] < 0x20 || cps[i] == 0x7f ? 0xfffd : cps[i], enc);

		if (out + n + 4 > len) {
			cut = true;
			break;
		}
		memcpy(buf + out, enc, n);
		out += n;
	}
	if (cut && out + 4 <= len) {
		memcpy(buf + out, "...", 3);
		out += 3;
	}
	buf[out] = '\0';
	return 0;
}

bool py_str_equals(const struct py_process *p, uint64_t addr, const char *s)
{
	const struct py_offsets *off = &p->off;
	size_t n = strlen(s), at = (size_t)off->unicode_ascii_size;
	uint8_t raw[512];
	char buf[256];

	/* the usual case, a compact ASCII str: header and text in one read */
	if (n < sizeof(buf) - 4 && off->unicode_ascii_size >= 0 && at + n + 1 <= sizeof(raw) &&
	    off->unicode_length >= 0 && off->unicode_state >= 0 && off->object_type >= 0 &&
	    (size_t)off->unicode_state + 4 <= at && (size_t)off->unicode_length + 8 <= at &&
	    (size_t)off->object_type + 8 <= at && addr &&
	    remote_read(p->pid, addr, raw, at + n + 1) == 0) {
		unsigned shift = (unsigned)p->rules->str_state_interned_bits;
		uint64_t type, length;
		uint32_t state;

		memcpy(&type, raw + off->object_type, 8);
		memcpy(&length, raw + off->unicode_length, 8);
		memcpy(&state, raw + off->unicode_state, 4);
		if (type != p->unicode_type)
			return false;
		if (((state >> (shift + 3)) & 1) && ((state >> py_rules_str_ascii_bit(p->rules)) & 1) &&
		    ((state >> shift) & 7) == 1)
			return length == n && memcmp(raw + at, s, n) == 0;
	}
	return n < sizeof(buf) - 4 && py_read_string(p, addr, buf, sizeof(buf)) == 0 &&
	       strcmp(buf, s) == 0;
}
