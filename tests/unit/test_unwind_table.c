// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/unwind_table.c: the rows the BPF unwinder reads say what the
 * DWARF rules say. For real files on this machine (libc, libpython, the
 * interpreters), every FDE and every pc in its range (or every Nth, to stay
 * within a budget of pcs per file) is stepped once by cfi_unwind_step and
 * once by a C copy of the BPF step over the table's row, from the same
 * synthetic registers and memory; then small handcrafted .eh_frame
 * sections for the edge cases.
 *
 *   test_unwind_table [PCS]   PCS: at most this many pcs per file (default
 *                             4000000: all of them in these files;
 *                             fewer under the sanitizers)
 */
#include <glob.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit_check.h"

#include "sys/cfi_unwind.h"
#include "sys/eh_frame.h"
#include "sys/elf_image.h"
#include "sys/unwind_table.h"

/* ---- synthetic machine ---------------------------------------------- */

/* Memory: the word at address a is a hash of a (never 0: 0 ends a walk). */
static uint64_t mem_at(uint64_t a)
{
	uint64_t z = a + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31)) | 1;
}

static int read_hash(void *ctx, uint64_t addr, uint64_t *value)
{
	(void)ctx;
	*value = mem_at(addr);
	return 0;
}

#define RSP0 0x7ffd12340000ULL
#define RBP0 0x7ffd12345670ULL

static void start_regs(struct proc_regs *r, uint64_t pc)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < XREG_COUNT; i++)
		proc_regs_set(r, i, 0x100000ULL * (uint64_t)(i + 1) + 0x48);
	proc_regs_set(r, XREG_RSP, RSP0 + (pc & 0x38));
	proc_regs_set(r, XREG_RBP, RBP0);
	proc_regs_set(r, XREG_RIP, pc);
	r->syscall_nr = -1;
}

enum bpf_result { BPF_OK, BPF_END, BPF_NO_INFO, BPF_SIGNAL };

/* The BPF step (abi/native_abi.h's contract) over one row. */
static enum bpf_result bpf_step(const struct pyb_unwind_row *row, uint64_t *rsp, uint64_t *rbp,
				uint64_t *rip)
{
	uint64_t cfa;

	if (!row)
		return BPF_NO_INFO;
	switch (row->kind) {
	case PYB_CFA_RSP: cfa = *rsp + (uint64_t)((int64_t)row->cfa_off8 * 8); break;
	case PYB_CFA_RBP: cfa = *rbp + (uint64_t)((int64_t)row->cfa_off8 * 8); break;
	case PYB_CFA_PLT:
		cfa = *rsp + (uint64_t)((int64_t)row->cfa_off8 * 8);
		if ((int64_t)(*rip & 15) >= row->rbp_off)
			cfa += 8;
		break;
	case PYB_CFA_SIGNAL: return BPF_SIGNAL;
	case PYB_CFA_END: return BPF_END;
	default: return BPF_NO_INFO;
	}
	*rip = mem_at(cfa - 8);
	if (row->kind != PYB_CFA_PLT && row->rbp_off != 0)
		*rbp = mem_at(cfa + 8 * (uint64_t)(int64_t)row->rbp_off);
	*rsp = cfa;
	return BPF_OK;
}

/* The CFI row at one pc (for PLT rows: the expression to evaluate). */
struct row_at {
	uint64_t pc;
	bool found;
	struct cfi_row row;
};

static int keep_row_at(void *ctx, uint64_t loc, const struct cfi_row *row)
{
	struct row_at *a = ctx;

	if (loc <= a->pc) {
		a->row = *row;
		a->found = true;
	}
	return 0;
}

/* A DWARF expression of the operations PLT entries use, evaluated on
 * registers: an independent check of the PLT rows. Returns 0 or -1. */
