/* SPDX-License-Identifier: Apache-2.0 */
/* Walking one thread's Python frames from outside. */
#ifndef PYBPF_PY_FRAMES_H
#define PYBPF_PY_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/process.h"

enum py_frame_flags {
	PY_FRAME_UNREADABLE = 1 << 0, /* frame memory or its code object is not valid */
	PY_FRAME_ENTRY = 1 << 1,      /* first frame of an eval-loop activation (3.11+) */
	PY_FRAME_BAD_INSTR = 1 << 2,  /* its instruction pointer is nowhere near its code
					 (instr_offset then says -1) */
};

struct py_frame {
	uint64_t addr;
	uint64_t code;         /* PyCodeObject address, 0 if unreadable */
	int64_t instr_offset;  /* byte offset into the bytecode; <0 if not started */
	unsigned flags;
};

/* The innermost frame of a thread state; 0 if it has none (from 3.15, an
 * idle thread state's current frame is its sentinel base frame: none). */
int py_frames_first(struct py_process *p, uint64_t tstate, uint64_t *frame);

/*
 * Walks from the innermost frame outwards, writing at most max frames.
 * Skips the frames CPython's tracebacks leave out: the interpreter's own
 * shim/entry frames and (3.11+) incomplete ones. Sets *truncated when the
 * chain goes on past max (or loops). Returns the count, or -1 with p->err.
 */
int py_frames_read(struct py_process *p, uint64_t tstate, struct py_frame *out, size_t max,
		   bool *truncated);

/*
 * py_frames_read for a thread that runs on while it is read: walked again
 * until two walks in a row find the same frames running the same code,
 * none unreadable, up to PY_FRAMES_LOOKS walks in all; the last walk is
 * returned. One walk alone can be a mix of two stacks: a frame popped
 * under it and reused (3.8-3.10 keep freed frame objects for the next
 * call, of any thread) leads the walk on into another stack.
 */
#define PY_FRAMES_LOOKS 5
int py_frames_read_settled(struct py_process *p, uint64_t tstate, struct py_frame *out,
			   size_t max, bool *truncated);

#endif
