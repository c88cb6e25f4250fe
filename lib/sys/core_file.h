/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An ELF core file (from the kernel or gdb's gcore) seen as a process: its
 * memory, mapped files, threads and their registers. Memory the core does
 * not hold (read-only file mappings, which neither the kernel nor gcore
 * dump by default) is read from the mapped files themselves, found under a
 * root directory (the container's or chroot's root) when one is given.
 *
 * core_file_attach() registers the core with sys/remote_mem.h, so every
 * reader that takes a pid reads it like a live process.
 */
#ifndef PYBPF_SYS_CORE_FILE_H
#define PYBPF_SYS_CORE_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sys/regs.h"

struct core_thread {
	pid_t tid;          /* as the core records it */
	pid_t ns_tid;       /* in the process's own PID namespace (glibc's struct pthread) */
	struct proc_regs regs;
	int cursig;         /* signal pending when it was dumped */
	uint64_t utime_us, stime_us;
};

struct core_segment {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags; /* PF_R, PF_W, PF_X */
};

struct core_mapping {
	uint64_t start, end, offset; /* offset into the file, in bytes */
	char *path;                  /* as the core records it */
	char *host_path;             /* where this machine has it, for people (opened
					only inside the root); NULL if nowhere */
	int fd;                      /* opened on first use; -1 */
	uint64_t inode;
	unsigned int dev_major, dev_minor;
	uint32_t file_flags;         /* PF_* of the file's segment mapped here, for a
					mapping the core has no segment of (gcore
					leaves code out); 0 if unknown */
};

struct core_file {
	const uint8_t *data; /* the whole core, mapped */
	size_t size;
	bool mapped; /* by core_file_open (else the caller's buffer) */
	pid_t pid;
	char fname[17];  /* comm of the process */
	char psargs[81]; /* its command line, cut at 80 bytes */
	int signo;       /* signal that made the core (0 for gcore) */
	int si_code;
	uint64_t fault_addr; /* si_addr of that signal, for faults */
	pid_t sender;        /* the process that sent it (kill), or 0 */
	uint64_t entry;      /* AT_ENTRY: the executable's entry point */
	struct core_segment *segs;
	size_t nsegs;
	struct core_mapping *files;
	size_t nfiles;
	struct core_thread *threads;
	size_t nthreads;
	char root[PATH_MAX]; /* prefix for the recorded file names; "" */
	char exe[PATH_MAX];  /* the executable, as this machine has it; "" if unknown */
	int root_fd;         /* the root (O_PATH): recorded paths resolve inside it */
	int exe_fd;          /* --exe, or -1 */
};

/*
 * Parses a core held in memory (DATA, SIZE bytes; nothing is copied, the
 * buffer must outlive c). Files are not looked up. Returns 0, or -1 with a
 * reason in err.
 */
int core_file_parse(struct core_file *c, const uint8_t *data, size_t size, char *err,
		    size_t errlen);
/* core_file_close() frees what parsing allocated, whether or not it failed. */

/*
 * Maps and parses the core at PATH, then finds its mapped files: under
 * ROOT when given (NULL or ""), else as recorded; EXE (optional) stands for
 * the executable whatever the core calls it, and implies the root when the
 * core's name of the executable is a tail of EXE's path. Returns 0, or -1
 * with a reason in err.
 */
int core_file_open(struct core_file *c, const char *path, const char *root, const char *exe,
		   char *err, size_t errlen);
void core_file_close(struct core_file *c);

/* Copies memory of the dumped process. Returns 0 or -EFAULT. */
int core_file_read(struct core_file *c, uint64_t addr, void *buf, size_t len);

/* The mapping that holds addr, or NULL. */
const struct core_mapping *core_file_mapping_at(const struct core_file *c, uint64_t addr);

/* Registers c with sys/remote_mem.h: returns the pid to read it under, or -1. */
pid_t core_file_attach(struct core_file *c);

#endif