static int eval_expr(const uint8_t *p, size_t len, const struct proc_regs *r, uint64_t *out)
{
	uint64_t st[16];
	int sp = 0;
	const uint8_t *end = p + len;

	while (p < end) {
		uint8_t op = *p++;

		if (op >= 0x70 && op <= 0x80) { /* DW_OP_breg0..16, sleb offset */
			uint64_t off = 0;
			unsigned shift = 0;
			uint8_t b;

			do {
				if (p >= end || shift >= 63)
					return -1;
				b = *p++;
				off |= (uint64_t)(b & 0x7f) << shift;
				shift += 7;
			} while (b & 0x80);
			if (shift < 64 && (b & 0x40))
				off |= ~(uint64_t)0 << shift;
			if (sp == 16)
				return -1;
			st[sp++] = r->r[op - 0x70] + off;
		} else if (op >= 0x30 && op <= 0x4f) {
			if (sp == 16)
				return -1;
			st[sp++] = op - 0x30u;
		} else if (sp >= 2 && (op == 0x1a || op == 0x2a || op == 0x24 || op == 0x22)) {
			uint64_t b = st[--sp], a = st[--sp];

			st[sp++] = op == 0x1a ? (a & b)
				 : op == 0x2a ? (uint64_t)((int64_t)a >= (int64_t)b)
				 : op == 0x24 ? a << (b & 63)
					      : a + b;
		} else {
			return -1;
		}
	}
	if (sp != 1)
		return -1;
	*out = st[0];
	return 0;
}

/* ---- real files --------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum none_reason { WHY_CFA_REG, WHY_CFA_EXPR, WHY_CFA_OFF, WHY_RBP, WHY_RA, WHY_OTHER, WHY_COUNT };
static const char *const why_names[WHY_COUNT] = { "CFA on another register", "CFA expression",
						  "CFA offset", "rbp rule", "return address rule",
						  "other" };

struct counts {
	size_t pcs, none_pcs, cfi_ok_table_none, plt_pcs, end_pcs, signal_pcs, mismatches;
	size_t why[WHY_COUNT];
	int cfa_regs[XREG_COUNT + 1]; /* CFA registers of those on another register */
};

/* Why the table has no row for pc, by the DWARF rules there. */
static void count_none(const struct eh_cfi *cfi, uint64_t pc, struct counts *c)
{
	struct row_at at = { pc, false, { 0 } };
	const struct cfi_rule *bp = &at.row.reg[XREG_RBP], *ra = &at.row.reg[XREG_RIP];

	if (cfi->ra_reg != XREG_RIP || cfi_each_row(cfi, keep_row_at, &at) < 0 || !at.found)
		c->why[WHY_OTHER]++;
	else if (ra->kind != CFI_RULE_OFFSET || ra->value != -8)
		c->why[WHY_RA]++;
	else if (bp->kind != CFI_RULE_SAME && bp->kind != CFI_RULE_OFFSET)
		c->why[WHY_RBP]++;
	else if (at.row.cfa_reg == -1)
		c->why[WHY_CFA_EXPR]++;
	else if (at.row.cfa_reg != XREG_RSP && at.row.cfa_reg != XREG_RBP) {
		c->why[WHY_CFA_REG]++;
		c->cfa_regs[at.row.cfa_reg >= 0 && at.row.cfa_reg < XREG_COUNT ? at.row.cfa_reg
										 : XREG_COUNT]++;
	} else if (at.row.cfa_off % 8 || at.row.cfa_off / 8 < INT16_MIN ||
		   at.row.cfa_off / 8 > INT16_MAX)
		c->why[WHY_CFA_OFF]++; /* frames above 256 KiB */
	else if (bp->kind == CFI_RULE_OFFSET)
		c->why[WHY_RBP]++;
	else
		c->why[WHY_OTHER]++;
}

static void compare_pc(const struct eh_cfi *cfi, const struct unwind_table *t, uint64_t pc,
		       struct counts *c, const char *path)
{
	struct proc_regs regs, in;
	const struct pyb_unwind_row *row = unwind_table_find(t, pc);
	enum cfi_step_result rc;
	enum bpf_result br;
	uint64_t rsp, rbp, rip;
	bool bad = false;

