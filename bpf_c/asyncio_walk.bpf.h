/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --async (compiled with -DPYB_ASYNC): what pyb_walk keeps so that the
 * asyncio task a thread runs can be found after the walk (asyncio.bpf.h):
 * each frame's address, and a flag on the frames that generators (and so
 * coroutines) own, from the walker's own owner test (the layout's
 * owner_generator; none before 3.11). A few instructions per frame and no
 * branch, so the frame loop's verifier states do not multiply. Without
 * PYB_ASYNC the hooks are empty.
 */
#ifndef PYB_ASYNC_WALK_BPF_H
#define PYB_ASYNC_WALK_BPF_H

#ifdef PYB_ASYNC
#define PYB_ASYNC_SCRATCH u64 frame_addr[PYB_MAX_FRAMES]; u32 task_depth, task_pad;
#define PYB_ASYNC_WALK_FRAME(s, idx, cur) ((s)->frame_addr[(idx)] = (cur))
/* other_owner: 1 unless a generator owns the frame; PYB_FRAME_GEN is 1 << 3 */
#define PYB_ASYNC_FRAME_FLAG(other_owner) | (u32)(((other_owner) ^ 1) << 3)
#else
#define PYB_ASYNC_SCRATCH
#define PYB_ASYNC_WALK_FRAME(s, idx, cur)
#define PYB_ASYNC_FRAME_FLAG(other_owner)
#endif

#endif
