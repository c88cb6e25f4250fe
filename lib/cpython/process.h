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
#include "sys/proc_maps.h"
#include "cpython/offsets.h"
#include "cpython/rules.h"
#include "cpython/version.h"

#define PY_ERR_LEN 256
#define PY_EVAL_RANGES 16

/*
 * Why a process could not be opened, for callers to act on (p->err says it
 * for people, as precisely as it can). Set together with p->err.
 */
enum py_failure {
	PY_FAIL_NONE = 0,
	PY_FAIL_GONE,        /* it exited (or exits: a read found no process) */
	PY_FAIL_NOT_PYTHON,  /* no CPython interpreter in it (yet: see TRANSIENT) */
	PY_FAIL_UNSUPPORTED, /* a Python we must not read: its version, its build, a
				_Py_DebugOffsets layout we do not know, offset sources
				that disagree. Final. */
	PY_FAIL_TRANSIENT,   /* may pass when tried again soon: a starting interpreter,
				a read that failed, a list that changed under us */
	PY_FAIL_VALIDATION,  /* the offsets did not fit its memory (threads that come
				and go make this happen now and then; a retry may pass) */
	PY_FAIL_NO_FRAMES,   /* readable, but no thread runs Python code to check the
				offsets against: wait until one does */
};

/* "gone", "not Python", ... for diagnostics. */
const char *py_failure_name(enum py_failure f);

struct py_process {
	pid_t pid;    /* host pid */
	pid_t ns_pid; /* pid inside its own PID namespace */
	char comm[32];

	char interp_path[PATH_MAX]; /* interpreter ELF, as /proc/PID/maps names it */
	char interp_open[PATH_MAX]; /* what we read it through, for people */
	struct proc_map interp_file; /* its lowest mapping, to open it again
					(py_process_open_interp); path NULL */
	bool interp_is_library;     /* libpython*.so rather than the executable */
	uint64_t load_bias;
	uint64_t runtime_addr; /* &_PyRuntime in the target */

	/* _PyEval_EvalFrameDefault in the target (its entry, then the fragments
	 * a PGO/LTO build moved elsewhere), and whether the interpreter keeps
	 * frame pointers (then native stacks can be trusted). */
	struct code_range eval_code[PY_EVAL_RANGES];
	int eval_ranges;
	bool frame_pointers;

	/* Type objects, to recognise real code objects and strings; and
	 * functions (0 if the file does not say where: optional). */
	uint64_t code_type, unicode_type, bytes_type, function_type;
	/* 3.11: a frame's function and its version are where the offsets say,
	 * checked against this process's frames (cpython/func_versions.h) */
	bool func_versions;

	struct py_version version;
	char version_str[24];
	bool free_threaded;
	const struct py_rules *rules; /* what this version does its own way */

	struct py_offsets off;
	enum py_offsets_source source;
	int32_t pthread_tid_offset; /* 3.8-3.10: tid inside glibc's struct pthread */

	char err[PY_ERR_LEN];
	enum py_failure fail; /* the class of err */
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
 * reason in p->err ("no such process", "unsupported Python 3.7", ...) and
 * its class in p->fail. py_process_open (cpython/open.h) also checks the
 * offsets.
 */
int py_process_inspect(struct py_process *p, pid_t pid, struct py_offsets_candidates *c);

/*
 * When p failed as not Python (a shell that runs python3 as its child):
 * names its direct children that run Python in p->err ("sh runs no
 * Python; its child PID 6 (python3) does: use -p 6"), with "or
 * --children" when the tool has that option. Names are raw: escape them.
 */
void py_process_name_python_children(struct py_process *p, bool children_option);

/* Sets p->fail and p->err; returns -1. */
int py_process_fail(struct py_process *p, enum py_failure why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A failed remote read (a negative errno) as a failure: the process gone
 * (-ESRCH) or transient. Sets p->err to "cannot read WHAT: ..."; returns -1. */
int py_process_read_failed(struct py_process *p, int rc, const char *what);
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

/* Opens the interpreter's file again, the very file that was read
 * (sys/target_file.h: device and inode checked). Returns 0 or -1. */
struct elf_image;
int py_process_open_interp(const struct py_process *p, struct elf_image *img);

#endif