	start_regs(&in, pc);
	regs = in;
	rc = cfi_unwind_step(cfi, pc, &regs, read_hash, NULL);
	rsp = in.r[XREG_RSP], rbp = in.r[XREG_RBP], rip = in.r[XREG_RIP];
	br = bpf_step(row, &rsp, &rbp, &rip);
	c->pcs++;
	if (!row) {
		bad = true;
	} else if (br == BPF_NO_INFO) {
		c->none_pcs++;
		count_none(cfi, pc, c);
		if (rc == CFI_STEP_OK)
			c->cfi_ok_table_none++;
		bad = rc == CFI_STEP_END;
	} else if (br == BPF_END) {
		c->end_pcs++;
		/* cfi may fail first on a CFA it cannot compute */
		bad = rc == CFI_STEP_OK;
	} else if (br == BPF_SIGNAL) {
		c->signal_pcs++;
		bad = !cfi->signal_frame;
	} else if (row->kind == PYB_CFA_PLT) {
		struct row_at at = { pc, false, { 0 } };
		uint64_t cfa;

		c->plt_pcs++;
		bad = rc == CFI_STEP_END || cfi_each_row(cfi, keep_row_at, &at) < 0 || !at.found ||
		      at.row.cfa_reg != -1 ||
		      eval_expr(at.row.cfa_expr, at.row.cfa_expr_len, &in, &cfa) < 0 || cfa != rsp ||
		      rip != mem_at(cfa - 8) || rbp != in.r[XREG_RBP];
	} else {
		/* RSP, RBP: what cfi_unwind_step says, exactly */
		bad = rc != CFI_STEP_OK || regs.r[XREG_RSP] != rsp || regs.r[XREG_RIP] != rip ||
		      (proc_regs_has(&regs, XREG_RBP) && regs.r[XREG_RBP] != rbp) ||
		      !proc_regs_has(&regs, XREG_RBP);
	}
	if (bad) {
		c->mismatches++;
		if (c->mismatches <= 10)
			fprintf(stderr,
				"%s: pc 0x%llx: cfi rc %d (rsp %llx rip %llx rbp %llx), row kind %d "
				"cfa_off %d rbp_off %d at 0x%llx (rsp %llx rip %llx rbp %llx)\n",
				path, (unsigned long long)pc, (int)rc,
				(unsigned long long)regs.r[XREG_RSP],
				(unsigned long long)regs.r[XREG_RIP],
				(unsigned long long)regs.r[XREG_RBP], row ? row->kind : -1,
				row ? row->cfa_off8 * 8 : 0, row ? row->rbp_off : 0,
				row ? (unsigned long long)row->pc : 0ULL, (unsigned long long)rsp,
				(unsigned long long)rip, (unsigned long long)rbp);
	}
}

static bool is_row_start(const struct unwind_table *t, uint64_t pc)
{
	const struct pyb_unwind_row *r = unwind_table_find(t, pc);

	return r && r->pc == pc;
}

