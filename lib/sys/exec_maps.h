/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process's mappings of code from files, each with the identity of the
 * file it maps: the one per-process view that the BPF unwinder's trie
 * (bpf/native_maps.c) and the names of native frames (sys/native_symbols.c)
 * are made from. Two mappings are the same only if they map the same bytes
 * of the same file at the same place: start, end, file offset, and the
 * file's device, inode, size, modification and change times (a file
 * rewritten in place is another file; an inode number a deleted file left
 * and a new file took differs in its times).
 */
#ifndef PYBPF_SYS_EXEC_MAPS_H
#define PYBPF_SYS_EXEC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "sys/vdso_image.h"

/* Mappings of code kept per process: a process with more is read only up
 * to here (the others are neither walked nor named). */
#define EXEC_MAPS_MAX 8192

struct file_id {
	uint64_t dev, ino;
	int64_t size;
	int64_t mtime_ns, ctime_ns;
};

struct exec_map {
	uint64_t start, end, offset;
	uint64_t inode;     /* as /proc/PID/maps says */
	unsigned int dev_major, dev_minor;
	struct file_id id;  /* of the file behind the mapping (map_files) */
	bool id_known;      /* false: map_files could not be read */
	bool vdso;          /* the vDSO (path "[vdso]"): no file, its bytes are
			     * in the process's memory (sys/vdso_image.h) */
	char *path;         /* as the process names it (its root's prefix off) */
};

struct exec_maps {
	struct exec_map *v; /* by address */
	size_t n;
	bool capped;        /* more than EXEC_MAPS_MAX: the rest left out */
};

/* Reads pid's mappings of code from files, and its vDSO. Returns 0 (n is 0 for a process
 * that has exited) or a negative errno. */
int exec_maps_read(pid_t pid, struct exec_maps *out);
void exec_maps_free(struct exec_maps *m);

void file_id_of(const struct stat *st, struct file_id *out);
bool file_id_equal(const struct file_id *a, const struct file_id *b);
/* The identity of a vDSO image as a file's: device 0, its hash as inode. */
void file_id_of_vdso(const struct vdso_ident *v, struct file_id *out);

/* The mapping holding addr, or NULL. */
const struct exec_map *exec_maps_find(const struct exec_maps *m, uint64_t addr);

#endif
