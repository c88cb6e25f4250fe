/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Python processes a tool watches: found at start and as they appear
 * (exec, fork, a /proc rescan), checked with cpython/open.h, and handed to
 * BPF through two maps: `layouts` (one entry per distinct interpreter
 * layout) and `procs` (pid -> runtime address, layout, namespace). What
 * happens to a process that cannot be opened follows the class of the
 * failure (enum py_failure), never its text.
 */
#ifndef PYBPF_PY_REGISTRY_H
#define PYBPF_PY_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/code_names.h"
#include "abi/py_abi.h"
#include "cpython/process.h"

enum py_target_state {
	TARGET_PENDING,    /* not (yet) readable: starting up; retried for a while */
	TARGET_WAITING,    /* readable, but no thread runs Python code, so its offsets are
			      unchecked: validated again (less and less often, down to 5
			      times a second) until a frame passes, for the whole run */
	TARGET_ACTIVE,     /* registered with BPF */
	TARGET_NOT_PYTHON, /* not a Python process */
	TARGET_REFUSED,    /* Python we must not read (unsupported, failed validation) */
	TARGET_GONE,       /* exited */
};

struct native_maps;
struct native_symbols;

struct py_target {
	pid_t pid;
	enum py_target_state state;
	struct py_process proc;
	int layout;
	uint64_t first_seen_ns, last_try_ns;
	bool reported;
	bool native; /* BPF walks its native stacks */
	uint64_t maps_stale_ns; /* BPF met code in no known file; nothing new was
				   mapped: asked again after a while (0: not so) */
	unsigned activations; /* times made active: a new program after an exec */
	uint64_t last_seed_ns; /* thread states last handed to BPF (see registry_tick) */
	uint64_t next_check_ns; /* registry_tick's checks of an active target are due */
	int pidfd; /* readable once the process has exited; -1: none (then /proc is polled) */
	bool starting; /* just exec'd or forked: its interpreter may not be mapped yet */
	bool many_threads; /* more than BPF's search covers, at the last look */
	bool seen_python;  /* an interpreter was found in it at some look, or its name says python */
	bool ended_counted; /* in ended_early already (a fork and its exec are one process) */
	uint64_t active_since_ns; /* when it last became TARGET_ACTIVE */
	char exec_comm[16]; /* its name when its exec was announced ("" unknown) */
	struct py_offsets_candidates cand; /* TARGET_WAITING: the offsets to check again */
	/* the collector's flag and the GIL whose holder runs a collection
	 * (cpython/gc_flag.h), as BPF has them; 0: unknown, gc_why says why */
	uint64_t gc_collecting, gc_gil;
	char gc_why[160];
	uint64_t retry_ns; /* TARGET_WAITING: between checks */
};

struct py_registry {
	struct py_target *v;
	size_t n, cap;
	struct pyb_layout layouts[PYB_MAX_LAYOUTS];
	int nlayouts;
	int procs_fd, layouts_fd;
	int tstates_fd; /* BPF's tid -> thread state cache; -1: none */
	int named_fd;   /* BPF's set of named code objects; -1: none */
	int npidfds;    /* open pidfds of targets */
	const pid_t *only; /* -p list; NULL: every Python process */
	size_t nonly;
	/* --children: descendants of the -p list, also wanted (quietly) */
	pid_t *followed;
	size_t nfollowed, cap_followed;
	/* called as a target is registered with BPF, just before BPF sees it
	 * (also again after an exec) */
	void (*on_active)(void *ctx, struct py_target *t);
	void *on_active_ctx;
	const char *tool; /* for messages */
	bool verbose;     /* -v: say how each process was recognised, and which ended early */
	/* locate each process's GC collecting flag and GIL (cpython/gc_flag.h)
	 * as it registers: only for tools whose BPF reads them */
	bool gc_flag;
	struct code_names names;
	struct native_maps *native; /* native stacks wanted: the files BPF unwinds */
	struct native_symbols *nsyms; /* names of native frames (created when needed) */
	/* for the summary */
	size_t active_ever, exited, refused, no_native;
	size_t ended_early; /* Python processes that ended before they could be profiled */
};

void registry_init(struct py_registry *r, const char *tool, int procs_fd, int layouts_fd,
		   const pid_t *only, size_t nonly);
void registry_free(struct py_registry *r);

/* A pid to look at now (start-up, exec, fork). young: it may still be
 * starting, so failures are retried for a while. comm: the program's name
 * as an exec announced it, or NULL. */
void registry_consider(struct py_registry *r, pid_t pid, bool young, const char *comm);

/* --children: pid descends from the -p list and is wanted too. Returns 0
 * or -1 (out of memory). */
int registry_follow(struct py_registry *r, pid_t pid);

/* Retries pending processes, notices exits (of processes without a pidfd;
 * the others are reported by registry_exit_fds), and hands BPF the thread
 * states of processes with more threads than it searches by itself
 * (PYB_MAX_THREAD_SCAN). Call every 20 ms while some process is pending,
 * otherwise about once a second. */
void registry_tick(struct py_registry *r);

/* Whether a failure of py_process_open on a running process may pass if
 * tried again soon (a thread list that changed while being validated, no
 * Python frame yet): not for an unsupported version, a process that is not
 * Python, or one gone. */
bool registry_failure_may_pass(const struct py_process *p);

/* Whether a failure means the process ended (the class says so, or it is
 * no longer alive and nothing says it could not have been read anyway). */
bool registry_failure_is_exit(const struct py_process *p);

/* A Python process that ended before it could be profiled: counted for
 * the summary, named with -v (comm: its name if p has none). */
void registry_note_ended(struct py_registry *r, const struct py_process *p, const char *comm);

/* BPF's native walk in pid met code in no file it knew: reads the
 * process's mappings again. Returns the number of mappings added. */
int registry_native_refresh(struct py_registry *r, pid_t pid);

/* How soon registry_tick wants to run again, in ms: 20 while a process is
 * pending, 1000 while one has no pidfd or many threads, a waiting one's
 * next check, otherwise REGISTRY_IDLE_TURN_MS (only thread counts are
 * checked then). */
#define REGISTRY_IDLE_TURN_MS 5000
int registry_turn_ms(const struct py_registry *r);

/* Fills fds (up to max) with the pidfds of active processes, to poll for
 * their exit; returns how many. */
struct pollfd;
int registry_exit_fds(const struct py_registry *r, struct pollfd *fds, int max);

/* After the poll: marks the processes whose pidfd became ready as gone. */
void registry_note_exits(struct py_registry *r, const struct pollfd *fds, int n);

/* System-wide: looks for processes not seen yet. */
void registry_scan(struct py_registry *r);

struct py_target *registry_find(struct py_registry *r, pid_t pid);

/* Number of targets in a state. */
size_t registry_count(const struct py_registry *r, enum py_target_state state);


#endif
