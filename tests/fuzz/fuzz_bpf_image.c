// SPDX-License-Identifier: Apache-2.0
/*
 * lib/bpf/bpf_image.c given a hostile cache entry (the files of
 * lib/bpf/bpf_cache.c are checked for their owner and mode, but a disk
 * error or another version must still never crash the reader): parse
 * accepts it or says why; an accepted image serializes back to the same
 * bytes, and every function relocates with every map reference in range.
 * Input: a serialized image (seeds: the tools' own, from a warm cache).
 */
#include <linux/bpf.h>

#include "fuzz_common.h"
#include "bpf/bpf_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpf_image img;
	char err[160];
	uint8_t *out;
	size_t len;

	if (bpf_image_parse(&img, data, size, err, sizeof(err)) < 0) {
		FUZZ_CHECK(err[0]);
		return 0;
	}
	FUZZ_CHECK(bpf_image_serialize(&img, &out, &len) == 0);
	FUZZ_CHECK(len == size && memcmp(out, data, size) == 0);
	free(out);
	for (uint32_t i = 0; i < img.ntables; i++)
		img.tables[i].fd = 1000 + (int)i; /* as if created */
	for (uint32_t i = 0; i < img.nfuncs; i++) {
		uint32_t n;
		struct bpf_insn *v = bpf_image_relocate(&img, img.funcs[i].name, &n, err, sizeof(err));

		FUZZ_CHECK(v);
		for (uint32_t k = 0; k + 1 < n; k++)
			if (v[k].code == (BPF_LD | BPF_DW | BPF_IMM)) {
				if (v[k].src_reg == BPF_PSEUDO_MAP_FD)
					FUZZ_CHECK(v[k].imm >= 1000 &&
						   v[k].imm < 1000 + (int32_t)img.ntables);
				k++;
			}
		free(v);
	}
	for (uint32_t i = 0; i < img.ntables; i++)
		img.tables[i].fd = -1; /* not really created: nothing to close */
	bpf_image_free(&img);
	return 0;
}
