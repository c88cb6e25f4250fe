/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pymem's growth mode: what bpf_c/pymem.bpf.c counts per process besides
 * the bytes by stack, shared with user space (tools/pymem_growth.c).
 */
#ifndef PYBPF_MEM_ABI_H
#define PYBPF_MEM_ABI_H

#include "py_abi.h"

/* Key: host tgid. Every field only grows (BPF adds to it). */
struct pyb_mem_totals {
	pyb_u64 faults;        /* page faults on pages not present: counted, by stack */
	pyb_u64 prot_faults;   /* faults on present pages (write-protect, copy on
				* write): not counted as growth */
	pyb_u64 kernel_faults; /* ...of the counted ones, taken in the kernel on a
				* user address (a system call writing a buffer) */
	pyb_u64 mapped;        /* bytes mapped: mmap, brk and mremap growing */
	pyb_u64 unmapped;      /* bytes unmapped: munmap, brk and mremap shrinking */
	pyb_u64 map_calls;     /* successful mmap, munmap, brk and mremap calls */
	pyb_u64 brk_unknown;   /* brk calls whose previous break was not known */
	pyb_u64 brk_last;      /* the break after the last brk seen (0: not known;
				* user space seeds it from the [heap] mapping) */
};

/* What a thread's pending mapping call was asked (key: host tid). */
struct pyb_mem_call {
	pyb_u64 len;     /* mmap: length; mremap: the new length */
	pyb_u64 old_len; /* mremap: the old length */
	pyb_u32 nr;      /* enum pyb_mem_call_nr */
	pyb_u32 pad;
};

enum pyb_mem_call_nr { PYB_MEM_MMAP = 1, PYB_MEM_MUNMAP, PYB_MEM_MREMAP };

#endif
