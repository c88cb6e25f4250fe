/* SPDX-License-Identifier: Apache-2.0 */
/* A thread's x86-64 user registers, as far as they are known. */
#ifndef PYBPF_SYS_REGS_H
#define PYBPF_SYS_REGS_H

#include <stdbool.h>
#include <stdint.h>

/* Numbered as DWARF numbers them on x86-64 (rip is the return address column). */
enum xreg {
	XREG_RAX, XREG_RDX, XREG_RCX, XREG_RBX, XREG_RSI, XREG_RDI, XREG_RBP, XREG_RSP,
	XREG_R8, XREG_R9, XREG_R10, XREG_R11, XREG_R12, XREG_R13, XREG_R14, XREG_R15,
	XREG_RIP, XREG_COUNT
};

struct proc_regs {
	uint64_t r[XREG_COUNT];
	uint32_t known;      /* bit i set: r[i] is known */
	int64_t syscall_nr;  /* the system call the thread is in; -1 if none or unknown */
	uint64_t args[6];    /* its arguments, when syscall_nr >= 0 */
	uint64_t fs_base;    /* thread pointer (pthread_self() with glibc); 0 if unknown */
};

static inline bool proc_regs_has(const struct proc_regs *r, enum xreg i)
{
	return (r->known >> i) & 1;
}

static inline void proc_regs_set(struct proc_regs *r, enum xreg i, uint64_t v)
{
	r->r[i] = v;
	r->known |= 1u << i;
}

#endif
