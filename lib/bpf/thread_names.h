/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Python name (threading.Thread.name) of each thread the BPF tools
 * report, by (pid, host tid): BPF knows only the OS name (comm), which
 * CPython before 3.14 never sets from the Python one, so every thread of a
 * process reads "python3.11". Read in user space from threading._active
 * through the one object model (cpython/thread_names.h), per process, once
 * and again (at most every THREAD_NAMES_REREAD_MS) when a thread not named
 * yet turns up, so threads that end before the report keep their names
 * when they were seen while alive. Bounded: THREAD_NAMES_MAX threads and
 * THREAD_NAMES_PROCS processes per run. Names are kept as the target has
 * them; every sink escapes them.
 */
#ifndef PYBPF_BPF_THREAD_NAMES_H
#define PYBPF_BPF_THREAD_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct py_registry;

#define THREAD_NAMES_MAX 16384
#define THREAD_NAMES_PROCS 1024
#define THREAD_NAMES_REREAD_MS 100

struct thread_name_entry {
	pid_t pid, tid;
	char name[128];
};

struct thread_names {
	struct thread_name_entry *v;
	size_t n, cap;
	void *procs; /* per process: its object reader, when it was read */
	size_t nprocs, cap_procs;
	/* the tool's output shows no thread names (pyprofile without
	 * --threads, pprof or --wall): none is read, every thread has none */
	bool unused;
};

void thread_names_free(struct thread_names *tn);

/*
 * The Python name of thread tid of process pid, or NULL when it has none
 * that can be read (no thread state, threading not imported, the process
 * gone): the caller names it by its comm then. A thread not known yet
 * makes the process be read again, if it is a live target and was not
 * read in the last THREAD_NAMES_REREAD_MS.
 */
const char *thread_names_get(struct thread_names *tn, struct py_registry *reg, pid_t pid,
			     pid_t tid);

/* Reads the names of pid's threads now, unless read in the last
 * THREAD_NAMES_REREAD_MS (a hint that new threads may run Python). */
void thread_names_refresh(struct thread_names *tn, struct py_registry *reg, pid_t pid);

#endif