/* Returns whether the file was there. */
static bool check_file(const char *path, size_t budget, bool is_libc)
{
	struct elf_image img;
	struct unwind_table t;
	uint64_t addr, size, total = 0, stride;
	uint8_t *data;
	struct eh_fde *fdes;
	size_t nfdes = 0, plt_rows = 0, none_rows = 0, end_rows = 0, signal_rows = 0, gaps = 0;
	struct counts c;
	char err[256];
	double t0, build_s, t1;

	if (elf_image_open(&img, path) < 0)
		return false;
	if (elf_image_section(&img, ".eh_frame", &addr, &size) < 0 || !size) {
		elf_image_close(&img);
		return false;
	}
	data = malloc(size);
	CHECK(data && elf_image_read_vaddr(&img, addr, data, size) == 0);
	t0 = now();
	CHECK(unwind_table_build(&img, &t, err, sizeof(err)) == 0);
	build_s = now() - t0;
	elf_image_close(&img);
	fdes = eh_frame_fdes(data, size, addr, &nfdes);
	CHECK(nfdes == t.fdes);
	for (size_t i = 0; i < t.n; i++) {
		CHECK(i == 0 || t.rows[i - 1].pc < t.rows[i].pc);
		CHECK(t.rows[i].kind <= PYB_CFA_END);
		CHECK(i == 0 || t.rows[i - 1].kind != t.rows[i].kind ||
		      t.rows[i - 1].cfa_off8 != t.rows[i].cfa_off8 ||
		      t.rows[i - 1].rbp_off != t.rows[i].rbp_off);
		plt_rows += t.rows[i].kind == PYB_CFA_PLT;
		none_rows += t.rows[i].kind == PYB_CFA_NONE;
		end_rows += t.rows[i].kind == PYB_CFA_END;
		signal_rows += t.rows[i].kind == PYB_CFA_SIGNAL;
	}
	for (size_t i = 0; i < nfdes; i++)
		total += fdes[i].end - fdes[i].start;
	stride = total / budget + 1;
	if (stride > 1 && !(stride & 1))
		stride++; /* odd: every offset within 16-byte PLT entries comes up */
	memset(&c, 0, sizeof(c));
	t1 = now();
	for (size_t i = 0; i < nfdes; i++) {
		const struct eh_fde *f = &fdes[i];
		struct eh_cfi cfi;

		if (eh_frame_cfi(data, size, addr, f, &cfi) < 0)
			continue;
		/* overlapped by the next FDE: the later start wins there */
		for (uint64_t pc = f->start; pc < f->end; pc++) {
			if (i + 1 < nfdes && pc >= fdes[i + 1].start)
				break;
			if ((pc - f->start) % stride == 0 || is_row_start(&t, pc) ||
			    is_row_start(&t, pc + 1))
				compare_pc(&cfi, &t, pc, &c, path);
		}
		/* the gap after a function has no information */
		if (!eh_frame_fde_covering(fdes, nfdes, f->end) &&
		    (i + 1 == nfdes || fdes[i + 1].start > f->end)) {
			const struct pyb_unwind_row *r = unwind_table_find(&t, f->end);

			gaps++;
			CHECK(r && r->kind == PYB_CFA_NONE);
		}
	}
	CHECK(c.mismatches == 0);
	printf("%s: %zu FDEs (%zu garbled), %zu rows (%zu PLT, %zu NONE, %zu END, %zu SIGNAL), "
	       "%zu gaps; built in %.1f ms\n",
	       path, t.fdes, t.fdes_garbled, t.n, plt_rows, none_rows, end_rows, signal_rows, gaps,
	       build_s * 1e3);
	printf("  %zu pcs compared (every %llu of %llu bytes of code, and around every row) in "
	       "%.2f s: %zu on NONE (%.3f%%; %zu of them unwound by cfi_unwind_step), "
	       "%zu PLT, %zu END, %zu SIGNAL, %zu mismatches\n",
	       c.pcs, (unsigned long long)stride, (unsigned long long)total, now() - t1,
	       c.none_pcs, c.pcs ? 100.0 * (double)c.none_pcs / (double)c.pcs : 0.0,
	       c.cfi_ok_table_none, c.plt_pcs, c.end_pcs, c.signal_pcs, c.mismatches);
	if (c.none_pcs) {
		printf("  NONE pcs by cause:");
		for (int w = 0; w < WHY_COUNT; w++)
			if (c.why[w])
				printf(" %s %zu", why_names[w], c.why[w]);
		for (int r = 0; r <= XREG_COUNT; r++)
			if (c.cfa_regs[r])
				printf(" (CFA on r%d: %d)", r, c.cfa_regs[r]);
		printf("\n");
	}
	if (is_libc)
		CHECK(c.pcs > 0 && (double)c.none_pcs < 0.02 * (double)c.pcs);
	CHECK(c.pcs > 0);
	free(fdes);
	free(data);
	unwind_table_free(&t);
	return true;
}

static void test_real_files(size_t budget)
{
	static const char *fixed[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
		"/usr/bin/python3.11",
	};
	const char *home = getenv("HOME");
	char pattern[512];
	glob_t g;
	int ran = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (check_file(fixed[i], budget, i == 0))
			ran++;
		else
			printf("%s: not here, skipped\n", fixed[i]);
	}
	snprintf(pattern, sizeof(pattern), "%s/.pyenv/versions/3.1*/lib/libpython3.1*.so.1.0",
		 home ? home : "/root");
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			ran += check_file(g.gl_pathv[i], budget, false);
		globfree(&g);
	}
	printf("%d real files checked\n", ran);
}

/* ---- handcrafted sections -------------------------------------------- */

struct eh {
	uint8_t b[80 << 10]; /* room for a CIE over CFI_FDE_BYTES_MAX */
	size_t n;
};

static void put(struct eh *e, const void *p, size_t n)
{
	if (n)
		memcpy(e->b + e->n, p, n);
	e->n += n;
}

static void put32(struct eh *e, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	put(e, b, 4);
}

static void patch_len(struct eh *e, size_t at)
{
	uint32_t len = (uint32_t)(e->n - at - 4);

	memcpy(e->b + at, &len, 4); /* x86-64: little-endian like the section */
}

/* def_cfa rsp+8, return address at CFA-8: what every x86-64 CIE says */
static const uint8_t cie_std[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };

/* A CIE (version 1, code align 1, data align -8, absolute 4-byte FDE
 * addresses); returns its offset. */
