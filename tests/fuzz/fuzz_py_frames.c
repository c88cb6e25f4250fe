// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/frames.c: one thread's frame chain, read from a hostile process
 * (see fuzz_mem.h): chains that loop, end in wild pointers or run on, shim
 * frames, tagged code pointers, per-thread bytecode copies. header.root:
 * the thread state; count: how many frames the caller has room for. Each
 * frame's code object is then read as pydump reads it.
 */
#include "fuzz_mem.h"
#include "cpython/code.h"
#include "cpython/frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem_header h;
	struct py_process p;
	struct py_frame *frames;
	size_t max;
	uint64_t first;
	bool truncated;
	int n;

	if (fuzz_mem_process(data, size, &p, &h) < 0)
		return 0;
	(void)py_frames_first(&p, h.root, &first);
	max = h.count % 130;
	frames = malloc((max ? max : 1) * sizeof(*frames)); /* exactly max */
	if (!frames)
		abort();
	n = py_frames_read(&p, h.root, frames, max, &truncated);
	FUZZ_CHECK(n <= (int)max);
	for (int i = 0; i < n; i++) {
		struct py_code_info ci;

		FUZZ_CHECK(!(frames[i].flags & PY_FRAME_UNREADABLE) || !frames[i].code);
		for (int k = 0; k < i; k++)
			FUZZ_CHECK(frames[k].addr != frames[i].addr);
		if (frames[i].flags & PY_FRAME_UNREADABLE)
			continue;
		if (py_code_read(&p, frames[i].code, &ci) == 0) {
			(void)py_code_line(&p, &ci, frames[i].instr_offset);
			py_code_info_free(&ci);
		}
	}
	free(frames);
	return 0;
}
