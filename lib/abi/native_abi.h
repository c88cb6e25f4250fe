/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Native (C) stacks unwound in BPF from the binaries' own unwind
 * information, shared with user space (lib/sys/unwind_table.c builds the
 * rows, lib/bpf/native_maps.c loads them, bpf_c/native_unwind.bpf.h walks
 * them). x86-64 only: the return address is always at CFA - 8.
 */
#ifndef PYBPF_NATIVE_ABI_H
#define PYBPF_NATIVE_ABI_H

#include "py_abi.h"

#ifdef PYB_BPF
typedef s16 pyb_s16;
typedef s8 pyb_s8;
#else
typedef int16_t pyb_s16;
typedef int8_t pyb_s8;
#endif

/* Deepest native stack recorded (the kernel's perf_event_max_stack). */
#ifndef PYB_MAX_NATIVE
#define PYB_MAX_NATIVE 127
#endif

/* How a function's caller is found at one address (struct pyb_unwind_row). */
enum pyb_cfa_kind {
	PYB_CFA_NONE = 0, /* no unwind information here: the walk ends (counted) */
	PYB_CFA_RSP,      /* CFA = rsp + 8 * cfa_off8 */
	PYB_CFA_RBP,      /* CFA = rbp + 8 * cfa_off8 */
	PYB_CFA_PLT,      /* PLT stub: CFA = rsp + 8 * cfa_off8, + 8 if (rip & 15) >= rbp_off */
	PYB_CFA_SIGNAL,   /* signal trampoline: the interrupted registers are in
			   * the ucontext at rsp (x86-64 rt_sigframe) */
	PYB_CFA_END,      /* the outermost frame (return address undefined) */
};

/*
 * One row of a file's unwind table: from address pc (as linked, the
 * file's own address) up to the next row's, the caller's frame address
 * (CFA) and where the caller's rbp was saved: at CFA + 8 * rbp_off, or
 * nowhere (rbp_off 0: rbp still holds it). The return address is at
 * CFA - 8. Rows of a file are sorted by pc; a gap between two functions'
 * code is a PYB_CFA_NONE row.
 */
struct pyb_unwind_row {
	pyb_u32 pc;
	pyb_s16 cfa_off8; /* the CFA's offset / 8 (always a multiple of 8 on
			   * x86-64): frames up to 256 KiB (select() keeps
			   * ~48 KiB on its stack) */
	pyb_u8 kind;    /* enum pyb_cfa_kind */
	pyb_s8 rbp_off;
};

/* Key of `native_maps`, an LPM trie: a process's executable mappings,
 * each split into aligned power-of-two blocks. addr is big-endian (the
 * trie matches bytes from the first). */
struct pyb_native_map_key {
	pyb_u32 prefixlen; /* 32 (pid) + bits of addr that match */
	pyb_u32 pid;
	pyb_u8 addr[8];
};

enum pyb_native_map_flags {
	PYB_NMAP_FP = 1 << 0,       /* the file keeps frame pointers: walk rbp */
	PYB_NMAP_NO_TABLE = 1 << 1, /* neither frame pointers nor unwind rows */
};

/* Value of `native_maps`: how to unwind code of one mapped file. */
struct pyb_native_map {
	pyb_u64 bias;      /* address in the process - address as linked */
	pyb_u32 first_row; /* the file's rows in `unwind_rows` */
	pyb_u32 nrows;
	pyb_u32 flags;     /* enum pyb_native_map_flags */
	pyb_u32 file;      /* user space's number for the file */
	pyb_u64 start, end; /* the mapping, [start, end): every key of it has
			     * this value, so a walk whose next address is in
			     * it need not look it up again */
};

/* Why a native walk ended before the outermost frame. */
enum pyb_native_end {
	PYB_NATIVE_COMPLETE = 0,   /* reached the outermost frame */
	PYB_NATIVE_NO_MAPPING,     /* an address in no known file: JIT code,
				    * anonymous memory, or a file mapped since */
	PYB_NATIVE_NO_INFO,        /* code without unwind information */
	PYB_NATIVE_UNREADABLE,     /* stack memory that could not be read */
	PYB_NATIVE_TOO_DEEP,       /* more than PYB_MAX_NATIVE frames */
	PYB_NATIVE_BAD_FRAME,      /* a caller's frame below its callee's */
	PYB_NATIVE_NO_REGS,        /* no user registers (a kernel thread) */
	PYB_NATIVE_PYTHON_ROOT,    /* reached the outermost eval-loop run of the
				    * Python stack: what is below (the
				    * interpreter's start-up) is left out, as
				    * the report does (--startup-frames walks on) */
	PYB_NATIVE_MAPS_CHANGED,   /* the process's mappings changed and user
				    * space has not read them yet: the leaf only */
	PYB_NATIVE_END_KINDS
};

/* Value of `native_stacks`: one distinct native stack, innermost first. */
struct pyb_native_stack {
	pyb_u64 hash; /* of len, gen and ips: tells apart two stacks whose ids collide */
	pyb_u32 len;
	pyb_u32 end;  /* enum pyb_native_end */
	pyb_u32 gen;  /* the process's mapping generation when it was walked */
	pyb_u32 pad;
	pyb_u64 ips[PYB_MAX_NATIVE];
};

/*
 * Value of `maps_gen` (key: host tgid): the process's mapping generation,
 * which BPF bumps when a system call of the process begins and again when
 * it ends that may remove or replace a mapping of code (bpf_c/maps_gen.bpf.h),
 * and how many such calls are under way. User space makes the entry (with
 * a base of its choosing) and never writes it again: only BPF changes it.
 */
struct pyb_maps_gen {
	pyb_u32 gen;
	pyb_u32 busy;
};

/* Code mappings of a process BPF checks a munmap, mremap or MAP_FIXED
 * against one by one; a process with more is checked against their span. */
#define PYB_SYNC_RANGES 128

/*
 * Value of `maps_sync` (key: host tgid), written by user space only: the
 * generation `native_maps` was last made to match (BPF walks native stacks
 * past their leaf only while gen is this one and nothing is under way),
 * and where the code mappings it knows are (a munmap or MAP_FIXED that
 * meets none cannot touch them): n ranges, or (n 0) their span lo..hi.
 */
struct pyb_maps_sync {
	pyb_u32 gen;
	pyb_u32 n;
	pyb_u64 lo, hi;
	struct {
		pyb_u64 start, end;
	} r[PYB_SYNC_RANGES];
};

#endif
