/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --async: the asyncio tasks samples ran in, named while they live. BPF
 * finds the coroutine frame of the task a thread runs (bpf_c/asyncio*.h)
 * and announces each new one; here it is matched to its task (with
 * cpython/asyncio.h), given an id that BPF then counts samples under, and
 * described by the frames a sample of it is rooted in: the tasks awaiting
 * it, outermost first, each as "<task NAME>" followed by the coroutines it
 * is suspended in, then "<task NAME>" of the task itself.
 *
 * A task is known by its coroutine frame and code and by the identity of
 * its task object (address and name, PYB_TASK_IDENT): a new task whose
 * coroutine takes the address of one that ended gets its own id. A frame
 * BPF saw before it knew where to find the running task, or whose task
 * cannot be found again, is counted as of an unknown task; a task that
 * ended before it could be read is named by the name BPF copied from it
 * (its awaiting tasks then unknown). Once a second,
 * tasks that ended lose their entry in BPF's map.
 *
 * Grouped by coroutine (ASYNC_GROUP_COROUTINE), each task frame names the
 * task's coroutine instead, "<task QUALNAME>", so that the tasks a server
 * makes per request share one root per handler. The coroutine is the code
 * of the task's outermost coroutine frame, the one BPF saw: read with the
 * task while it lives; for a task that ended before it was read, taken
 * from each sample's own outermost task frame, named as the sample's
 * frames are (coro_from_sample, see stack_collector.c). One that cannot be
 * read is "<task [unknown coroutine]>", never another's.
 */
#ifndef PYBPF_BPF_ASYNC_TASKS_H
#define PYBPF_BPF_ASYNC_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/py_abi.h"
#include "bpf/registry.h"
#include "cpython/asyncio.h"
#include "cpython/code.h"

/* One frame a task's samples are rooted in: a task ("<task NAME>") or a
 * coroutine an awaiting task is suspended in. */
struct async_root_frame {
	bool task;
	char *name;       /* "<task NAME>", or the coroutine's qualname */
	char *task_name;  /* a task: NAME, as the program named it (grouped by
			     coroutine: its coroutine's qualname); NULL otherwise */
	char *file;       /* coroutine: co_filename; NULL for a task */
	int line, first_line; /* coroutine: the line it waits at (-1 unknown), co_firstlineno */
};

struct async_task {
	pid_t pid;
	uint64_t frame, code, ident; /* BPF's key: the task's coroutine frame, its code,
					the task's PYB_TASK_IDENT */
	uint64_t id;
	bool ended;
	bool coro_from_sample; /* grouped by coroutine, ended before it was read:
				  its own task frame's label comes from each sample */
	int nroot;
	struct async_root_frame *root; /* outermost first, ends with the task itself */
};

struct async_proc; /* per process: reader state, pending frames */

/* What a task frame names (--group-tasks). */
enum async_group {
	ASYNC_GROUP_NAME,      /* the task's name (the default) */
	ASYNC_GROUP_COROUTINE, /* its coroutine's qualified name */
};

#define ASYNC_UNKNOWN_COROUTINE "[unknown coroutine]"

struct async_tasks {
	int ids_fd; /* BPF task_ids */
	int src_fd; /* BPF task_src */
	enum async_group group; /* ASYNC_GROUP_NAME unless set after init */
	struct async_task *v;
	size_t n, cap;
	struct async_proc *procs;
	size_t nprocs, procs_cap;
	uint64_t next_id;
	uint64_t last_check_ns;
	/* for the summary */
	uint64_t named, unmatched, read_errors;
	uint64_t named_ended; /* of named: ended before they were read, named by BPF's copy */
	uint64_t coro_unknown; /* of named, grouped by coroutine, read live: coroutine unreadable */
	char last_error[PY_ERR_LEN + 32];
};

void async_tasks_init(struct async_tasks *t, int ids_fd, int src_fd);

/* "name" or "coroutine" (--group-tasks). Returns 0, or -1 for anything else. */
int async_group_parse(const char *arg, enum async_group *g);
void async_tasks_free(struct async_tasks *t);

/* A task frame BPF saw for the first time (PYB_EVENT_NEW_TASK): queued. */
void async_tasks_on_event(struct async_tasks *t, struct py_registry *reg,
			  const struct pyb_task_event *ev);

/* A process BPF is about to see (the registry's on_active): tells BPF
 * where its running tasks are, when it can be said already, so that its
 * first samples are known by their task too. */
void async_tasks_on_active(struct async_tasks *t, struct py_target *target);

/* Names the queued frames (one read of each process's tasks) and, once a
 * second, drops the BPF entries of tasks that ended. Call every turn. */
void async_tasks_tick(struct async_tasks *t, struct py_registry *reg);

/* The task of a count key's task field (an id, or the identity of a task
 * BPF saw before it was named: then the one task named for it), or NULL. */
const struct async_task *async_tasks_get(const struct async_tasks *t, pid_t pid, uint64_t task);

#endif
