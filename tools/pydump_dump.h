/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pydump's view of one process (live or from a core file): every thread
 * with its kernel-side state, what it waits for, its frames (Python, and
 * native where asked) and their variables. Collected once, then printed
 * as text or JSON; nothing is printed while the target is being read.
 */
#ifndef PYBPF_PYDUMP_DUMP_H
#define PYBPF_PYDUMP_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cpython/frames.h"
#include "cpython/globals.h"
#include "cpython/locals.h"
#include "cpython/objects.h"
#include "cpython/process.h"
#include "cpython/thread_wait.h"
#include "cpython/threads.h"
#include "sys/core_file.h"
#include "sys/native_stack.h"
#include "sys/proc_wait.h"

struct dump_options {
	bool locals;  /* arguments and locals of every Python frame */
	bool globals; /* module globals of the modules on the stacks */
	bool native;  /* native frames of blocked threads, merged with the Python ones */
	bool verbose;
};

enum dump_frame_kind {
	DUMP_FRAME_PYTHON,
	DUMP_FRAME_NATIVE,
	DUMP_FRAME_UNREADABLE, /* a Python frame that could not be read */
	DUMP_FRAME_GAP,        /* the native walk stopped here (name: why) */
};

struct dump_frame {
	enum dump_frame_kind kind;
	char *name;      /* qualname, or native symbol (NULL if none) */
	char *file;      /* file name, or the native code's module (path) */
	int line;        /* Python: current line, -1 if unknown */
	uint64_t ip;     /* native: instruction address */
	uint64_t offset; /* native: from the symbol, or from the module start without one */
	struct py_local *locals; /* --locals */
	int nlocals;             /* -1: could not be read */
};

struct dump_thread {
	struct py_thread t;
	char comm[32];
	char name[128]; /* threading name; "" if unknown */
	bool have_state;
	struct proc_wait k;  /* what the kernel says */
	struct py_wait w;    /* what that means in Python's terms */
	pid_t lock_owner_tid; /* an RLock's owner, as a thread of this process; 0 */
	struct dump_frame *frames;
	size_t nframes, frames_cap;
	bool truncated;
	char error[PY_ERR_LEN]; /* the thread could not be read; "" */
	char native_note[160];  /* why native frames are missing; "" */
	bool crashed;           /* core: the thread that received the fatal signal */
};

#define DUMP_MODULES_MAX 32 /* modules whose globals --globals shows */

struct dump {
	struct py_process p;
	pid_t pid; /* as the user knows it (a core's recorded pid) */
	const struct core_file *core;
	const char *core_path;
	int64_t process_cpu_ns; /* core: the whole process's CPU time; 0 if unknown */
	struct dump_options opts;
	struct py_objects objs;
	bool objs_ok;
	char names_note[200]; /* why thread names are missing; "" */
	struct dump_thread *threads;
	size_t nthreads;
	struct native_proc *native; /* --native: the process's code mappings */
	/* --globals: each module dict a frame runs with, once */
	struct py_module_globals modules[DUMP_MODULES_MAX];
	size_t nmodules;
	size_t modules_unread; /* frames whose globals could not be read */
	bool modules_cut;      /* more modules than DUMP_MODULES_MAX */
	void *codes;                /* code objects read so far (pydump_collect.c) */
};

/*
 * Reads process pid (for a core: the pid core_file_attach() gave it).
 * Returns 0, or -1 with a reason in err.
 */
int dump_collect(struct dump *d, pid_t pid, const struct dump_options *opts,
		 const struct core_file *core, const char *core_path, char *err, size_t errlen);
void dump_free(struct dump *d);

/* Appends a zeroed frame to t; NULL when out of memory. */
struct dump_frame *dump_add_frame(struct dump_thread *t, enum dump_frame_kind kind);

/*
 * Native frames of one thread, merged with its Python frames (t->frames,
 * read from pf[0..n)): eval-loop frames give way to the Python frames
 * their run executed (pydump_native.c).
 */
void dump_native_frames(struct dump *d, struct dump_thread *t, const struct py_frame *pf,
			size_t n);

void dump_print_text(FILE *out, const struct dump *d);

struct dump_error {
	pid_t pid;
	char error[PY_ERR_LEN + 64];
};

/* The whole run as one JSON document: {"processes": [...], "errors": [...]}. */
void dump_print_json(FILE *out, struct dump *const *dumps, size_t n,
		     const struct dump_error *errors, size_t nerrors);

/* Whether a core comes from a crash (a signal that dumps core) rather
 * than from gcore; its first thread is then the one that got the signal. */
bool dump_core_crashed(const struct core_file *core);

/* The thread that holds the GIL; 0 if none does. */
pid_t dump_gil_holder(const struct dump *d);

/* Signal names for cores ("SIGSEGV"); NULL if unknown. */
const char *dump_signal_name(int signo);

#endif
