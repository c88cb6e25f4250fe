/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GIL of a live interpreter, read from outside: where its struct is
 * (_PyRuntime.ceval.gil up to 3.11, the interpreter's ceval.gil pointer
 * from 3.12) and what it says (locked, last holder, switch count). The
 * layout after the offsets we resolve is fixed by CPython's struct
 * _gil_runtime_state: interval first, then two condition variables and two
 * mutexes, whose futex words waiting threads sleep on.
 */
#ifndef PYBPF_PY_GIL_H
#define PYBPF_PY_GIL_H

#include <stdint.h>

#include "cpython/process.h"

/* interval, last_holder, locked, switch_number, cond, mutex, switch_cond,
 * switch_mutex on x86-64 glibc (48-byte condvars, 40-byte mutexes). */
#define PY_GIL_STRUCT_SIZE 208

struct py_gil_state {
	uint64_t interval_us;  /* sys.getswitchinterval() in microseconds */
	uint64_t last_holder;  /* PyThreadState* */
	int32_t locked;
	uint64_t switch_number;
};

/* Address of the GIL the given interpreter uses (0: the first one); 0 if it
 * has none (free-threaded) or it cannot be read. */
uint64_t py_gil_address(struct py_process *p, uint64_t interp);

/* Reads the GIL at addr. Returns 0 or -1. */
int py_gil_read(struct py_process *p, uint64_t addr, struct py_gil_state *st);

#endif
