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

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Opaque: files' symbol tables shared by every process, per run. */
struct native_symbols;

struct native_symbols *native_symbols_new(void);
void native_symbols_free(struct native_symbols *ns);

/*
 * The function holding addr in process pid: its name (owned by ns, valid
 * until native_symbols_free) and addr's offset in it (sym_offset may be
 * NULL); NULL if no symbol covers addr (the caller prints module+offset).
 * The process's executable mappings are read on first use and cached.
 */
const char *native_symbols_name(struct native_symbols *ns, pid_t pid, uint64_t addr,
				uint64_t *sym_offset);

/*
 * Where the function holding addr starts, as linked in its file, by the
 * file's unwind information (.eh_frame has one entry per function, named
 * or not), and the file as the process names it: what tells unnamed
 * functions apart. Returns 0, or -1 if no entry covers addr.
 */
int native_symbols_function(struct native_symbols *ns, pid_t pid, uint64_t addr,
			    uint64_t *start, const char **path);

/* Reads pid's mappings and their files' symbols now, while it lives (a
 * process that has exited can no longer be read). */
void native_symbols_preload(struct native_symbols *ns, pid_t pid);

/* Reads pid's mappings again (it mapped more) and their files' symbols
 * now; if it can no longer be read, what was read of it stays. */
void native_symbols_reload(struct native_symbols *ns, pid_t pid);

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
