/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the BPF native unwinder (bpf_c/native_unwind.bpf.h) reads: the
 * unwind rows of every file a watched process runs code from, built once
 * per file per run (sys/unwind_table.h) and shared by every process that
 * maps the same file (sys/exec_maps.h: device, inode, size and times,
 * opened through /proc/PID/map_files, so containers work), and per process
 * a trie from code address to file, kept equal to the process's mappings:
 * a mapping that went away or changed leaves the trie. Files that keep
 * frame pointers (the interpreter, when py_process says so) are walked by
 * them; the others by their rows.
 *
 * Mapping generations (bpf_c/maps_gen.bpf.h): BPF counts the changes of a
 * process's code mappings; the trie is said to match a generation only
 * when it was read with none under way, and BPF walks past a stack's leaf
 * only while the generation is that one.
 */
#ifndef PYBPF_BPF_NATIVE_MAPS_H
#define PYBPF_BPF_NATIVE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/native_abi.h"
#include "sys/exec_maps.h"

struct bpfmod;
struct py_process;

struct native_file {
	struct file_id id;
	uint32_t first_row, nrows;
	bool ok;       /* rows loaded (or frame pointers): unwindable */
	char name[64]; /* base name, for -v */
};

/* A mapping a process was given in the trie (its keys follow from start
 * and end). */
struct native_known_map {
	uint64_t start, end, offset;
	struct file_id id;
};

/* What the trie holds of a process, and the generation it matches. */
struct native_proc_keys {
	pid_t pid;
	struct native_known_map *maps;
	size_t n, cap;
	bool synced;     /* synced_gen is valid */
	uint32_t synced_gen;
};

struct native_maps {
	int rows_fd, trie_fd, stacks_fd, ends_fd, gen_fd, sync_fd;
	uint32_t next_base; /* where the next process's generations start */
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

/* Starts counting pid's mapping generations afresh (at its registration):
 * from a base no earlier registration of the pid used. */
void native_maps_watch(struct native_maps *nm, pid_t pid);

/* pid's generation now; 0, or -1 if a change is under way (or none is
 * counted). */
int native_maps_gen(const struct native_maps *nm, pid_t pid, uint32_t *gen);

/*
 * Makes the trie of process p match its mappings em (read by the caller):
 * mappings gone or changed leave it, new ones come in. Returns how many
 * changed (0: none), or -1 if nothing of p could be given to BPF (then BPF
 * must not walk its native stacks).
 */
int native_maps_sync(struct native_maps *nm, const struct py_process *p,
		     const struct exec_maps *em);

/* The trie of pid matches generation gen: BPF may walk past the leaf. */
void native_maps_set_synced(struct native_maps *nm, pid_t pid, uint32_t gen);

/* Whether pid's generation moved since the trie last matched it. */
bool native_maps_gen_moved(const struct native_maps *nm, pid_t pid);

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
/* Whether a walk that ended so ended early (before the outermost frame or
 * the outermost eval loop, with mappings it could name). */
bool native_end_early(int why);
/* The frame that marks where a walk shown whole ended early, and why:
 * "[native walk ended: no unwind info]". */
const char *native_end_marker(int why);

/* Kernel memory the rows take, in bytes. */
size_t native_maps_table_bytes(const struct native_maps *nm);

#endif
