/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/open_intervals.h"
#include "abi/wait_abi.h"

#include <bcc/libbpf.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/code.h"
#include "cpython/frames.h"
#include "cpython/threads.h"
#include "sys/proc_maps.h"
#include "sys/grow.h"

struct open_seed {
	pid_t pid, tid;
	struct proc_sched sched; /* when seeded */
};

void open_intervals_init(struct open_intervals *oi, int start_fd, int counts_fd,
			 int pystacks_fd)
{
	memset(oi, 0, sizeof(*oi));
	oi->start_fd = start_fd;
	oi->counts_fd = counts_fd;
	oi->pystacks_fd = pystacks_fd;
	oi->max_us = UINT64_MAX;
}

void open_intervals_free(struct open_intervals *oi)
{
	free(oi->seeds);
	oi->seeds = NULL;
	oi->nseeds = oi->cap = 0;
}

static struct open_seed *find_seed(struct open_intervals *oi, pid_t tid)
{
	for (size_t i = 0; i < oi->nseeds; i++)
		if (oi->seeds[i].tid == tid)
			return &oi->seeds[i];
	return NULL;
}

static int remember(struct open_intervals *oi, pid_t pid, pid_t tid, const struct proc_sched *ps)
{
	struct open_seed *v = grow_room(oi->seeds, oi->nseeds, &oi->cap, 64, sizeof(*v));

	if (!v)
		return -1;
	oi->seeds = v;
	oi->seeds[oi->nseeds++] = (struct open_seed){ .pid = pid, .tid = tid, .sched = *ps };
	return 0;
}

/* Off CPU: neither running nor runnable, nor gone. */
static bool off_cpu(char state)
{
	return state && state != 'R' && state != 'Z' && state != 'X' && state != 'x';
}

/* Off CPU now, and has not run since "before" was taken. */
static bool still_off_cpu(pid_t pid, pid_t tid, const struct proc_sched *before)
{
	struct proc_sched now;

	return proc_thread_sched(pid, tid, &now) == 0 && off_cpu(now.state) &&
	       now.switches == before->switches && now.run_ns == before->run_ns;
}

/*
 * The Python stack of thread state ts as BPF would have stored it (frames
 * innermost first, each with its code object's identity), under a key of
 * its own. Returns the key, or 0 if it could not be stored.
 */
static uint64_t store_stack(struct open_intervals *oi, struct py_process *p, uint64_t ts,
			    struct pyb_stack *st, struct py_frame *frames)
{
	uint64_t key = 0x9e3779b97f4a7c15ULL ^ (uint64_t)p->pid;
	bool truncated = false;
	int n = py_frames_read(p, ts, frames, PYB_MAX_FRAMES, &truncated);

	memset(st, 0, sizeof(*st));
	st->pid = (uint32_t)p->pid;
	if (n < 0)
		return 0;
	if (truncated)
		st->flags |= PYB_STACK_TRUNCATED;
	for (int i = 0; i < n; i++) {
		struct py_code_identity id;
		struct pyb_frame *f = &st->frames[st->len];

		if ((frames[i].flags & PY_FRAME_UNREADABLE) ||
		    py_code_identity_read(p, frames[i].code, &id) < 0) {
			st->flags = (st->flags & ~(uint32_t)PYB_STACK_TRUNCATED) |
				    PYB_STACK_READ_ERROR;
			break;
		}
		f->code = frames[i].code;
		f->instr_offset = frames[i].instr_offset > INT32_MAX ? -1
							      : (int32_t)frames[i].instr_offset;
		f->flags = frames[i].flags & PY_FRAME_ENTRY ? PYB_FRAME_ENTRY : 0;
		f->ident = id.ident;
		st->len++;
		key = (key ^ f->code) * 0x100000001b3ULL;
		key = (key ^ f->ident) * 0x100000001b3ULL;
		key = (key ^ (uint32_t)f->instr_offset) * 0x100000001b3ULL;
	}
	/* apart from BPF's keys (the same stack under two keys still makes one
	 * row: rows are merged by their frames) */
	key = (key ^ st->flags ^ 0x5eed5eed5eed5eedULL) | 1;
	if (bpf_update_elem(oi->pystacks_fd, &key, st, BPF_ANY) < 0)
		return 0;
	return key;
}

/*
 * A thread off CPU now with no entry of BPF's: it has not switched out
 * since BPF was attached, so it has been off CPU since then at least; its
 * interval starts at the run's start (oi->start_ns).
 */
static void seed_thread(struct open_intervals *oi, struct py_target *t, const struct py_thread *th,
			struct pyb_stack *st, struct py_frame *frames)
{
	struct pyb_offcpu_start e = { 0 };
	struct proc_sched ps;
	uint32_t tid = (uint32_t)th->host_tid;

