/* SPDX-License-Identifier: Apache-2.0 */
/* Parents and descendants of processes, from /proc. */
#ifndef PYBPF_SYS_PROC_TREE_H
#define PYBPF_SYS_PROC_TREE_H

#include <stddef.h>
#include <sys/types.h>

/* The parent of a process (field 4 of /proc/PID/stat). Returns 0, or
 * -ENOENT if it cannot be read. */
int proc_ppid(pid_t pid, pid_t *ppid);

/*
 * The processes that descend from any of roots now (not the roots), into
 * *out (malloc'ed, the caller frees it) and *n. Returns 0 or -1.
 */
int proc_descendants(const pid_t *roots, size_t nroots, pid_t **out, size_t *n);

/*
 * The direct children of pid, from /proc/PID/task/TID/children (a
 * thread's children; at most PROC_CHILDREN_TASKS threads are looked at),
 * at most max of them into out. Returns how many, 0 if none or unreadable.
 */
#define PROC_CHILDREN_TASKS 64
size_t proc_children(pid_t pid, pid_t *out, size_t max);

#endif
