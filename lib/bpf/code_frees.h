/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Watching each process free its code objects, for BPF's memo of code
 * identities (pywalk.bpf.h, `code_frees`): while no code object of a
 * process has been freed, one found at an address whose identity BPF read
 * before is that object, alive, and its identity stands without a read.
 *
 * A uprobe on the interpreter's code_dealloc (PyCode_Type's tp_dealloc,
 * read in the process and checked to lie in the interpreter file's
 * executable code), for that process alone, counts the frees. The file is
 * opened through the kernel's handle on its mapping (sys/target_file.h)
 * and the uprobe given that descriptor's path, never a path the target
 * names. Only once the probe is in does the process get its count in
 * BPF, at a value no earlier registration of the run started from (a pid
 * that comes back is another process); a process without one is not
 * watched, and its identities are checked as before.
 */
#ifndef PYBPF_BPF_CODE_FREES_H
#define PYBPF_BPF_CODE_FREES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/process.h"

/* processes watched at once at most: a descriptor each (the rest are
 * checked as before) */
#define CODE_FREES_MAX 512

struct code_frees {
	int prog_fd; /* pyb_code_freed, loaded */
	int map_fd;  /* code_frees */
	uint64_t registrations;
	size_t watched, failed;
	size_t open; /* perf events held (one a process watched) */
	char why[200]; /* the last failure's reason */
};

/* Both descriptors, or -1 for either: then nothing is watched. */
void code_frees_init(struct code_frees *c, int prog_fd, int map_fd);

/* Watches process p: the uprobe's perf event descriptor (to pass to
 * code_frees_forget), or -1 with the reason in c->why, p unwatched. */
int code_frees_watch(struct code_frees *c, const struct py_process *p);

/* Stops watching pid (perf_fd from code_frees_watch, or -1). */
void code_frees_forget(struct code_frees *c, pid_t pid, int perf_fd);

#endif
