/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/linetable.h"

#include <limits.h>
#include <stdbool.h>

/* Lines add up in 64 bits (firstlineno and deltas come from the target);
 * one that leaves int's range is garbage. */
static int line_value(int64_t line)
{
	return line < INT_MIN || line > INT_MAX ? LINE_UNKNOWN : (int)line;
}

int linetable_lnotab(const uint8_t *tab, size_t len, int firstlineno, int64_t offset)
{
	int64_t line = firstlineno;
	int64_t addr = 0;

	if (offset < 0)
		return firstlineno;
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += tab[i];
		if (addr > offset)
			break;
		line += (int8_t)tab[i + 1];
	}
	return line_value(line);
}

int linetable_310(const uint8_t *tab, size_t len, int firstlineno, int64_t offset)
{
	int64_t computed = firstlineno, line = LINE_UNKNOWN;
	int64_t end = 0;

	if (offset < 0)
		return firstlineno;
	/* Ranges are [start, start + delta); empty ranges still move the line. */
	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t ldelta = (int8_t)tab[i + 1];

		end += tab[i];
		if (ldelta == -128) {
			line = LINE_UNKNOWN;
		} else {
			computed += ldelta;
			line = computed;
		}
		if (offset < end)
			return line_value(line);
	}
	return LINE_UNKNOWN;
}

/* Varints of the 3.11 table: 6 bits per byte, bit 6 means "more". */
static bool read_varint(const uint8_t *tab, size_t len, size_t *pos, uint32_t *out)
{
	uint32_t val = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b;

		if (*pos >= len || shift > 28)
			return false;
		b = tab[(*pos)++];
		val |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	*out = val;
	return true;
}

static bool read_svarint(const uint8_t *tab, size_t len, size_t *pos, int *out)
{
	uint32_t u;

	if (!read_varint(tab, len, pos, &u))
		return false;
	*out = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
	return true;
}

int linetable_311(const uint8_t *tab, size_t len, int firstlineno, int64_t offset)
{
	int64_t line = firstlineno, end = 0;
	size_t pos = 0;

	if (offset < 0)
		return firstlineno;
	while (pos < len) {
		uint8_t first = tab[pos];
		int code = (first >> 3) & 15, delta = 0, result;

		if (!(first & 0x80))
			return LINE_UNKNOWN; /* not at an entry start: corrupt table */
		pos++;
		switch (code) {
		case 15: /* no location: this range has no line, the running one stays */
			break;
		case 13: /* no columns */
		case 14: /* long form */
			if (!read_svarint(tab, len, &pos, &delta))
				return LINE_UNKNOWN;
			break;
		case 10:
		case 11:
		case 12: /* one-line forms */
			delta = code - 10;
			break;
		default: /* short forms: same line */
			break;
		}
		line += delta;
		result = code == 15 ? LINE_UNKNOWN : line_value(line);
		end += ((first & 7) + 1) * 2;
		/* Skip the rest of the entry (column data) up to the next start byte. */
		while (pos < len && !(tab[pos] & 0x80))
			pos++;
		if (offset < end)
			return result;
	}
	return LINE_UNKNOWN;
}

int linetable_line(enum py_line_format format, const uint8_t *tab, size_t len, int firstlineno,
		   int64_t offset)
{
	switch (format) {
	case PY_LINES_LNOTAB:
		return linetable_lnotab(tab, len, firstlineno, offset);
	case PY_LINES_PEP626:
		return linetable_310(tab, len, firstlineno, offset);
	case PY_LINES_PEP657:
		return linetable_311(tab, len, firstlineno, offset);
	}
	return LINE_UNKNOWN;
}
