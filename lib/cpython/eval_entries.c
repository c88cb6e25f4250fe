/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/eval_entries.h"

#include "cpython/frames.h"
#include "sys/remote_mem.h"

#define CHAIN_MAX 100000 /* frames followed at most (a looping chain stops here) */

int py_eval_entries(struct py_process *p, uint64_t tstate, uint64_t *out, size_t max)
{
	uint64_t frame = 0;
	size_t n = 0;

	if (!p->rules->first_shim_owner || p->off.frame_owner < 0 ||
	    py_frames_first(p, tstate, &frame) < 0)
		return 0;
	for (int steps = 0; frame && n < max && steps < CHAIN_MAX; steps++) {
		uint8_t owner = 0;

		if (remote_read(p->pid, frame + (uint64_t)p->off.frame_owner, &owner, 1) < 0)
			break;
		if (owner >= p->rules->first_shim_owner)
			out[n++] = frame;
		if (remote_read_u64(p->pid, frame + (uint64_t)p->off.frame_previous, &frame) < 0)
			break;
	}
	return (int)n;
}
