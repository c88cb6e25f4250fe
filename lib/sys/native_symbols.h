/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names of native code addresses in live processes, also for processes in
 * chroots and containers (files are opened as the process sees them, never
 * by host path alone) and for stripped binaries (separate debug files by
 * build-id or .gnu_debuglink, and debuginfod when DEBUGINFOD_URLS is set).
 * Not thread-safe: one user at a time.
 */
#ifndef PYBPF_SYS_NATIVE_SYMBOLS_H
#define PYBPF_SYS_NATIVE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sys/exec_maps.h"

/* Opaque: files' symbol tables shared by every process, per run. */
struct native_symbols;

struct native_symbols *native_symbols_new(void);
void native_symbols_free(struct native_symbols *ns);

/*
 * Mapping generations: a process's mappings are kept as read at each
 * generation (the caller's number for "nothing removed or replaced since":
 * bpf/native_maps.h), up to 16 per process, so that an address is named
 * by the file that was mapped when it was recorded, never by one mapped
 * there later. NATIVE_GEN_LATEST: the mappings read last.
 */
#define NATIVE_GEN_LATEST ((int64_t)-1)

/*
 * The function holding addr in process pid at generation gen: its name
 * (owned by ns, valid until native_symbols_free) and addr's offset in it
 * (sym_offset may be NULL); NULL if no symbol covers addr (the caller
 * prints module+offset). Without mappings of pid, they are read on first
 * use (as the latest, no generation).
 */
const char *native_symbols_name(struct native_symbols *ns, pid_t pid, int64_t gen, uint64_t addr,
				uint64_t *sym_offset);

/*
 * Where the function holding addr starts, as linked in its file, by the
 * file's unwind information (.eh_frame has one entry per function, named
 * or not), and the file as the process names it: what tells unnamed
 * functions apart. Returns 0, or -1 if no entry covers addr.
 */
int native_symbols_function(struct native_symbols *ns, pid_t pid, int64_t gen, uint64_t addr,
			    uint64_t *start, const char **path);

/* Where addr comes from, so that a profile's native frames can be
 * symbolized again elsewhere. */
struct native_where {
	const char *path;     /* as the process names it */
	const char *build_id; /* hex; NULL when the file has none or was not read */
	uint64_t file_offset; /* the address's offset in the file */
	uint64_t start, end, offset; /* the mapping */
};
int native_symbols_where(struct native_symbols *ns, pid_t pid, int64_t gen, uint64_t addr,
			 struct native_where *out);

/* Whether pid's mappings of generation gen are kept. */
bool native_symbols_has_gen(struct native_symbols *ns, pid_t pid, int64_t gen);

/* Keeps em (read by the caller; its contents are taken) as pid's
 * mappings of generation gen (NATIVE_GEN_LATEST: of none, a read that
 * could not be vouched for). An empty em (the process is gone) keeps
 * what was read before. */
void native_symbols_set_maps(struct native_symbols *ns, pid_t pid, struct exec_maps *em,
			     int64_t gen);

/* Reads the symbols of the files of pid's latest mappings now, while it
 * lives (a process that has exited can no longer be read). */
void native_symbols_preload(struct native_symbols *ns, pid_t pid);

/* Drops what is cached of pid's mappings (it exec'd or exited); the
 * files' symbols stay for other processes. */
void native_symbols_forget(struct native_symbols *ns, pid_t pid);

/* For -v: files read, how many had .symtab, a local debug file, a debug
 * file from debuginfod, and how many could not be read. */
struct native_symbols_stats {
	size_t files, with_symtab, with_debug_file, from_debuginfod, failed;
	size_t cut; /* files read in part: over the budget of sys/elf_image.h */
};
void native_symbols_stats(const struct native_symbols *ns, struct native_symbols_stats *out);

#endif
