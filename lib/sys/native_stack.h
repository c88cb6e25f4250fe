/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Native stacks of another process's threads, unwound in user space from
 * a starting set of registers (what /proc/PID/task/TID/syscall gives for a
 * blocked thread, or a core's NT_PRSTATUS): each executable mapping's file
 * is opened once (through /proc/PID/map_files or /proc/PID/root, so
 * containers work; as the image names it for a core), its .eh_frame parsed
 * into a sorted FDE list and its function symbols loaded when first needed.
 */
#ifndef PYBPF_SYS_NATIVE_STACK_H
#define PYBPF_SYS_NATIVE_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sys/eh_frame.h"
#include "sys/elf_plt.h"
#include "sys/elf_symbols.h"
#include "sys/regs.h"

struct native_module {
	uint64_t start, end;     /* the executable mapping */
	uint64_t offset;         /* its offset in the file */
	uint64_t bias;           /* runtime address - linked address */
	uint64_t inode;          /* the mapped file's, as /proc/PID/maps has them */
	unsigned int dev_major, dev_minor;
	char *path;              /* as /proc/PID/maps names the file */
	bool vdso;               /* the vDSO, read from memory (sys/vdso_image.h) */
	bool loaded, usable;
	uint8_t *eh_frame;
	size_t eh_size;
	uint64_t eh_vaddr;
	struct eh_fde *fdes;
	size_t nfdes;
	struct elf_symtab syms;
	struct elf_plt *plt;     /* code sections and PLT stubs; NULL if unread */
};

struct native_proc {
	pid_t pid;
	struct native_module *mods;
	size_t n;
};

struct native_frame {
	uint64_t ip;
	uint64_t sp;                     /* its stack pointer: the frame is [sp, caller's sp) */
	const struct native_module *mod; /* NULL: not in a known mapping */
	const char *symbol;              /* NULL if the file names nothing there */
	uint64_t offset;                 /* from the symbol, or from the file's start */
};

/* Reads the process's executable mappings. Returns 0 or a negative errno. */
int native_proc_open(struct native_proc *np, pid_t pid);
void native_proc_close(struct native_proc *np);

/*
 * Unwinds from regs (at least rip and rsp), innermost frame first, at most
 * max frames. Returns the count; *why says why the walk ended before the
 * outermost frame ("" when it reached it).
 */
int native_unwind(struct native_proc *np, const struct proc_regs *regs, struct native_frame *out,
		  int max, char *why, size_t whylen);

#endif
