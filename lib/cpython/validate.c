/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checks a set of offsets against the live process before anything is
 * sampled with it. Wrong offsets do not crash a reader: they print
 * plausible garbage. So every link is followed and checked for the shape
 * it must have: interpreter -> thread states -> back to the interpreter,
 * thread ids -> real OS threads, frames -> code objects -> str and bytes,
 * instruction pointers -> inside their code. Without a single frame to
 * follow, nothing of the frame and code offsets has been checked: such a
 * process is not read until it runs Python code (PY_FAIL_NO_FRAMES).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/validate.h"

#include "cpython/code.h"
#include "cpython/frames.h"
#include "cpython/func_versions.h"
#include "cpython/process.h"
#include "cpython/threads.h"
#include "sys/remote_mem.h"
#include "sys/plural.h"

#define CHECK_THREADS 64
#define CHECK_FRAMES 32

/* Bytes of bytecode of a code object, or -1 if they cannot be read. */
static int64_t code_bytes(struct py_process *p, uint64_t code)
{
	uint64_t co_code = 0;
	int64_t n = -1;

	if (p->off.code_size >= 0) { /* 3.11+: its own ob_size, in 2-byte code units */
		if (remote_read(p->pid, code + (uint64_t)p->off.code_size, &n, sizeof(n)) < 0)
			return -1;
		return n >= 0 && n < (1 << 26) ? 2 * n : -1;
	}
	if (p->off.code_code < 0 ||
	    remote_read_u64(p->pid, code + (uint64_t)p->off.code_code, &co_code) < 0 ||
	    remote_read(p->pid, co_code + (uint64_t)p->off.bytes_size, &n, sizeof(n)) < 0)
		return -1;
	return n >= 0 && n < (1 << 27) ? n : -1;
}

/*
 * Whether a frame's instruction offset lies in its code: from "not started"
 * (-1 in 3.8-3.9, -2 from 3.10: one code unit before the first) to the end.
 */
static bool instr_in_code(struct py_process *p, const struct py_frame *f)
{
	int64_t size;

	if (f->flags & PY_FRAME_BAD_INSTR || f->instr_offset < -2)
		return false;
	size = code_bytes(p, f->code);
	return size >= 0 && f->instr_offset <= size;
}

struct frame_counts {
	int good, bad, bad_instr;
};

static void check_frames(struct py_process *p, const struct py_frame *frames, int nf,
			 struct frame_counts *fc, struct py_func_tally *funcs)
{
	for (int k = 0; k < nf; k++) {
		struct py_code_info ci;

		if (frames[k].flags & PY_FRAME_UNREADABLE) {
			fc->bad++;
			continue;
		}
		if (py_code_read(p, frames[k].code, &ci) != 0 ||
		    strcmp(ci.name, "[unreadable name]") == 0 || !ci.linetable)
			fc->bad++;
		else if (!instr_in_code(p, &frames[k]))
			fc->bad++, fc->bad_instr++;
		else {
			fc->good++;
			py_func_tally_frame(p, &frames[k], funcs);
		}
		py_code_info_free(&ci);
	}
}

int py_process_validate(struct py_process *p)
{
	struct py_thread *threads;
	struct py_frame frames[CHECK_FRAMES];
	const char *missing = py_offsets_missing(&p->off, p->version.minor);
	struct frame_counts fc = { 0 };
	struct py_func_tally funcs = { 0 };
	uint64_t interp = 0;
	int n, rc, matched = 0;

	p->func_versions = false;
	if (missing)
		return py_process_fail(p, PY_FAIL_UNSUPPORTED, "offsets lack %s", missing);
	rc = remote_read_u64(p->pid, p->runtime_addr + (uint64_t)p->off.runtime_interpreters_head,
			     &interp);
	if (rc < 0)
		return py_process_read_failed(p, rc, "_PyRuntime");
	if (!interp || (interp & 7)) /* also while it starts up */
		return py_process_fail(p, PY_FAIL_TRANSIENT,
				       "_PyRuntime has no interpreter (not initialised, or wrong "
				       "offsets)");
	threads = calloc(CHECK_THREADS, sizeof(*threads));
	if (!threads)
		return py_process_fail(p, PY_FAIL_TRANSIENT, "out of memory");
	n = py_threads_read(p, threads, CHECK_THREADS);
	if (n < 0) {
		free(threads);
		return -1; /* p->err says which link broke */
	}
	if (n == 0) {
		free(threads);
		return py_process_fail(p, PY_FAIL_TRANSIENT, "the interpreter has no thread states");
	}
	for (int i = 0; i < n; i++) {
		bool truncated;
		int nf;

		if (threads[i].host_tid)
			matched++;
		nf = py_frames_read(p, threads[i].tstate, frames, CHECK_FRAMES, &truncated);
		check_frames(p, frames, nf, &fc, &funcs);
	}
	free(threads);
	if (!matched)
		return py_process_fail(p, PY_FAIL_VALIDATION,
				       "no thread state's thread id matches a thread of the process");
	/* Frames of running threads move under us; demand a clear majority. */
	if (fc.bad > fc.good && fc.bad_instr * 2 > fc.bad)
		return py_process_fail(p, PY_FAIL_VALIDATION,
				       "the instruction offsets of %d %s outside their code objects",
				       fc.bad_instr,
				       plural((unsigned)fc.bad_instr, "frame lies", "frames lie"));
	if (fc.bad > fc.good)
		return py_process_fail(p, PY_FAIL_VALIDATION,
				       "frames do not lead to code objects with names and line tables "
				       "(%d bad)",
				       fc.bad);
	if (!fc.good)
		return py_process_fail(p, PY_FAIL_NO_FRAMES,
				       "no thread is running Python code, so its offsets cannot be "
				       "checked against a frame yet");
	py_func_tally_settle(p, &funcs);
	return 0;
}
