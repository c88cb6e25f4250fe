/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /proc/PID/maps, /proc/PID/status and thread lists. For a process image
 * registered with sys/remote_mem.h (a core file) the image answers.
 */
#ifndef PYBPF_PROC_MAPS_H
#define PYBPF_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map {
	uint64_t start, end, offset, inode;
	unsigned int dev_major, dev_minor;
	char perms[5];
	char *path; /* as the process sees it; "" for anonymous mappings */
};

struct proc_maps {
	struct proc_map *v;
	size_t n;
};

/* Returns 0 or a negative errno (-ESRCH if the process is gone). */
int proc_maps_read(pid_t pid, struct proc_maps *maps);
void proc_maps_free(struct proc_maps *maps);

/* Base name of a mapping's path, without a " (deleted)" suffix check. */
const char *proc_map_basename(const struct proc_map *m);

/* Thread ids of a process: host tid and the tid inside its PID namespace. */
struct proc_thread_id {
	pid_t host_tid;
	pid_t ns_tid;
};

/* Fills up to max entries; returns the count or a negative errno. */
int proc_list_threads(pid_t pid, struct proc_thread_id *out, size_t max);

/* Whether this process runs in the kernel's initial (the host's) PID
 * namespace. */
bool proc_self_in_host_pid_ns(void);

/* The pid as seen inside the process's own PID namespace (NSpid). */
int proc_ns_pid(pid_t pid, pid_t *ns_pid);

/* /proc/PID/stat into buf, and where its fields after the command name
 * begin (") S ppid ..."); NULL if it cannot be read. The name may hold
 * ')' itself, so the last one ends it. */
const char *proc_stat_after_comm(pid_t pid, char *buf, size_t len);

/* True while /proc has the process (zombies included). */
bool proc_exists(pid_t pid);

/* Whether thread tid of process pid is still there (a thread that ended is
 * gone at once; only a process's first thread lingers as a zombie). */
bool proc_thread_exists(pid_t pid, pid_t tid);

/* True while the process exists and is not a zombie (exited, not reaped). */
bool proc_alive(pid_t pid);

/* A kernel thread (PF_KTHREAD in /proc/PID/stat's flags): no memory map,
 * never a Python process. */
bool proc_is_kernel_thread(pid_t pid);

/* The process a thread belongs to. Returns 0 or a negative errno. */
int proc_tgid(pid_t tid, pid_t *tgid);

/* A path through which the process's executable can be opened:
 * /proc/PID/exe for a live process. Returns 0 or a negative errno. */
int proc_exe_path(pid_t pid, char *path, size_t len);

/* What the scheduler tells of a thread (tid 0: of the process's own
 * files), from /proc/PID[/task/TID]/{stat,status,schedstat}. */
struct proc_sched {
	char state;        /* 'R' running or runnable, 'S', 'D', 'T', ... */
	uint64_t run_ns;   /* time on CPU so far (0 if schedstat is missing) */
	uint64_t switches; /* times given a CPU so far (schedstat), or else its
			      context switches (status): changes whenever it runs */
};

/* Returns 0 or a negative errno (-ESRCH: gone; -EINVAL: unreadable stat). */
int proc_thread_sched(pid_t pid, pid_t tid, struct proc_sched *out);

/* A process's resident memory as /proc/PID/status says it, in bytes
 * (VmRSS and its parts RssAnon, RssFile, RssShmem). */
struct proc_memory {
	uint64_t rss, anon, file, shmem;
};

/* Returns 0, or a negative errno (-ESRCH: gone; -ENOENT: no such line,
 * a kernel thread or a zombie). */
int proc_memory_read(pid_t pid, struct proc_memory *out);

/* The end of the process's [heap] mapping (its program break, rounded up
 * to a page), or 0 if it has none or cannot be read. */
uint64_t proc_heap_end(pid_t pid);

/* comm of a process (tid == 0) or of one of its threads. */
int proc_comm(pid_t pid, pid_t tid, char *buf, size_t len);

#endif
