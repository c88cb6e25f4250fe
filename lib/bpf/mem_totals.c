/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/mem_totals.h"

#include <bcc/libbpf.h>
#include <linux/bpf.h>
#include <string.h>

void mem_totals_seed_brk(int totals_fd, pid_t pid, uint64_t brk)
{
	struct pyb_mem_totals t;
	uint32_t key = (uint32_t)pid;

	memset(&t, 0, sizeof(t));
	t.brk_last = brk;
	if (brk)
		bpf_update_elem(totals_fd, &key, &t, BPF_NOEXIST);
}

void mem_totals_read(int totals_fd, pid_t pid, struct pyb_mem_totals *out)
{
	uint32_t key = (uint32_t)pid;

	if (bpf_lookup_elem(totals_fd, &key, out) < 0)
		memset(out, 0, sizeof(*out));
}

void mem_counts_split(int counts_fd, pid_t pid, struct mem_split *out)
{
	struct pyb_count_key key, next;
	void *prev = NULL;
	/* bounded: the map holds at most COUNTS_SIZE entries */
	for (int n = 0; n < (1 << 22) && bpf_get_next_key(counts_fd, prev, &next) == 0; n++) {
		uint64_t v;

		key = next;
		prev = &key;
		if (key.kind != PYB_KIND_RESIDENT || (pid && key.pid != (uint32_t)pid) ||
		    bpf_lookup_elem(counts_fd, &key, &v) < 0)
			continue;
		if (key.pystack)
			out->python += v;
		else
			out->other += v;
	}
}
