/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From BPF's counts to named, merged stacks: Python frames named while
 * their processes live, native frames placed where the eval loop ran them,
 * kernel frames symbolized. One implementation for every tool: pyprofile
 * counts samples, pyoffcpu and pygil microseconds. The rows go into a
 * report (report/rows.h), which knows nothing of BPF or CPython.
 */
#ifndef PYBPF_BPF_STACK_COLLECTOR_H
#define PYBPF_BPF_STACK_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/async_tasks.h"
#include "bpf/registry.h"
#include "bpf/thread_names.h"
#include "report/rows.h"
#include "report/string_table.h"

/* Naming state kept over a run, and what could not be shown. */
struct stack_collector {
	void *ksyms; /* kernel symbols, loaded on first use */
	/* Python stacks already named (hash set of pystack keys) */
	uint64_t *seen;
	size_t seen_cap, seen_n;
	uint64_t missed_user, missed_kernel, unknown_code;
	uint64_t native_unplaced; /* distinct stacks whose native frames could not be placed */
	/* distinct stacks whose native frames were taken under mappings that
	 * changed since (marked MAPPING_CHANGED_MARKER) */
	uint64_t native_changed;
	/* --async: value rooted in a named task, value in coroutines that were
	 * not matched to a task (left as they were), and all value collected */
	uint64_t task_value, untasked_value, all_value;
	/* --async: the distinct task frames the reported stacks are rooted in
	 * (their labels: a task's name, or its coroutine's) */
	struct string_table task_roots;
	/* periodic output: the Python stacks and stack ids the counts of the
	 * last collect used; the others may be pruned (stack_collector_prune) */
	/* the Python names of the threads rows are for */
	struct thread_names threads;
	uint64_t *keep_py;
	size_t nkeep_py, cap_keep_py;
	uint32_t *keep_ids;
	size_t nkeep_ids, cap_keep_ids;
};

/* Which counts become rows, and with which frames. */
struct stack_filter {
	bool user_stacks, kernel_stacks;
	pid_t only_tid;        /* one thread only (-t); 0: all */
	bool include_runnable; /* pyoffcpu -R: runnable time as its own stacks */
	int only_kind;         /* >= 0: rows of this PYB_KIND_* only; -1: all */
	/* --async: root each stack that ran in an asyncio task in the task's
	 * await chain (see bpf/async_tasks.h); NULL: stacks as recorded */
	const struct async_tasks *tasks;
	/* a leaf frame for a count (pyoffcpu: why it waited); NULL: none */
	const char *(*leaf)(void *ctx, const struct pyb_count_key *k);
	void *leaf_ctx;
	/* pyprofile --wall: samples weigh this many microseconds each, and
	 * off-CPU counts get offcpu_marker after their user frames */
	uint64_t sample_weight; /* 0: 1 */
	const char *offcpu_marker;
	bool consume;          /* periodic output: delete the counts read */
	/* native frames below the outermost Python frame (the interpreter's
	 * start-up, a thread's bootstrap) are kept; by default left out */
	bool startup_frames;
};

/* BPF maps the collector reads. */
struct stack_maps {
	int counts_fd;   /* struct pyb_count_key -> value */
	int pystacks_fd; /* Python stack id -> struct pyb_stack */
	int stacks_fd;   /* kernel stack traces */
	int native_stacks_fd; /* native user stacks (struct pyb_native_stack); -1 none */
};

void stack_collector_free(struct stack_collector *c);

/*
 * Names the code objects of Python stacks recorded since the last call,
 * while their processes are alive: the fallback for new-stack hints that
 * were lost (see stack_events in bpf_c/discovery.bpf.h).
 */
void stack_collector_drain(struct stack_collector *c, struct py_registry *reg, int pystacks_fd);

/* The same for one new stack (what stack_events announce). */
void stack_collector_name_stack(struct stack_collector *c, struct py_registry *reg,
				int pystacks_fd, uint64_t key);

/*
 * Reads every (key, value) of the counts map that passes the filter and
 * adds the rows to out, merging identical stacks. Returns 0 or -1.
 */
int stack_collector_collect(struct stack_collector *c, struct py_registry *reg,
			    const struct stack_maps *maps, const struct stack_filter *f,
			    struct report *out);

/*
 * Periodic output, after a consuming collect: when the Python stack map or
 * the stack-trace map is more than half full (pystacks_max, stacks_max
 * entries), deletes the stacks the last collect's counts did not use, so
 * a run of days does not fill them. (A stack stored after that collect
 * and pruned before its count is read shows as "[lost Python stack]";
 * pruning only maps that fill keeps that rare.) Returns entries deleted.
 */
size_t stack_collector_prune(struct stack_collector *c, const struct stack_maps *maps,
			     uint32_t pystacks_max, uint32_t stacks_max, uint32_t native_max);

/*
 * Names one recorded Python stack leaf first, frames joined by sep, into
 * buf (at most max_frames frames). Returns 0, or -1 if the stack is gone
 * from the map.
 */
int stack_collector_python_label(struct stack_collector *c, struct py_registry *reg,
				 int pystacks_fd, uint64_t pystack, int max_frames,
				 const char *sep, char *buf, size_t len);

#endif
