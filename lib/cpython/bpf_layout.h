/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The layout the BPF walker reads a process with (struct pyb_layout, the
 * ABI in abi/py_abi.h): the checked offsets and the version's rules.
 */
#ifndef PYBPF_CPYTHON_BPF_LAYOUT_H
#define PYBPF_CPYTHON_BPF_LAYOUT_H

#include "abi/py_abi.h"
#include "cpython/process.h"

/* Fills a BPF layout from a process's checked offsets and rules. */
void py_bpf_layout(const struct py_process *p, struct pyb_layout *l);

#endif
