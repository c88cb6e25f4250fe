// SPDX-License-Identifier: Apache-2.0
/*
 * A fragment of a function begins at code that nothing falls through to
 * (what precedes it belongs to other code), so some part of the same
 * function jumps to its first byte; and it runs in the frame its entry set
 * up, so its FDE says CFA = rbp + 16 from the start (or, without frame
 * pointers, rsp plus the size of that frame), where a function of its own
 * (or a tail-called one) starts with CFA = rsp + 8. Starting from
 * the entry, every near jmp/jcc whose target is the first byte of such an
 * FDE adds that fragment, until none is left. Jumps are found by their
 * encoding (E9 rel32, 0F 8x rel32) at every byte, without decoding
 * instructions: a stray match would also have to land exactly on the
 * first byte of a frame-continuing FDE, which bytes that are not a jump
 * practically never do.
 */
#include "sys/code_fragments.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sys/eh_frame.h"

#define MAX_EH_FRAME (32u << 20)
#define MAX_SCAN (4u << 20) /* bytes of code scanned in all */

static bool covered(const struct code_range *r, int n, uint64_t addr)
{
	for (int i = 0; i < n; i++)
		if (addr >= r[i].start && addr < r[i].end)
			return true;
	return false;
}

static int32_t rel32(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;

	return (int32_t)v;
}

static void add_target(const struct eh_fde *fdes, size_t nfdes, uint64_t target,
		       struct code_range *out, int *n, int max)
{
	const struct eh_fde *f;

	if (*n >= max || covered(out, *n, target))
		return;
	f = eh_frame_fde_at(fdes, nfdes, target);
	if (f && f->continues_frame) {
		out[*n].start = f->start;
		out[*n].end = f->end;
		++*n;
	}
}

static bool mostly_frame_pointers(const struct eh_fde *fdes, size_t n)
{
	size_t rbp = 0;

	for (size_t i = 0; i < n; i++)
		rbp += fdes[i].uses_rbp;
	return n >= 16 && rbp * 2 >= n;
}

int eval_fragments(struct elf_image *img, uint64_t entry, uint64_t size, struct code_range *out,
		   int max, bool *frame_pointers)
{
	uint64_t eh_addr, eh_size, scanned = 0;
	uint8_t *eh = NULL, *code = NULL;
	struct eh_fde *fdes = NULL;
	size_t nfdes = 0;
	int n = 0;

	*frame_pointers = false;
	if (max < 1)
		return 0;
	out[n].start = entry;
	out[n].end = entry + size;
	n++;
	if (elf_image_section(img, ".eh_frame", &eh_addr, &eh_size) != 0 || !eh_size ||
	    eh_size > MAX_EH_FRAME || !(eh = malloc(eh_size)) ||
	    elf_image_read_vaddr(img, eh_addr, eh, eh_size) != 0)
		goto out;
	fdes = eh_frame_fdes(eh, eh_size, eh_addr, &nfdes);
	*frame_pointers = mostly_frame_pointers(fdes, nfdes);
	for (int i = 0; i < n; i++) {
		uint64_t len = out[i].end - out[i].start;

		if (len < 6 || len > MAX_SCAN - scanned)
			continue;
		scanned += len;
		free(code);
		code = malloc(len);
		if (!code || elf_image_read_vaddr(img, out[i].start, code, len) != 0)
			continue;
		for (uint64_t k = 0; k + 5 <= len; k++) {
			uint64_t at = out[i].start + k;

			if (code[k] == 0xe9)
				add_target(fdes, nfdes, at + 5 + (uint64_t)(int64_t)rel32(code + k + 1),
					   out, &n, max);
			else if (code[k] == 0x0f && k + 6 <= len && (code[k + 1] & 0xf0) == 0x80)
				add_target(fdes, nfdes, at + 6 + (uint64_t)(int64_t)rel32(code + k + 2),
					   out, &n, max);
		}
	}
out:
	free(code);
	free(fdes);
	free(eh);
	return n;
}
