/* SPDX-License-Identifier: Apache-2.0 */
/*
 * 3.11's function versions, checked before BPF relies on them.
 *
 * 3.8-3.11 code objects carry nothing that tells a code object from a
 * later one made at its address, so BPF reads each one's identity in every
 * walk (bpf_c/pywalk.bpf.h). A 3.11 frame also points at its function
 * (f_func), and a function gets a version from a counter that never gives
 * the same number twice, once, and loses it (back to 0) whenever its code
 * is replaced: while the function a code object was found through still
 * has the version it had then, it still holds that code object, alive. So
 * BPF may keep the identity, but only with offsets that are right: these
 * check them against the frames of the live process.
 */
#ifndef PYBPF_CPYTHON_FUNC_VERSIONS_H
#define PYBPF_CPYTHON_FUNC_VERSIONS_H

#include "cpython/frames.h"
#include "cpython/process.h"

struct py_func_tally {
	int good, bad;
	uint64_t vectorcall; /* every function's, the same */
};

/* Whether the offsets and this file have what the check needs. */
bool py_func_versions_possible(const struct py_process *p);

/* Checks frame f's function: a function (its type PyFunction_Type) whose
 * code is the frame's, whose vectorcall (the word before the version) is
 * the one every other function checked has. */
void py_func_tally_frame(struct py_process *p, const struct py_frame *f, struct py_func_tally *t);

/* Sets p->func_versions from the tally: some functions checked, nearly
 * all of them right (frames of running threads move while read). */
void py_func_tally_settle(struct py_process *p, const struct py_func_tally *t);

#endif
