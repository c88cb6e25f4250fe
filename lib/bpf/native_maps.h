/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the BPF native unwinder (bpf_c/native_unwind.bpf.h) reads: the
 * unwind rows of every file a watched process runs code from, built once
 * per file per run (sys/unwind_table.h) and shared by every process that
 * maps the same file (device + inode, opened through /proc/PID/map_files,
 * so containers work), and per process a trie from code address to file.
 * Files that keep frame pointers (the interpreter, when py_process says
 * so) are walked by them; the others by their rows.
 */
#ifndef PYBPF_BPF_NATIVE_MAPS_H
#define PYBPF_BPF_NATIVE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/native_abi.h"

struct bpfmod;
struct py_process;

struct native_file {
	uint64_t dev, ino;
	uint32_t first_row, nrows;
	bool ok;       /* rows loaded (or frame pointers): unwindable */
	char name[64]; /* base name, for -v */
};

/* The trie keys a process was given, to take them back. */
struct native_proc_keys {
	pid_t pid;
	struct pyb_native_map_key *keys;
	size_t n, cap;
	uint64_t *starts; /* mapping starts already in the trie */
	size_t nstarts, cap_starts;
};

struct native_maps {
	int rows_fd, trie_fd, stacks_fd, ends_fd;
	uint32_t rows_used, rows_cap;
	struct native_file *files;
	size_t nfiles;
	struct native_proc_keys *procs;
	size_t nprocs;
	/* for -v and the benchmarks */
	uint64_t build_ns, load_ns; /* making rows; putting them in BPF */
	size_t files_failed, rows_full;
	size_t files_cut; /* read in part: over the budgets of sys/elf_image.h, sys/unwind_table.h */
	bool verbose;
	const char *tool;
};

/* Finds the maps in m. Returns 0, or -1 if the program has none (native
 * stacks were not compiled in). */
int native_maps_init(struct native_maps *nm, struct bpfmod *m, const char *tool);
void native_maps_free(struct native_maps *nm);

/*
 * Adds the executable file mappings of process p not yet known (at its
 * registration, and again when BPF says a walk met an address in none).
 * Returns the number of mappings added, or -1 if the process cannot be
 * read (then BPF must not walk its native stacks).
 */
int native_maps_add(struct native_maps *nm, const struct py_process *p);

/* Takes back what pid was given (it exited, or exec'd another program). */
void native_maps_forget(struct native_maps *nm, pid_t pid);

/* How a process's native walks ended: n[why] (enum pyb_native_end). */
struct native_ends {
	pid_t pid;
	uint64_t n[PYB_NATIVE_END_KINDS];
};

/* Every process's, malloc'ed in *out (sorted by pid); returns how many. */
size_t native_maps_read_ends(const struct native_maps *nm, struct native_ends **out);

/* What an end reason means, for the summary. */
const char *native_end_text(int why);

/* Kernel memory the rows take, in bytes. */
size_t native_maps_table_bytes(const struct native_maps *nm);

#endif
