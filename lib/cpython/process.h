/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A live CPython process seen from outside: where its interpreter is, which
 * version it is, and offsets that were checked against its memory. Nothing
 * here stops, ptrace-attaches or executes anything of the target.
 */
#ifndef PYBPF_PY_PROCESS_H
#define PYBPF_PY_PROCESS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sys/code_fragments.h"
#include "cpython/offsets.h"
#include "cpython/rules.h"
#include "cpython/version.h"

#define PY_ERR_LEN 256
#define PY_EVAL_RANGES 16

struct py_process {
	pid_t pid;    /* host pid */
	pid_t ns_pid; /* pid inside its own PID namespace */
	char comm[32];

	char interp_path[PATH_MAX]; /* interpreter ELF, as /proc/PID/maps names it */
	char interp_open[PATH_MAX]; /* the path we read it through */
	bool interp_is_library;     /* libpython*.so rather than the executable */
	uint64_t load_bias;
	uint64_t runtime_addr; /* &_PyRuntime in the target */

	/* _PyEval_EvalFrameDefault in the target (its entry, then the fragments
	 * a PGO/LTO build moved elsewhere), and whether the interpreter keeps
	 * frame pointers (then native stacks can be trusted). */
	struct code_range eval_code[PY_EVAL_RANGES];
	int eval_ranges;
	bool frame_pointers;

	/* Type objects, to recognise real code objects and strings. */
	uint64_t code_type, unicode_type, bytes_type;

	struct py_version version;
	char version_str[24];
	bool free_threaded;
	const struct py_rules *rules; /* what this version does its own way */

	struct py_offsets off;
	enum py_offsets_source source;
	int32_t pthread_tid_offset; /* 3.8-3.10: tid inside glibc's struct pthread */

	char err[PY_ERR_LEN];
	char notes[512]; /* why better offset sources were not used */
};

/* Offset sets a process could be read with, best first, not yet checked. */
struct py_offsets_candidates {
	int n;
	struct {
		enum py_offsets_source src;
		struct py_offsets off;
	} v[3];
};

/*
 * Looks at a process from outside: its interpreter, version, runtime and
 * the offsets it could be read with. Returns 0, or -1 with a precise
 * reason in p->err ("no such process", "unsupported Python 3.7", ...).
 * py_process_open (cpython/open.h) also checks the offsets.
 */
int py_process_inspect(struct py_process *p, pid_t pid, struct py_offsets_candidates *c);

/* Sets p->err; returns -1. */
int py_process_fail(struct py_process *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Adds to p->notes (why better sources were not used). */
void py_process_note(struct py_process *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Minor-version helpers used by the readers. */
static inline int py_minor(const struct py_process *p)
{
	return p->version.minor;
}

/* Whether IP (an address in the target) is code of the eval loop. */
bool py_process_in_eval(const struct py_process *p, uint64_t ip);

#endif
