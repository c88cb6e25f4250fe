/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pymem --gc: what user space tells BPF of each process's gc__start and
 * gc__done probes (where their arguments are), and the collections BPF
 * logs for user space (bpf_c/pymem_gc.bpf.c, tools/pymem_gc.c).
 */
#ifndef PYBPF_GC_ABI_H
#define PYBPF_GC_ABI_H

#include "py_abi.h"

/* Where a probe argument is at its call site (lib/sys/stapsdt.h). */
enum pyb_usdt_arg_kind { PYB_USDT_REG = 0, PYB_USDT_MEM = 1, PYB_USDT_CONST = 2 };

/* x86-64 struct pt_regs: r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si
 * di orig_ax ip cs flags sp ss, 8 bytes each. */
#define PYB_PT_REGS_SLOTS 21

struct pyb_usdt_arg {
	pyb_u8 kind;      /* enum pyb_usdt_arg_kind */
	pyb_u8 reg;       /* the register's 8-byte slot in x86-64's struct pt_regs */
	pyb_u8 size;      /* 1, 2, 4 or 8 bytes */
	pyb_u8 is_signed;
	pyb_s32 value;    /* MEM: displacement; CONST: the value */
};

/* Per process: the generation argument of gc__start and the collected
 * count of gc__done. */
struct pyb_gc_probes {
	struct pyb_usdt_arg generation, collected;
};

/* One collection, from gc__start to gc__done in one thread. */
struct pyb_gc_event {
	pyb_u64 seq;      /* its index in the log + 1, written last */
	pyb_u32 pid, tid; /* host ids */
	pyb_s32 generation;
	pyb_s32 user_stack; /* native stack id (native_maps); <0 none */
	pyb_s64 collected; /* collected + uncollectable, as gc__done says */
	pyb_u64 start_ns, duration_ns; /* BPF's monotonic clock */
	pyb_u64 pystack;   /* the Python stack that triggered it; 0: none */
};

#endif
