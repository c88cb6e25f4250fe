/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the interpreter's eval loop is, also when the compiler split it:
 * PGO/LTO builds (Debian's CPython 3.14 and later, for one) keep only the
 * entry of _PyEval_EvalFrameDefault under its symbol and move the hot
 * loop and the cold paths to fragments elsewhere in .text, with no symbol
 * of their own. Native stacks pass through those fragments, so they must
 * be known to put Python frames in the right place.
 */
#ifndef PYBPF_EVAL_FRAGMENTS_H
#define PYBPF_EVAL_FRAGMENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "sys/elf_image.h"

struct code_range {
	uint64_t start, end; /* [start, end), as linked */
};

/*
 * Whether the binary keeps frame pointers, judged from .eh_frame: in a
 * build with -fno-omit-frame-pointer most functions define their CFA on
 * rbp (over 80% in Debian's 3.15), elsewhere almost none do (under 5%:
 * functions with dynamic stack frames, the eval loop among them, so its
 * prologue alone proves nothing). With frame pointers, the function at
 * [ENTRY, ENTRY + SIZE) and the fragments that belong to it, at most MAX
 * ranges into OUT (the entry first); without, the entry alone. Returns the
 * number of ranges.
 */
int eval_fragments(struct elf_image *img, uint64_t entry, uint64_t size, struct code_range *out,
		   int max, bool *frame_pointers);

#endif
