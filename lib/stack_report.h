/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From BPF counts to named, merged stacks, and the text formats users know
 * from bcc (multi-line text and folded stacks). One implementation for
 * every tool: pyprofile counts samples, pyoffcpu microseconds.
 */
#ifndef PYBPF_STACK_REPORT_H
#define PYBPF_STACK_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "py_registry.h"

struct report_row {
	pid_t pid;
	char comm[16];
	char *frames;   /* root first, ';'-separated; kernel frames carry "_[k]" */
	int nuser;      /* frames before the kernel ones */
	int nkernel;
	uint64_t value; /* samples, or microseconds */
};

struct stack_report {
	struct report_row *rows;
	size_t n, cap;
	void *ksyms;
	bool user_stacks, kernel_stacks, delimiter;
	pid_t only_tid; /* report one thread only (-t); 0: all */
	bool include_runnable; /* pyoffcpu: show runnable time as its own stacks */
	int only_kind;         /* >= 0: rows of this PYB_KIND_* only (pygil) */
	/* drained Python stacks (hash set of pystack keys) */
	uint64_t *seen;
	size_t seen_cap, seen_n;
	/* what could not be shown */
	uint64_t missed_user, missed_kernel, unknown_code;
	uint64_t native_unplaced; /* stacks whose native frames could not be placed */
	uint64_t total;          /* value of the rows shown */
	uint64_t runnable_total; /* pyoffcpu: time runnable, waiting for a CPU */
	/* for formats that record them (pprof) */
	uint64_t period_ns;      /* pyprofile: time between samples */
	uint64_t start_realtime_ns, duration_ns;
};

/* Leaf frame that marks time a thread was runnable but not running. */
#define RUNNABLE_MARKER "[runnable: waiting for a CPU]"

/* Reports every kind of row (only_kind -1); runnable rows need -R. */
void stack_report_init(struct stack_report *rep, bool user_stacks, bool kernel_stacks,
		       bool delimiter);
void stack_report_free(struct stack_report *rep);

/*
 * Names the code objects of Python stacks recorded since the last call,
 * while their processes are alive: the fallback for new-stack hints that
 * were lost (see stack_events in bpf_c/discovery.bpf.h).
 */
void stack_report_drain(struct stack_report *rep, struct py_registry *reg, int pystacks_fd);

/* The same for one new stack (what stack_events announce). */
void stack_report_name_stack(struct stack_report *rep, struct py_registry *reg, int pystacks_fd,
			     uint64_t key);

/*
 * Reads every (key, value) of the counts map and builds the rows, merging
 * identical stacks. Returns 0 or -1.
 */
int stack_report_collect(struct stack_report *rep, struct py_registry *reg, int counts_fd,
			 int pystacks_fd, int stacks_fd);

/*
 * Names one recorded Python stack leaf first, frames joined by sep, into
 * buf (at most max_frames frames). Returns 0, or -1 if the stack is gone
 * from the map.
 */
int stack_report_python_label(struct stack_report *rep, struct py_registry *reg,
			      int pystacks_fd, uint64_t pystack, int max_frames, const char *sep,
			      char *buf, size_t len);

/* bcc profile/offcputime layout: leaf first, ascending by value. */
void stack_report_print_text(const struct stack_report *rep, FILE *out);
/* comm;root;...;leaf value */
void stack_report_print_folded(const struct stack_report *rep, FILE *out);

#endif
