/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where each run of the eval loop keeps its entry frame: from 3.12 every
 * call of _PyEval_EvalFrameDefault pushes a shim _PyInterpreterFrame on
 * its own C stack frame (the frames the walker skips), so the native frame
 * whose stack holds a shim is an eval-loop activation, named or not (PGO
 * builds split the loop into unnamed fragments).
 */
#ifndef PYBPF_CPYTHON_EVAL_ENTRIES_H
#define PYBPF_CPYTHON_EVAL_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/process.h"

/*
 * Addresses of the shim frames in a thread's frame chain, innermost first,
 * at most max. Returns the count (0 before 3.12, which push none).
 */
int py_eval_entries(struct py_process *p, uint64_t tstate, uint64_t *out, size_t max);

#endif