	if (proc_thread_sched(t->pid, th->host_tid, &ps) < 0 || !off_cpu(ps.state))
		return;
	e.seeded = 1;
	e.ts = oi->start_ns;
	e.key.pid = (uint32_t)t->pid;
	e.key.tid = tid;
	e.key.kind = PYB_KIND_BLOCKED;
	e.key.detail = PYB_WAIT_UNKNOWN; /* in a call begun before tracing */
	e.key.user_stack = PYB_STACK_ID_NONE;
	e.key.kernel_stack = PYB_STACK_ID_NONE;
	if (proc_comm(t->pid, th->host_tid, e.key.comm, sizeof(e.key.comm)) < 0)
		return;
	e.key.pystack = store_stack(oi, &t->proc, th->tstate, st, frames);
	/* the stack was read after the state: the thread must not have run
	 * in between, or the stack may be another */
	if (!still_off_cpu(t->pid, th->host_tid, &ps))
		return;
	/* BPF_NOEXIST: an entry of BPF's own (it switched out since) wins */
	if (bpf_update_elem(oi->start_fd, &tid, &e, BPF_NOEXIST) == 0)
		remember(oi, t->pid, th->host_tid, &ps);
}

size_t open_intervals_seed(struct open_intervals *oi, struct py_registry *reg, uint64_t start_ns)
{
	struct py_thread *threads = calloc(PY_MAX_THREADS, sizeof(*threads));
	struct py_frame *frames = calloc(PYB_MAX_FRAMES, sizeof(*frames));
	struct pyb_stack *st = malloc(sizeof(*st));
	size_t before = oi->nseeds;

	oi->start_ns = start_ns;
	if (!threads || !frames || !st)
		goto out;
	for (size_t i = 0; i < reg->n; i++) {
		struct py_target *t = &reg->v[i];
		int n;

		if (t->state != TARGET_ACTIVE)
			continue;
		n = py_threads_read(&t->proc, threads, PY_MAX_THREADS);
		for (int k = 0; k < n; k++) {
			if (!threads[k].host_tid ||
			    (oi->only_tid && threads[k].host_tid != oi->only_tid))
				continue;
			seed_thread(oi, t, &threads[k], st, frames);
		}
	}
out:
	free(threads);
	free(frames);
	free(st);
	return oi->nseeds - before;
}

static void add_count(struct open_intervals *oi, struct pyb_count_key key, uint64_t us)
{
	uint64_t v = 0;

	if (!us)
		return;
	bpf_lookup_elem(oi->counts_fd, &key, &v);
	v += us;
	if (bpf_update_elem(oi->counts_fd, &key, &v, BPF_ANY) < 0)
		oi->counts_lost++;
}

/* A seeded entry still there: the thread has not run since, unless it
 * switched in before the entry was put (then it is running, or it ran). */
static bool seed_still_true(struct open_intervals *oi, const struct pyb_offcpu_start *e)
{
	struct open_seed *s = find_seed(oi, (pid_t)e->key.tid);

	return s && still_off_cpu(s->pid, s->tid, &s->sched);
}

/* One interval open at the end, charged as BPF's switch-in would have. */
static void charge(struct open_intervals *oi, const struct pyb_offcpu_start *e, uint64_t end_ns)
{
	struct pyb_count_key key = e->key;
	bool woken = e->wake_ts && e->wake_ts < end_ns;
	uint64_t blocked_end = woken ? e->wake_ts : end_ns, us;

	if (e->ts >= end_ns || (oi->only_tid && (pid_t)key.tid != oi->only_tid))
		return;
	us = (blocked_end > e->ts ? blocked_end - e->ts : 0) / 1000;
	if (key.kind == PYB_KIND_RUNNABLE) {
		add_count(oi, key, (end_ns - e->ts) / 1000);
		return;
	}
	if (us < oi->min_us || us > oi->max_us)
		return;
	if (!woken)
		key.flags |= PYB_COUNT_OPEN;
	add_count(oi, key, us);
	oi->open_threads++;
	oi->open_since_start += e->seeded;
	oi->open_us += us;
	if (woken) {
		key.kind = PYB_KIND_RUNNABLE;
		add_count(oi, key, (end_ns - e->wake_ts) / 1000);
	}
}

void open_intervals_charge(struct open_intervals *oi, uint64_t end_ns)
{
	uint32_t tid, next;
	bool first = true;

	while (bpf_get_next_key(oi->start_fd, first ? NULL : &tid, &next) == 0) {
		struct pyb_offcpu_start e;

		first = false;
		tid = next;
		if (bpf_lookup_elem(oi->start_fd, &tid, &e) < 0)
			continue;
		/* closed: the thread has run since (BPF keeps the entry, to
		 * write its next interval in place) */
		if (!e.ts)
			continue;
		if (e.seeded && !seed_still_true(oi, &e))
			continue;
		/* a thread's last switch-out is its exit: it ended, not blocked */
		if (!proc_thread_exists((pid_t)e.key.pid, (pid_t)tid))
			continue;
		charge(oi, &e, end_ns);
	}
}
