/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/phases.h"

#include <bcc/libbpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "abi/py_abi.h"
#include "sys/cpu_list.h"

bool phases_wanted(void)
{
	const char *v = getenv("PYBPF_PHASES");

	return v && *v && *v != '0';
}

/* The sum over CPUs of slot which; 0 if it cannot be read. */
static uint64_t phase_sum(int fd, int which, uint64_t *vals, int ncpu)
{
	uint64_t sum = 0;

	if (bpf_lookup_elem(fd, &which, vals) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += vals[i];
	return sum;
}

void phases_print(struct bpfmod *m, const char *tool, const char *event)
{
	int fd = bpfmod_table_fd(m, "pyb_phases"), ncpu = cpu_list_possible_count();
	uint64_t v[PYB_PHASE_MAX], *vals;
	double n;

	if (fd < 0 || ncpu <= 0)
		return;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return;
	for (int i = 0; i < PYB_PHASE_MAX; i++)
		v[i] = phase_sum(fd, i, vals, ncpu);
	free(vals);
	if (!v[PYB_PHASE_SAMPLES])
		return;
	n = (double)v[PYB_PHASE_SAMPLES];
#define PER(i) ((double)v[i] / n)
	char before[64] = "";

	if (v[PYB_PHASE_BEFORE_NS])
		snprintf(before, sizeof(before), "the tool's look-ups before the walk %.0f ns; ",
			 PER(PYB_PHASE_BEFORE_NS));
#define EACH(ns, count) (v[count] ? (double)v[ns] / (double)v[count] : 0.0)
	fprintf(stderr,
		"%s: BPF time per %s (%.0f of them, clocks on): %sthread state %.0f ns; "
		"Python walk %.0f ns (%.1f frames, %.2f frame reads of %.0f ns, %.2f code windows, "
		"%.2f identities kept by their function's version, %.2f identities read of %.0f ns, "
		"%.2f with a read that failed; %.0f ns storing, %.2f new stacks); ",
		tool, event, n, before, PER(PYB_PHASE_TSTATE_NS), PER(PYB_PHASE_WALK_NS),
		PER(PYB_PHASE_PY_FRAMES),
		PER(PYB_PHASE_FRAME_READS), EACH(PYB_PHASE_FRAME_READ_NS, PYB_PHASE_FRAME_READS),
		PER(PYB_PHASE_CODE_READS), PER(PYB_PHASE_FUNC_HITS), PER(PYB_PHASE_IDENTS),
		EACH(PYB_PHASE_IDENT_NS, PYB_PHASE_IDENTS), PER(PYB_PHASE_IDENT_FAILS),
		PER(PYB_PHASE_STORE_NS),
		PER(PYB_PHASE_NEW_STACKS));
	if (v[PYB_PHASE_NATIVE_FRAMES])
		fprintf(stderr,
			"native walk %.0f ns (%.1f frames, %.2f stack reads of %.0f ns, %.2f row "
			"searches, %.2f trie look-ups; %.0f ns storing, %.2f new stacks); ",
			PER(PYB_PHASE_NATIVE_NS), PER(PYB_PHASE_NATIVE_FRAMES),
			PER(PYB_PHASE_STACK_READS), EACH(PYB_PHASE_STACK_READ_NS, PYB_PHASE_STACK_READS),
			PER(PYB_PHASE_ROW_SEARCHES), PER(PYB_PHASE_TRIE_LOOKUPS),
			PER(PYB_PHASE_NATIVE_STORE_NS), PER(PYB_PHASE_NEW_NATIVE));
	if (v[PYB_PHASE_SWITCH_IN_NS])
		fprintf(stderr, "charging the interval as the thread runs again %.0f ns; ",
			PER(PYB_PHASE_SWITCH_IN_NS));
	fprintf(stderr, "the rest %.0f ns\n", PER(PYB_PHASE_REST_NS));
#undef PER
#undef EACH
}
