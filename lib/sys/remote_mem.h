/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading another process's memory without stopping or ptrace-attaching it.
 *
 * One interface, two back ends: a live process (process_vm_readv, or
 * /proc/PID/mem) and a process image such as a core file. An image is
 * registered under a pid of its own, above any pid the kernel hands out,
 * and from then on remote_read() and the /proc readers of sys/proc_maps.h
 * answer for that pid from the image. The readers in lib/cpython keep
 * passing the pid their struct py_process carries and never learn which
 * back end served them.
 */
#ifndef PYBPF_REMOTE_MEM_H
#define PYBPF_REMOTE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Copies len bytes at addr in process pid into buf. Returns 0, or a
 * negative errno: -ESRCH when the process is gone, -EFAULT when the range
 * is not fully mapped (a short read counts as a failure).
 */
int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);

int remote_read_u64(pid_t pid, uint64_t addr, uint64_t *out);
int remote_read_i32(pid_t pid, uint64_t addr, int32_t *out);

struct proc_maps;
struct proc_thread_id;
struct proc_regs;

/* What a process image answers in place of a live process. Every hook
 * returns 0 or a negative errno, like the live reader it stands for. */
struct remote_image {
	void *ctx;
	pid_t pid; /* the pid the process had, as the image records it */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	int (*maps)(void *ctx, struct proc_maps *out);
	int (*threads)(void *ctx, struct proc_thread_id *out, size_t max);
	int (*comm)(void *ctx, pid_t tid, char *buf, size_t len);
	/* a path of the executable this machine can open */
	int (*exe)(void *ctx, char *path, size_t len);
	/* registers of a thread (tid as threads() lists it) */
	int (*regs)(void *ctx, pid_t tid, struct proc_regs *out);
	/* CPU time of a thread in user and kernel mode, in ns */
	int (*times)(void *ctx, pid_t tid, int64_t *user_ns, int64_t *system_ns);
	/* a new descriptor of the file mapped at start, of the executable
	 * (sys/target_file.h checks them), or a negative errno */
	int (*open_mapped)(void *ctx, uint64_t start);
	int (*open_exe)(void *ctx);
	/* the directory the process's paths resolve in (O_PATH), or -1 */
	int root_fd;
};

/* First pid given to images: above PID_MAX_LIMIT (4194304). */
#define REMOTE_IMAGE_PID_BASE (1 << 23)

/*
 * Registers an image (copied; ctx stays the caller's). Returns the pid to
 * read it under, or -1 when the table of images is full.
 */
pid_t remote_image_attach(const struct remote_image *img);
void remote_image_detach(pid_t pid);

/* The image registered under pid, or NULL (a live process). */
const struct remote_image *remote_image_of(pid_t pid);

#endif
