/* SPDX-License-Identifier: Apache-2.0 */
/*
 * asyncio tasks of a live process, read from outside (no ptrace, nothing
 * run in the target): every task, its name and state, the coroutine chain
 * it is suspended in, what it awaits and which tasks await it, and which
 * thread runs it now. CPython 3.11+ (GIL builds), C tasks (_asyncio.Task)
 * and pure-Python ones (asyncio.tasks._PyTask and other Task subclasses).
 *
 * Where tasks are found (see rules.h, enum py_task_lists):
 *   3.11     asyncio.tasks._all_tasks (a WeakSet)
 *   3.12-13  asyncio.tasks._scheduled_tasks (WeakSet) and _eager_tasks (set)
 *   3.14+    C tasks on the thread and interpreter lists _asyncio publishes
 *            (AsyncioDebug); pure-Python ones as in 3.12-13.
 */
#ifndef PYBPF_CPYTHON_ASYNCIO_H
#define PYBPF_CPYTHON_ASYNCIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cpython/asyncio_layout.h"
#include "cpython/objects.h"
#include "cpython/process.h"
#include "cpython/threads.h"

#define PY_TASK_NAME_MAX 128
#define PY_TASK_FRAMES_MAX 64 /* coroutine chain kept per task; deeper is cut */
#define PY_TASKS_MAX 100000   /* tasks read at most */
/* Awaits edges kept at most: tasks that all wait in one TaskGroup's
 * __aexit__ each await every task of the group (n * n edges); the rest are
 * counted (py_asyncio.edges_dropped) and said in the output. */
#define PY_AWAIT_EDGES_MAX 200000

enum py_task_state {
	PY_TASK_PENDING,
	PY_TASK_CANCELLED,
	PY_TASK_DONE,
	PY_TASK_UNREADABLE,
};

/* What a suspended task waits on (its _fut_waiter). */
enum py_await_kind {
	PY_AWAITS_NOTHING,   /* running, done, or scheduled to run */
	PY_AWAITS_TASK,      /* another task */
	PY_AWAITS_GATHER,    /* asyncio.gather()'s future */
	PY_AWAITS_TASKGROUP, /* a future while inside TaskGroup.__aexit__ */
	PY_AWAITS_FUTURE,    /* any other future (sleep, I/O, locks, queues...) */
};

struct py_coro_frame {
	uint64_t frame, code; /* the coroutine's frame and its code object */
	int64_t instr_offset; /* as struct py_frame: bytes into the bytecode */
};

struct py_task {
	uint64_t addr, coro;
	uint64_t root_frame; /* the frame of coro itself (outermost of the chain) */
	char name[PY_TASK_NAME_MAX];
	bool python_task; /* a Task class written in Python (asyncio.tasks._PyTask) */
	enum py_task_state state;
	bool running;  /* the current task of its event loop */
	pid_t thread;  /* host tid of the thread running it; 0 if not running or unknown */
	int nframes;   /* coroutine chain, innermost first */
	bool frames_cut; /* deeper awaits than PY_TASK_FRAMES_MAX: the innermost are cut */
	struct py_coro_frame frames[PY_TASK_FRAMES_MAX];
	enum py_await_kind awaits;
	uint64_t awaited; /* the future (or task) it waits on; 0 none */
	int awaited_task; /* PY_AWAITS_TASK: the index of that task; -1 none or unread */
	int awaiter;      /* the index of its first awaiter (py_asyncio_awaiter); -1 none */
};

/* One "parent awaits child" edge, as indexes into tasks. */
struct py_await_edge {
	int parent, child;
};

struct py_asyncio {
	bool asyncio_loaded; /* asyncio.tasks is in sys.modules */
	int ntasks;
	struct py_task *tasks;
	int nedges;
	struct py_await_edge *edges;
	pid_t loop_threads[16]; /* host tids of threads with a running event loop */
	int nloop_threads;
	enum py_async_source source;
	char extension[256]; /* the _asyncio extension file, "" if built in or not loaded */
	uint64_t unreadable; /* task candidates that failed their checks */
	/* awaits edges past PY_AWAIT_EDGES_MAX, not kept: counted, not
	 * compared (one may count twice; a TaskGroup not read once the edges
	 * are full counts once), so about as many */
	uint64_t edges_dropped;
};

/* What a reader keeps between reads of one process: its offsets and types. */
struct py_asyncio_ctx {
	bool ready;
	struct py_async_layout L;
	enum py_async_source source;
	char extension[256];
	struct py_objects objects; /* the object reader, set up for the process */
	uint64_t current_tasks; /* 3.11-3.13: asyncio's dict {loop: running task}; 0 unknown */
};

/*
 * Reads every task of process p (opened with py_process_open); threads are
 * its thread states (py_threads_read). Returns 0, or -1 with the reason in
 * p->err (unsupported version or build, offsets that fail their checks,
 * process gone). A process without asyncio gives 0 tasks and
 * asyncio_loaded false. ctx (zeroed before the first call) spares later
 * reads of the same process the look-ups; NULL: none.
 */
int py_asyncio_read(struct py_process *p, struct py_asyncio_ctx *ctx,
		    const struct py_thread *threads, int nthreads, struct py_asyncio *out);
void py_asyncio_free(struct py_asyncio *a);

/*
 * For BPF (struct pyb_task_src in bpf_c/py_abi.h): where the task a thread
 * runs is found in this process, from what the last read found (ctx).
 * Returns 0, or -1 when it cannot be said (no read yet, 3.11-3.13 before
 * asyncio.tasks is imported).
 */
struct pyb_task_src;
int py_asyncio_task_src(const struct py_asyncio_ctx *ctx, struct pyb_task_src *src);

/* PYB_TASK_IDENT of task t as BPF computes it (bpf_c/asyncio.bpf.h); 0
 * for a task written in Python or a name neither str nor int. */
uint64_t py_asyncio_task_ident(struct py_process *p, const struct py_asyncio_ctx *ctx,
			       const struct py_task *t);

/* The name of a task whose name is an int (3.13+ makes "Task-N" of it when
 * asked), from the int's size word and first digits word as BPF read
 * them (PYB_TASK_NAME_INT). Returns 0, or -1 if they make no such int. */
int py_asyncio_int_name(const struct py_process *p, const uint64_t words[2], char *buf,
			size_t len);

/* The task whose coroutine is coro; NULL if none. */
const struct py_task *py_asyncio_by_coro(const struct py_asyncio *a, uint64_t coro);

/* Index of the task that awaits task i (its first awaiter); -1 if none. */
int py_asyncio_awaiter(const struct py_asyncio *a, int i);

const char *py_task_state_name(enum py_task_state s);

/*
 * Prints the tasks as a tree like `python -m asyncio pstree`: each task
 * with its state and coroutine chain (innermost first), the tasks it
 * awaits below it; a task awaited by several is printed once and referred
 * to after; cycles are cut. "asyncio: no event loop" when there is none.
 */
void py_asyncio_print(FILE *f, struct py_process *p, const struct py_asyncio *a);

#endif
