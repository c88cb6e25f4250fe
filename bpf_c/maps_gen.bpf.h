/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mapping generations (struct pyb_maps_gen): a native stack is named by
 * the mappings its process had when it was walked, never by later ones.
 * Samples are counted in kernel and named later; a library unloaded and
 * another loaded at its address would otherwise name the old samples
 * after the new file, or the new ones after the old (and unwind them by
 * the old file's rows).
 *
 * Every system call of a watched process that may remove or replace a
 * mapping of code, or add code where a file's mapping may have been,
 * bumps the generation when it begins and again when it ends, and tells
 * user space (once until it has read the mappings again):
 *   - mmap of a file with PROT_EXEC, or MAP_FIXED over the known code;
 *   - munmap or mremap of, or MAP_FIXED / MREMAP_FIXED onto, the known
 *     code (struct pyb_maps_sync: each mapping, or their span);
 *   - mprotect / pkey_mprotect adding PROT_EXEC;
 *   - remap_file_pages; shmat with SHM_EXEC or SHM_REMAP.
 * An anonymous mapping of code made elsewhere (a JIT's) changes nothing
 * a file's name was given to. Compat system calls (int 0x80, below 4 GB)
 * and a CLONE_VM child that is another process are not seen.
 */
#ifndef PYBPF_MAPS_GEN_BPF_H
#define PYBPF_MAPS_GEN_BPF_H

#include "../lib/abi/native_abi.h"

BPF_HASH(maps_gen, u32, struct pyb_maps_gen, 4096);
BPF_F_TABLE("hash", u32, struct pyb_maps_sync, maps_sync, 4096, BPF_F_NO_PREALLOC);
/* threads inside a counted call (value: their process): the end bumps
 * again. Full, a call stays under way: walks stop at the leaf, never a
 * guess. */
BPF_HASH(maps_calls, u32, u32, 16384);

#define PYB_PROT_EXEC 0x4
#define PYB_MAP_FIXED 0x10
#define PYB_MAP_ANONYMOUS 0x20
#define PYB_MREMAP_FIXED 0x2
#define PYB_SHM_REMAP 040000
#define PYB_SHM_EXEC 0100000

/* Whether [addr, addr + len) meets pid's known code (all of memory when
 * user space has not said). */
static __always_inline bool pyb_meets_code(u32 pid, u64 addr, u64 len)
{
	struct pyb_maps_sync *s = maps_sync.lookup(&pid);
	u64 end = addr + len;

	if (!s || end < addr)
		return true;
	if (!s->n)
		return addr < s->hi && end > s->lo;
	for (u32 i = 0; i < PYB_SYNC_RANGES; i++) {
		if (i >= s->n)
			break;
		if (addr < s->r[i].end && end > s->r[i].start)
			return true;
	}
	return false;
}

static __always_inline void pyb_maps_tell(void *ctx, u32 pid)
{
	struct pyb_proc *proc = procs.lookup(&pid);
	struct pyb_proc_event ev = { .pid = pid, .kind = PYB_EVENT_NEW_MAPPING };

	if (proc && !(proc->flags & PYB_PROC_MAPS_STALE)) {
		proc->flags |= PYB_PROC_MAPS_STALE;
		stack_events.perf_submit(ctx, &ev, sizeof(ev));
	}
}

/* A call that may change the process's code mappings begins. */
static __always_inline int pyb_maps_enter(void *ctx, bool relevant)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct pyb_maps_gen *g;

	if (!relevant || !(g = maps_gen.lookup(&pid)))
		return 0;
	/* under way first: a reader that sees the new gen sees it busy */
	__sync_fetch_and_add(&g->busy, 1);
	__sync_fetch_and_add(&g->gen, 1);
	maps_calls.update(&tid, &pid);
	pyb_maps_tell(ctx, pid);
	return 0;
}

/* Any counted call ends (every sys_exit_* of the calls above runs this). */
TRACEPOINT_PROBE(syscalls, sys_exit_mmap)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 pid = id >> 32, tid = (u32)id;
	struct pyb_maps_gen *g;
	u32 *of = maps_calls.lookup(&tid);

	/* a thread killed inside a call left its entry; its tid reused */
	if (!of || *of != pid) {
		if (of)
			maps_calls.delete(&tid);
		return 0;
	}
	maps_calls.delete(&tid);
	g = maps_gen.lookup(&pid);
	if (!g)
		return 0;
	__sync_fetch_and_add(&g->gen, 1);
	__sync_fetch_and_add(&g->busy, -1);
	pyb_maps_tell(args, pid);
	return 0;
}

TRACEPOINT_PROBE(syscalls, sys_enter_mmap)
{
	u32 pid = bpf_get_current_pid_tgid() >> 32;

	return pyb_maps_enter(args, ((args->prot & PYB_PROT_EXEC) &&
				     !(args->flags & PYB_MAP_ANONYMOUS)) ||
					    ((args->flags & PYB_MAP_FIXED) &&
					     pyb_meets_code(pid, args->addr, args->len)));
}

TRACEPOINT_PROBE(syscalls, sys_enter_munmap)
{
	u32 pid = bpf_get_current_pid_tgid() >> 32;

	return pyb_maps_enter(args, pyb_meets_code(pid, args->addr, args->len));
}

TRACEPOINT_PROBE(syscalls, sys_enter_mremap)
{
	u32 pid = bpf_get_current_pid_tgid() >> 32;

	return pyb_maps_enter(args, pyb_meets_code(pid, args->addr, args->old_len) ||
					    ((args->flags & PYB_MREMAP_FIXED) &&
					     pyb_meets_code(pid, args->new_addr, args->new_len)));
}

TRACEPOINT_PROBE(syscalls, sys_enter_mprotect)
{
	return pyb_maps_enter(args, args->prot & PYB_PROT_EXEC);
}

TRACEPOINT_PROBE(syscalls, sys_enter_pkey_mprotect)
{
	return pyb_maps_enter(args, args->prot & PYB_PROT_EXEC);
}

TRACEPOINT_PROBE(syscalls, sys_enter_remap_file_pages)
{
	return pyb_maps_enter(args, true);
}

TRACEPOINT_PROBE(syscalls, sys_enter_shmat)
{
	return pyb_maps_enter(args, args->shmflg & (PYB_SHM_EXEC | PYB_SHM_REMAP));
}

#endif