static size_t add_cie(struct eh *e, const char *aug, uint8_t ra, const uint8_t *insns, size_t n)
{
	size_t at = e->n;
	uint8_t head[] = { 1 };
	uint8_t tail[] = { 0x01, 0x78, ra, 0x01, 0x03 }; /* caf, daf, ra, aug len, 'R' enc */

	put32(e, 0);
	put32(e, 0);
	put(e, head, 1);
	put(e, aug, strlen(aug) + 1);
	put(e, tail, sizeof(tail));
	put(e, insns, n);
	patch_len(e, at);
	return at;
}

static void add_fde(struct eh *e, size_t cie, uint32_t start, uint32_t len, const uint8_t *insns,
		    size_t n)
{
	size_t at = e->n;
	uint8_t aug = 0;

	put32(e, 0);
	put32(e, (uint32_t)(e->n - cie));
	put32(e, start);
	put32(e, len);
	put(e, &aug, 1);
	put(e, insns, n);
	patch_len(e, at);
}

static bool row_is(const struct unwind_table *t, uint64_t pc, int kind, int cfa_off, int rbp_off)
{
	const struct pyb_unwind_row *r = unwind_table_find(t, pc);

	if (r && r->kind == kind && r->cfa_off8 * 8 == cfa_off && r->rbp_off == rbp_off)
		return true;
	fprintf(stderr, "  pc 0x%llx: row %d/%d/%d, want %d/%d/%d\n", (unsigned long long)pc,
		r ? r->kind : -1, r ? r->cfa_off8 * 8 : 0, r ? r->rbp_off : 0, kind, cfa_off, rbp_off);
	return false;
}

static int build(const struct eh *e, struct unwind_table *t)
{
	char err[128];

	return unwind_table_from_eh_frame(e->b, e->n, 0x400000, t, err, sizeof(err));
}

