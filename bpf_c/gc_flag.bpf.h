/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether the current thread of a registered process runs a collection
 * now: the main interpreter's `collecting` flag is set and the thread
 * holds the GIL (lib/cpython/gc_flag.h; the addresses are 0 where user
 * space could not check them, and then nothing is marked).
 */
#ifndef PYB_GC_FLAG_BPF_H
#define PYB_GC_FLAG_BPF_H

static __always_inline bool pyb_collecting(struct pyb_proc *proc, struct pyb_layout *L,
					   u32 host_tid)
{
	u64 gil = proc->gc_gil, holder;

	if (!proc->gc_collecting || !gil || pyb_read_s32(proc->gc_collecting) != 1)
		return false;
	holder = pyb_read_u64(gil + L->gil_last_holder);
	return holder && pyb_read_s32(gil + L->gil_locked) == 1 &&
	       pyb_tstate_tid(proc, L, holder) == pyb_ns_tid(proc, host_tid);
}

#endif
