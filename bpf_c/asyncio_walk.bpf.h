/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --async (compiled with -DPYB_ASYNC): what pyb_walk keeps so that the
 * asyncio task a thread runs can be found after the walk (asyncio.bpf.h):
 * each frame's address, with bit 0 set when a generator (and so a
 * coroutine) owns the frame, from the walker's own owner test (the
 * layout's owner_generator; none before 3.11). Frames are 8-byte aligned,
 * so the bit is free. One store per frame and no branch, so the frame
 * loop's verifier states do not multiply. Without PYB_ASYNC the hook is
 * empty.
 */
#ifndef PYB_ASYNC_WALK_BPF_H
#define PYB_ASYNC_WALK_BPF_H

#ifdef PYB_ASYNC
/* and (asyncio.bpf.h) the task_ids key and the event, kept off the BPF stack */
#define PYB_ASYNC_SCRATCH                                                               \
	u64 frame_addr[PYB_MAX_FRAMES];                                                  \
	u32 task_depth, task_pad;                                                        \
	struct pyb_task_key task_key;                                                    \
	u64 task_name_obj; /* the running task's name (a str or an int) */               \
	struct pyb_task_event task_event;
/* the frame at cur, owned by owner; owner_gen: a generator's owner value */
#define PYB_ASYNC_WALK_FRAME(s, idx, cur, owner, owner_gen)                             \
	((s)->frame_addr[(idx)] =                                                        \
		 (cur) | ((((owner) ^ (owner_gen)) | (0 - ((owner) ^ (owner_gen)))) >> 63 ^ 1))
#else
#define PYB_ASYNC_SCRATCH
#define PYB_ASYNC_WALK_FRAME(s, idx, cur, owner, owner_gen)
#endif

#endif