static void test_handcrafted(void)
{
	struct eh e;
	struct unwind_table t;
	size_t cie, cie_s, cie_r12;
	char err[128];

	/* push rbp; mov rbp,rsp; ...; leave; ret, and a gap after it */
	static const uint8_t frame[] = {
		0x41, 0x0e, 0x10, 0x86, 0x02, /* +1: CFA rsp+16, rbp at CFA-16 */
		0x43, 0x0d, 0x06,             /* +4: CFA rbp+16 */
		0x4a, 0x0c, 0x07, 0x08,       /* +14: CFA rsp+8 (after leave) */
	};
	/* push rbx; ...; remember; pop rbx; ret; restore; more body */
	static const uint8_t remember[] = {
		0x41, 0x0e, 0x10, 0x83, 0x02, /* +1: CFA rsp+16 */
		0x45, 0x0a, 0x0e, 0x08,       /* +6: remember, CFA rsp+8 */
		0x41, 0x0b,                   /* +7: restore: CFA rsp+16 again */
	};
	static const uint8_t undefined_ra[] = { 0x07, 0x10 };
	static const uint8_t rbp_in_reg[] = { 0x42, 0x09, 0x06, 0x0c, 0x42, 0x08, 0x06 };
	static const uint8_t rbp_odd[] = {
		0x11, 0x06, 0x7f, /* rbp at CFA+8 (offset_extended_sf -1 * -8) */
		0x42, 0x14, 0x06, 0x02, /* +2: rbp's value is CFA-16 (val_offset) */
	};
	static const uint8_t big_cfa[] = { 0x0e, 0x80, 0xb5, 0x18 }; /* CFA rsp+400000 */
	static const uint8_t plt[] = { 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
				       0x3b, 0x2a, 0x33, 0x24, 0x22 };
	static const uint8_t not_plt[] = { 0x0f, 0x0b, 0x77, 0x10, 0x80, 0x00, 0x3f, 0x1a,
					   0x3b, 0x2a, 0x33, 0x24, 0x22 };
	static const uint8_t garbled[] = { 0x41, 0x0e, 0x10, 0x41, 0x01 }; /* set_loc */
	static const uint8_t later[] = { 0x50, 0x0e, 0x10 };                /* +16: rsp+16 */

	memset(&e, 0, sizeof(e));
	cie = add_cie(&e, "zR", 16, cie_std, sizeof(cie_std));
	cie_s = add_cie(&e, "zRS", 16, cie_std, sizeof(cie_std));
	cie_r12 = add_cie(&e, "zR", 12, cie_std, sizeof(cie_std));
	add_fde(&e, cie, 0x1000, 0x20, frame, sizeof(frame));
	add_fde(&e, cie, 0x1030, 0x10, remember, sizeof(remember));
	add_fde(&e, cie, 0x1040, 0x10, undefined_ra, sizeof(undefined_ra));
	add_fde(&e, cie, 0x1050, 0x10, rbp_in_reg, sizeof(rbp_in_reg));
	add_fde(&e, cie, 0x1060, 0x10, rbp_odd, sizeof(rbp_odd));
	add_fde(&e, cie, 0x1070, 0x10, big_cfa, sizeof(big_cfa));
	add_fde(&e, cie, 0x1080, 0x40, plt, sizeof(plt));
	add_fde(&e, cie, 0x10c0, 0x10, not_plt, sizeof(not_plt));
	add_fde(&e, cie_s, 0x10d0, 0x10, cie_std, 0);
	add_fde(&e, cie_r12, 0x10e0, 0x10, cie_std, 0);
	add_fde(&e, cie, 0x10f0, 0x10, garbled, sizeof(garbled));
	add_fde(&e, cie, 0x1200, 0x40, later, sizeof(later)); /* overlapped from 0x1220 */
	add_fde(&e, cie, 0x1220, 0x10, frame, 1);
	add_fde(&e, cie, 0x1300, 0x10, NULL, 0);              /* adjacent: 0x1310 */
	add_fde(&e, cie, 0x1310, 0x20, later, sizeof(later)); /* the same first row */
	put32(&e, 0);

	CHECK(build(&e, &t) == 0);
	CHECK(t.fdes == 15 && t.fdes_garbled == 1);
	CHECK(unwind_table_find(&t, 0xfff) == NULL);
	/* a frame-pointer function */
	CHECK(row_is(&t, 0x1000, PYB_CFA_RSP, 8, 0));
	CHECK(row_is(&t, 0x1001, PYB_CFA_RSP, 16, -2));
	CHECK(row_is(&t, 0x1004, PYB_CFA_RBP, 16, -2));
	CHECK(row_is(&t, 0x100d, PYB_CFA_RBP, 16, -2));
	CHECK(row_is(&t, 0x100e, PYB_CFA_RSP, 8, -2));
	/* the gap up to the next function */
	CHECK(row_is(&t, 0x1020, PYB_CFA_NONE, 0, 0));
	CHECK(row_is(&t, 0x102f, PYB_CFA_NONE, 0, 0));
	/* remember/restore_state */
	CHECK(row_is(&t, 0x1030, PYB_CFA_RSP, 8, 0));
	CHECK(row_is(&t, 0x1031, PYB_CFA_RSP, 16, 0));
	CHECK(row_is(&t, 0x1036, PYB_CFA_RSP, 8, 0));
	CHECK(row_is(&t, 0x1037, PYB_CFA_RSP, 16, 0));
	CHECK(row_is(&t, 0x103f, PYB_CFA_RSP, 16, 0));
	/* the outermost frame */
	CHECK(row_is(&t, 0x1040, PYB_CFA_END, 0, 0));
	/* rbp in a register, saved above the CFA, given by value */
	CHECK(row_is(&t, 0x1051, PYB_CFA_RSP, 8, 0));
	CHECK(row_is(&t, 0x1052, PYB_CFA_NONE, 0, 0));
	CHECK(row_is(&t, 0x1054, PYB_CFA_RSP, 8, 0)); /* same_value again */
	CHECK(row_is(&t, 0x1060, PYB_CFA_RSP, 8, 1));
	CHECK(row_is(&t, 0x1062, PYB_CFA_NONE, 0, 0));
	CHECK(row_is(&t, 0x1070, PYB_CFA_NONE, 0, 0)); /* CFA offset beyond 256 KiB */
	/* a PLT: the standard expression, and one that is not */
	CHECK(row_is(&t, 0x1080, PYB_CFA_PLT, 8, 11));
	CHECK(row_is(&t, 0x10bf, PYB_CFA_PLT, 8, 11));
	CHECK(row_is(&t, 0x10c0, PYB_CFA_NONE, 0, 0));
	/* a signal trampoline; a CIE whose return address is not rip */
	CHECK(row_is(&t, 0x10d0, PYB_CFA_SIGNAL, 0, 0));
	CHECK(row_is(&t, 0x10df, PYB_CFA_SIGNAL, 0, 0));
	CHECK(row_is(&t, 0x10e0, PYB_CFA_NONE, 0, 0));
	/* garbled: the whole range has no information, what follows is kept */
	CHECK(row_is(&t, 0x10f0, PYB_CFA_NONE, 0, 0));
	CHECK(row_is(&t, 0x10f1, PYB_CFA_NONE, 0, 0));
	/* overlapping FDEs: the later start wins from its start */
	CHECK(row_is(&t, 0x1200, PYB_CFA_RSP, 8, 0));
	CHECK(row_is(&t, 0x1210, PYB_CFA_RSP, 16, 0));
	CHECK(row_is(&t, 0x1220, PYB_CFA_RSP, 8, 0));
	CHECK(row_is(&t, 0x1230, PYB_CFA_NONE, 0, 0));
	/* adjacent FDEs: no NONE row between them, equal rows merged */
	CHECK(row_is(&t, 0x1300, PYB_CFA_RSP, 8, 0));
	CHECK(row_is(&t, 0x1310, PYB_CFA_RSP, 8, 0));
	CHECK(unwind_table_find(&t, 0x1310)->pc == 0x1300);
	CHECK(row_is(&t, 0x1320, PYB_CFA_RSP, 16, 0));
	CHECK(row_is(&t, 0x1330, PYB_CFA_NONE, 0, 0));
	CHECK(row_is(&t, 0xffffffffff, PYB_CFA_NONE, 0, 0));
	for (size_t i = 1; i < t.n; i++)
		CHECK(t.rows[i - 1].pc < t.rows[i].pc);
	unwind_table_free(&t);

	/* code above 4 GiB does not fit the rows */
	memset(&e, 0, sizeof(e));
	cie = add_cie(&e, "zR", 16, cie_std, sizeof(cie_std));
	add_fde(&e, cie, 0x1000, 0x10, NULL, 0);
	add_fde(&e, cie, 0xfffffff8, 0x10, NULL, 0);
	CHECK(unwind_table_from_eh_frame(e.b, e.n, 0, &t, err, sizeof(err)) < 0);
	CHECK(strstr(err, "4 GiB") != NULL && t.n == 0 && t.rows == NULL);
	/* nothing at all */
	CHECK(unwind_table_from_eh_frame(e.b, 0, 0, &t, err, sizeof(err)) == 0 && t.n == 0);
	unwind_table_free(&t);
}

