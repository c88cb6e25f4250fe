/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checks a set of offsets against the live process before anything is
 * sampled with it. Wrong offsets do not crash a reader: they print
 * plausible garbage. So every link is followed and checked for the shape
 * it must have: interpreter -> thread states -> back to the interpreter,
 * thread ids -> real OS threads, frames -> code objects -> str and bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/validate.h"

#include "cpython/code.h"
#include "cpython/frames.h"
#include "cpython/process.h"
#include "cpython/threads.h"
#include "sys/remote_mem.h"

#define CHECK_THREADS 64
#define CHECK_FRAMES 32

static int invalid(struct py_process *p, const char *msg)
{
	snprintf(p->err, sizeof(p->err), "%s", msg);
	return -1;
}

int py_process_validate(struct py_process *p)
{
	struct py_thread *threads;
	struct py_frame frames[CHECK_FRAMES];
	const char *missing = py_offsets_missing(&p->off, p->version.minor);
	uint64_t interp = 0;
	int n, matched = 0, good_frames = 0, bad_frames = 0;

	if (missing) {
		snprintf(p->err, sizeof(p->err), "offsets lack %s", missing);
		return -1;
	}
	if (remote_read_u64(p->pid, p->runtime_addr + (uint64_t)p->off.runtime_interpreters_head,
			    &interp) < 0)
		return invalid(p, "cannot read _PyRuntime");
	if (!interp || (interp & 7))
		return invalid(p, "_PyRuntime has no interpreter (not initialised, or wrong offsets)");
	threads = calloc(CHECK_THREADS, sizeof(*threads));
	if (!threads)
		return invalid(p, "out of memory");
	n = py_threads_read(p, threads, CHECK_THREADS);
	if (n < 0) {
		free(threads);
		return -1; /* p->err says which link broke */
	}
	if (n == 0) {
		free(threads);
		return invalid(p, "the interpreter has no thread states");
	}
	for (int i = 0; i < n; i++) {
		bool truncated;
		int nf;

		if (threads[i].host_tid)
			matched++;
		nf = py_frames_read(p, threads[i].tstate, frames, CHECK_FRAMES, &truncated);
		for (int k = 0; k < nf; k++) {
			struct py_code_info ci;

			if (frames[k].flags & PY_FRAME_UNREADABLE) {
				bad_frames++;
				continue;
			}
			if (py_code_read(p, frames[k].code, &ci) == 0 &&
			    strcmp(ci.name, "[unreadable name]") != 0 && ci.linetable)
				good_frames++;
			else
				bad_frames++;
			py_code_info_free(&ci);
		}
	}
	free(threads);
	if (!matched)
		return invalid(p, "no thread state's thread id matches a thread of the process");
	/* Frames of running threads move under us; demand a clear majority. */
	if (bad_frames > good_frames)
		return invalid(p, "frames do not lead to code objects with names and line tables");
	return 0;
}
