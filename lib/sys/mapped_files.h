/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which file an instruction address of a process comes from: the mapping
 * (start, end, file offset), the file as the process names it, the offset
 * of the address in that file and the file's GNU build-id, so that a
 * profile's native frames can be symbolized again elsewhere.
 */
#ifndef PYBPF_SYS_MAPPED_FILES_H
#define PYBPF_SYS_MAPPED_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sys/proc_maps.h"

struct mapped_files {
	pid_t pid;
	struct proc_maps maps; /* executable file mappings only */
	char (*build_ids)[41]; /* per mapping: hex, "" none, "?" not read yet */
	bool loaded;
};

struct mapped_file_addr {
	const char *path;     /* as the process names it */
	const char *build_id; /* NULL when the file has none or cannot be read */
	uint64_t file_offset; /* the address's offset in the file */
	uint64_t start, end, offset; /* the mapping */
};

/* Reads the executable mappings of pid. Returns 0 or a negative errno. */
int mapped_files_load(struct mapped_files *m, pid_t pid);
void mapped_files_free(struct mapped_files *m);

/* Fills out for addr; returns 0, or -1 if no loaded mapping holds it.
 * Build-ids are read on first use (through /proc/PID/map_files). */
int mapped_files_find(struct mapped_files *m, uint64_t addr, struct mapped_file_addr *out);

#endif