/* A CIE shared by many FDEs: its instructions run once for all of them
 * (the rows the same as from the CIE without its padding), and a CIE over
 * the per-FDE budget gets its FDEs no rows, counted as cut. */
static void test_shared_cie(void)
{
	static struct eh plain, padded, over;
	static uint8_t nops[sizeof(cie_std) + 4000], huge[sizeof(cie_std) + CFI_FDE_BYTES_MAX];
	static const uint8_t push[] = { 0x41, 0x0e, 0x10 }; /* +1: CFA rsp+16 */
	struct eh *e[3] = { &plain, &padded, &over };
	const uint8_t *insns[3] = { cie_std, nops, huge };
	size_t len[3] = { sizeof(cie_std), sizeof(nops), sizeof(huge) };
	struct unwind_table t[3];

	memcpy(nops, cie_std, sizeof(cie_std)); /* then DW_CFA_nop */
	memcpy(huge, cie_std, sizeof(cie_std));
	for (int k = 0; k < 3; k++) {
		size_t cie = add_cie(e[k], "zR", 16, insns[k], len[k]);

		for (uint32_t i = 0; i < 100; i++)
			add_fde(e[k], cie, 0x1000 + 16 * i, 16, push, sizeof(push));
		put32(e[k], 0);
		CHECK(build(e[k], &t[k]) == 0 && t[k].fdes == 100 && t[k].fdes_garbled == 0);
	}
	CHECK(t[0].n == t[1].n && t[0].n &&
	      memcmp(t[0].rows, t[1].rows, t[0].n * sizeof(*t[0].rows)) == 0);
	CHECK(t[1].fdes_cut == 0 && t[1].cfi_bytes < sizeof(nops) + 100 * 8);
	CHECK(t[2].fdes_cut == 100 && t[2].cfi_bytes == 0);
	CHECK(row_is(&t[2], 0x1000, PYB_CFA_NONE, 0, 0) && row_is(&t[2], 0x1011, PYB_CFA_NONE, 0, 0));
	for (int k = 0; k < 3; k++)
		unwind_table_free(&t[k]);
}

int main(int argc, char **argv)
{
	size_t budget = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000000;

	test_handcrafted();
	test_shared_cie();
	test_real_files(budget ? budget : 1);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
