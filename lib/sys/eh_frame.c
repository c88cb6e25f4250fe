// SPDX-License-Identifier: Apache-2.0
/*
 * .eh_frame, as the System V x86-64 ABI and the LSB describe it: a list of
 * CIEs and FDEs; every FDE names its CIE, which says how the FDE's code
 * addresses are encoded ('R' in its augmentation). Only what eh_frame.h
 * promises is decoded; anything unexpected ends the walk cleanly.
 */
#include "sys/eh_frame.h"
#include "sys/grow.h"

#include <stdlib.h>
#include <string.h>

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_pcrel 0x10
#define X86_64_RBP 6
#define X86_64_RSP 7
/* Longer than any real one: a longer LEB128 or augmentation string is
 * garbage, and scanning it for every FDE of its CIE would cost the square
 * of the section's size. */
#define LEB128_MAX 16
#define AUGMENTATION_MAX 32

struct reader {
	const uint8_t *p, *end;
	bool bad;
};

static bool need(struct reader *r, size_t n)
{
	/* p past end (a record shorter than its own fields) is as bad as short */
	if (r->bad || r->p > r->end || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return false;
	}
	return true;
}

static uint64_t read_le(struct reader *r, size_t n)
{
	uint64_t v = 0;

	if (!need(r, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t read_uleb(struct reader *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; need(r, 1); shift += 7) {
		uint8_t b = *r->p++;

		if (shift >= 7 * LEB128_MAX) {
			r->bad = true;
			return 0;
		}

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

static int64_t read_sleb(struct reader *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (need(r, 1)) {
		b = *r->p++;
		if (shift >= 7 * LEB128_MAX) {
			r->bad = true;
			return 0;
		}
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A pointer in ENC's format (low nibble); pc-relative ones are relative to
 * the address of the field itself. */
static uint64_t read_pointer(struct reader *r, uint8_t enc, uint64_t field_addr, bool apply)
{
	uint64_t v;

	switch (enc & 0x0f) {
	case 0x00: v = read_le(r, 8); break;
	case 0x01: v = read_uleb(r); break;
	case 0x02: v = read_le(r, 2); break;
	case 0x03: v = read_le(r, 4); break;
	case 0x04: v = read_le(r, 8); break;
	case 0x09: v = (uint64_t)read_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)read_le(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)read_le(r, 4); break;
	case 0x0c: v = read_le(r, 8); break;
	default: r->bad = true; return 0;
	}
	if (apply && (enc & 0x70) == DW_EH_PE_pcrel)
		v += field_addr;
	else if (apply && (enc & 0x70) != 0)
		r->bad = true; /* textrel, datarel, funcrel: not used for code ranges */
	return v;
}

struct cie {
	uint8_t fde_enc;
	bool has_z;
	bool signal_frame;          /* 'S': the FDE's code is a signal trampoline */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	const uint8_t *insns, *end; /* initial instructions */
};

static bool parse_cie(const uint8_t *base, const uint8_t *at, const uint8_t *end, uint64_t vaddr,
		      struct cie *out)
{
	struct reader r = { at, end, false };
	uint8_t version;
	const char *aug;
	const uint8_t *nul;

	memset(out, 0, sizeof(*out));
	version = (uint8_t)read_le(&r, 1);
	if (r.bad || (version != 1 && version != 3))
		return false;
	nul = memchr(r.p, '\0', (size_t)(r.end - r.p) < AUGMENTATION_MAX ? (size_t)(r.end - r.p)
								  : AUGMENTATION_MAX);
	if (!nul)
		return false;
	aug = (const char *)r.p;
	r.p = nul + 1;
	out->code_align = read_uleb(&r);
	out->data_align = read_sleb(&r);
	if (version == 1)
		out->ra_reg = read_le(&r, 1);
	else
		out->ra_reg = read_uleb(&r);
	out->end = end;
	if (aug[0] != 'z') {
		out->insns = r.p;
		return aug[0] == '\0' && !r.bad;
	}
	out->has_z = true;
	{
		uint64_t aug_len = read_uleb(&r);

		/* the instructions follow the augmentation data */
		out->insns = aug_len <= (uint64_t)(r.end - r.p) ? r.p + aug_len : r.end;
	}
	for (const char *c = aug + 1; *c && !r.bad; c++) {
		switch (*c) {
		case 'R': out->fde_enc = (uint8_t)read_le(&r, 1); break;
		case 'L': (void)read_le(&r, 1); break;
		case 'P': {
			uint8_t enc = (uint8_t)read_le(&r, 1);

			(void)read_pointer(&r, enc, vaddr + (uint64_t)(r.p - base), false);
			break;
		}
		case 'S': out->signal_frame = true; break;
		case 'B': break;
		default: return false;
		}
	}
	return !r.bad && out->fde_enc != DW_EH_PE_omit;
}

static void skip_block(struct reader *r)
{
	uint64_t len = read_uleb(r);

	if (len > (uint64_t)(r->end - r->p))
		r->bad = true;
	else
		r->p += len;
}

/*
 * Runs through the FDE's call frame instructions: whether the CFA is
 * defined on rbp, or on rsp at another offset than a call leaves (8),
 * before the first advance (at the FDE's first byte: a frame is already
 * set up there), and on rbp anywhere in it (the function keeps a frame
 * pointer).
 */
static void scan_cfa(struct reader *r, struct eh_fde *f)
{
	bool advanced = false;

	while (need(r, 1)) {
		uint8_t op = *r->p++;
		int64_t reg = -1, off = -1;

		switch (op >> 6) {
		case 1: advanced = true; continue; /* DW_CFA_advance_loc */
		case 2: (void)read_uleb(r); continue; /* DW_CFA_offset */
		case 3: continue; /* DW_CFA_restore */
		}
		switch (op) {
		case 0x00: case 0x0a: case 0x0b: break; /* nop, remember/restore_state */
		case 0x02: (void)read_le(r, 1); advanced = true; break;
		case 0x03: (void)read_le(r, 2); advanced = true; break;
		case 0x04: (void)read_le(r, 4); advanced = true; break;
		case 0x0c: /* def_cfa */
			reg = (int64_t)read_uleb(r);
			off = (int64_t)read_uleb(r);
			break;
		case 0x12: /* def_cfa_sf */
			reg = (int64_t)read_uleb(r);
			(void)read_sleb(r); /* factored: not the plain case looked for */
			break;
		case 0x0d: reg = (int64_t)read_uleb(r); break; /* def_cfa_register */
		case 0x0e: off = (int64_t)read_uleb(r); break; /* def_cfa_offset */
		case 0x06: case 0x07: case 0x08: case 0x2e: (void)read_uleb(r); break;
		case 0x13: (void)read_sleb(r); break; /* def_cfa_offset_sf */
		case 0x05: case 0x09: case 0x14: case 0x2f: (void)read_uleb(r); (void)read_uleb(r); break;
		case 0x11: case 0x15: (void)read_uleb(r); (void)read_sleb(r); break;
		case 0x0f: skip_block(r); break; /* def_cfa_expression */
		case 0x10: case 0x16: (void)read_uleb(r); skip_block(r); break;
		default: return; /* unknown: what was seen stands */
		}
		if (reg == X86_64_RBP && !r->bad) {
			f->uses_rbp = true;
			if (!advanced)
				f->continues_frame = true;
		}
		/* the CIE's rule is rsp + 8; rsp is the only other CFA register
		 * compilers use at a function's first byte */
		if (off >= 0 && off != 8 && (reg < 0 || reg == X86_64_RSP) && !advanced && !r->bad)
			f->continues_frame = true;
	}
}

static int by_start(const void *a, const void *b)
{
	const struct eh_fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct eh_fde *eh_frame_fdes(const uint8_t *data, size_t size, uint64_t vaddr, size_t *count)
{
	struct eh_fde *fdes = NULL;
	size_t n = 0, cap = 0;
	const uint8_t *p = data, *end = data + size;

	*count = 0;
	while ((size_t)(end - p) >= 8) {
		struct reader r = { p, end, false };
		uint64_t len = read_le(&r, 4);
		const uint8_t *body, *next;
		uint32_t id;

		if (len == 0)
			break; /* terminator */
		if (len == 0xffffffffu || len > (uint64_t)(end - r.p))
			break; /* 64-bit entries are not emitted for x86-64 code */
		body = r.p;
		next = body + len;
		r.end = next;
		id = (uint32_t)read_le(&r, 4);
		if (id != 0 && id <= (uint64_t)(body - data)) {
			struct cie cie;
			const uint8_t *cie_at = body - id;
			struct reader cr = { cie_at, end, false };
			uint64_t cie_len = read_le(&cr, 4);
			uint64_t start, range;

			/* a CIE holds at least its id: a length of 1-3 would put
			 * its end before its body */
			if (cie_len < 4 || cie_len > (uint64_t)(end - cr.p) || read_le(&cr, 4) != 0 ||
			    cr.bad || !parse_cie(data, cr.p, cr.p + cie_len - 4, vaddr, &cie)) {
				p = next;
				continue;
			}
			start = read_pointer(&r, cie.fde_enc, vaddr + (uint64_t)(r.p - data), true);
			range = read_pointer(&r, cie.fde_enc, 0, false);
			if (cie.has_z) {
				uint64_t aug = read_uleb(&r);

				if (aug > (uint64_t)(r.end - r.p))
					r.bad = true;
				else
					r.p += aug;
			}
			if (!r.bad && range && start + range > start) {
				struct eh_fde *grown = grow_room(fdes, n, &cap, 256, sizeof(*fdes));

				if (!grown)
					break;
				fdes = grown;
				fdes[n].start = start;
				fdes[n].end = start + range;
				fdes[n].entry = (uint32_t)(p - data);
				fdes[n].continues_frame = fdes[n].uses_rbp = false;
				scan_cfa(&r, &fdes[n]);
				n++;
			}
		}
		p = next;
	}
	if (!n) {
		free(fdes);
		return NULL;
	}
	qsort(fdes, n, sizeof(*fdes), by_start);
	*count = n;
	return fdes;
}

const struct eh_fde *eh_frame_fde_at(const struct eh_fde *fdes, size_t count, uint64_t addr)
{
	size_t lo = 0, hi = count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fdes[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < count && fdes[lo].start == addr ? &fdes[lo] : NULL;
}

int eh_frame_cfi(const uint8_t *data, size_t size, uint64_t vaddr, const struct eh_fde *fde,
		 struct eh_cfi *out)
{
	const uint8_t *end = data + size, *body, *cie_at;
	struct reader r = { data + fde->entry, end, false };
	uint64_t len, cie_len, start, range;
	struct reader cr;
	struct cie cie;
	uint32_t id;

	if (fde->entry > size)
		return -1;
	len = read_le(&r, 4);
	if (r.bad || len == 0 || len > (uint64_t)(end - r.p))
		return -1;
	body = r.p;
	r.end = body + len;
	id = (uint32_t)read_le(&r, 4);
	if (r.bad || id == 0 || id > (uint64_t)(body - data))
		return -1;
	cie_at = body - id;
	cr = (struct reader){ cie_at, end, false };
	cie_len = read_le(&cr, 4);
	if (cie_len == 0 || cie_len > (uint64_t)(end - cr.p) || read_le(&cr, 4) != 0 || cr.bad ||
	    !parse_cie(data, cr.p, cr.p + cie_len - 4, vaddr, &cie))
		return -1;
	start = read_pointer(&r, cie.fde_enc, vaddr + (uint64_t)(r.p - data), true);
	range = read_pointer(&r, cie.fde_enc, 0, false);
	if (cie.has_z) {
		uint64_t aug = read_uleb(&r);

		if (r.bad || aug > (uint64_t)(r.end - r.p))
			return -1;
		r.p += aug;
	}
	if (r.bad || start != fde->start || start + range != fde->end)
		return -1;
	out->start = start;
	out->end = start + range;
	out->code_align = cie.code_align;
	out->data_align = cie.data_align;
	out->ra_reg = cie.ra_reg;
	out->signal_frame = cie.signal_frame;
	out->cie_insns = cie.insns;
	out->cie_len = (size_t)(cie.end - cie.insns);
	out->fde_insns = r.p;
	out->fde_len = (size_t)(r.end - r.p);
	out->cie_entry = (uint32_t)(cie_at - data);
	return 0;
}

const struct eh_fde *eh_frame_fde_covering(const struct eh_fde *fdes, size_t count, uint64_t addr)
{
	size_t lo = 0, hi = count;

	/* the last FDE that starts at or before addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fdes[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < fdes[lo - 1].end ? &fdes[lo - 1] : NULL;
}
