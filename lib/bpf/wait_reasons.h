/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The user-space half of bpf_c/wait_reasons.bpf.h: tells BPF where each
 * process's GIL is and what kind of file a descriptor a thread blocked on
 * is, names the reasons (the leaf frame of a stack), and sums the time by
 * thread and reason.
 */
#ifndef PYBPF_BPF_WAIT_REASONS_H
#define PYBPF_BPF_WAIT_REASONS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bpf/session.h"
#include "abi/py_abi.h"

struct wait_fd_kind {
	pid_t pid;
	uint32_t fd, kind;
};

struct wait_stack_kind {
	int32_t id;
	uint32_t kind;
};

struct wait_reasons {
	int gils_fd, fds_fd, stacks_fd;
	void *ksyms; /* kernel symbols, for the stacks of uninterruptible sleeps */
	struct wait_stack_kind *stacks; /* stack id -> page fault or disk I/O */
	size_t nstacks, cap_stacks;
	struct wait_fd_kind *fds; /* the answers given, for the names */
	size_t nfds, cap_fds;
	char label[64];
};

/*
 * Hooks into the session: GILs of processes as they become active, and
 * answers to BPF's questions about descriptors (wait_events). Call after
 * session_compile (with s->stacks_fd set), before session_start_discovery.
 * Returns 0, or -1 after printing why.
 */
int wait_reasons_start(struct wait_reasons *w, struct tool_session *s);

/* The leaf frame for a count (a struct stack_filter leaf function); NULL
 * when it has no reason. */
const char *wait_reasons_leaf(void *w, const struct pyb_count_key *k);

/*
 * Per thread: the off-CPU time in the counts map by reason, largest first,
 * with its share of the thread's (runnable time included). only_tid: one
 * thread (0: all). Threads go by their Python names (names, read from the
 * processes of reg), else by their OS names.
 */
int wait_reasons_print_threads(struct wait_reasons *w, int counts_fd, pid_t only_tid,
			       struct thread_names *names, struct py_registry *reg,
			       const char *unit, FILE *out);

void wait_reasons_free(struct wait_reasons *w);

#endif
