/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Struct offsets an asyncio reader needs beyond the frame walker's and the
 * object reader's (cpython/objects.h): the thread and interpreter states'
 * asyncio fields, generators' embedded frames, and asyncio's own futures
 * and tasks. Where they come from:
 *   3.14+  the _asyncio module's published debug offsets (section
 *          AsyncioDebug) and the interpreter's _Py_DebugOffsets, completed
 *          by a few fields those do not publish (see asyncio_layout.c);
 *   3.11-3.13  DWARF of the _asyncio extension when it has some, else the
 *          table generated from DWARF builds (offsets/asyncio_generate.py,
 *          asyncio_table.inc).
 * Every set is checked against the live process before it is used.
 */
#ifndef PYBPF_CPYTHON_ASYNCIO_LAYOUT_H
#define PYBPF_CPYTHON_ASYNCIO_LAYOUT_H

#include <stdint.h>

#include "cpython/process.h"

#define PY_ASYNC_LAYOUT_FIELDS(X)                                                              \
	/* the interpreter and thread states */                                               \
	X(interp_modules) X(tstate_dict) X(tstate_running_loop) X(tstate_running_task)        \
	X(tstate_tasks_head) X(interp_tasks_head) X(llist_next)                               \
	/* generators (coroutines) and their embedded frames */                               \
	X(gen_frame_state) X(gen_iframe) X(frame_stacktop) X(frame_stackpointer)              \
	X(frame_localsplus)                                                                   \
	/* _asyncio: FutureObj, TaskObj, futureiterobject */                                  \
	X(fut_loop) X(fut_state) X(task_fut_waiter) X(task_coro) X(task_name) X(task_size)     \
	X(task_awaited_by) X(task_awaited_by_is_set) X(task_is_task) X(task_node)             \
	X(futureiter_future) X(running_holder_loop)

struct py_async_layout {
#define PY_ASYNC_MEMBER(name) int32_t name;
	PY_ASYNC_LAYOUT_FIELDS(PY_ASYNC_MEMBER)
#undef PY_ASYNC_MEMBER
};

enum py_async_source {
	PY_ASYNC_SRC_NONE = 0,
	PY_ASYNC_SRC_DEBUG,  /* AsyncioDebug + _Py_DebugOffsets (3.14+) */
	PY_ASYNC_SRC_DWARF,  /* _asyncio's DWARF, the rest from the table */
	PY_ASYNC_SRC_TABLE,  /* generated table */
};

const char *py_async_source_name(enum py_async_source src);

/* Sets every field to PY_OFFSET_ABSENT. */
void py_async_layout_clear(struct py_async_layout *L);

/* Field access by index and name, for the generator check and tests. */
size_t py_async_layout_count(void);
const char *py_async_layout_name_at(size_t i);
int32_t py_async_layout_value_at(const struct py_async_layout *L, size_t i);

/* The generated row for 3.minor (3.11-3.13), or -1. */
int py_async_layout_table(int minor, struct py_async_layout *L);

/*
 * The layout for process p: from the sources above, best first. Fills
 * *src and, when the extension is found, its path in ext (may stay empty:
 * 3.15 builds _asyncio into the interpreter). Returns 0, 1 when the
 * process has not loaded _asyncio (3.14+: no AsyncioDebug section), or -1
 * with the reason in err.
 */
int py_async_layout_load(struct py_process *p, struct py_async_layout *L,
			 enum py_async_source *src, char *ext, size_t ext_len, char *err,
			 size_t errlen);

#endif
