/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/open.h"
#include "bpf/registry.h"
#include "cpython/gc_flag.h"

#include <bcc/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sys/proc_maps.h"
#include "bpf/native_maps.h"
#include "sys/exec_maps.h"
#include "sys/native_symbols.h"
#include "cpython/bpf_layout.h"
#include "cpython/frames.h"
#include "cpython/threads.h"
#include "sys/clock.h"
#include "sys/text_escape.h"
#include "sys/grow.h"

#define PENDING_RETRY_NS (20ull * 1000 * 1000)
#define PENDING_GIVE_UP_NS (3ull * 1000 * 1000 * 1000)
/* A running process (not one that just exec'd) gets this long of retries:
 * its threads may come and go while it is validated. */
#define SETTLED_RETRY_NS (500ull * 1000 * 1000)
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* Linux 5.3, the same number on every architecture */
#endif
/* pidfds kept open at most: the descriptor limit is shared with /proc reads */
#define MAX_PIDFDS 256
#define SEED_EVERY_NS (1000ull * 1000 * 1000)
#define CHECK_EVERY_NS (1000ull * 1000 * 1000)
/* A waiting target (no Python frame yet) is checked again after 20 ms,
 * then less and less often, up to 5 times a second: its first Python code
 * goes unsampled for at most that long (a check costs about 0.2 ms of CPU:
 * 1 ms a second per waiting process). */
#define WAITING_RETRY_MAX_NS (200ull * 1000 * 1000)

void registry_init(struct py_registry *r, const char *tool, int procs_fd, int layouts_fd,
		   const pid_t *only, size_t nonly)
{
	memset(r, 0, sizeof(*r));
	r->tool = tool;
	r->procs_fd = procs_fd;
	r->layouts_fd = layouts_fd;
	r->tstates_fd = -1;
	r->named_fd = -1;
	r->only = only;
	r->nonly = nonly;
	code_names_init(&r->names);
}

void registry_free(struct py_registry *r)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].pidfd >= 0)
			close(r->v[i].pidfd);
	}
	free(r->v);
	free(r->followed);
	native_symbols_free(r->nsyms);
	r->nsyms = NULL;
	code_names_free(&r->names);
	memset(r, 0, sizeof(*r));
}

struct py_target *registry_find(struct py_registry *r, pid_t pid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].pid == pid)
			return &r->v[i];
	return NULL;
}

size_t registry_count(const struct py_registry *r, enum py_target_state state)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].state == state;
	return n;
}

/* On the -p list. */
static bool listed(const struct py_registry *r, pid_t pid)
{
	for (size_t i = 0; i < r->nonly; i++)
		if (r->only[i] == pid)
			return true;
	return false;
}

static bool wanted(const struct py_registry *r, pid_t pid)
{
	if (!r->only || listed(r, pid))
		return true;
	for (size_t i = 0; i < r->nfollowed; i++)
		if (r->followed[i] == pid)
			return true;
	return false;
}

int registry_follow(struct py_registry *r, pid_t pid)
{
	if (wanted(r, pid))
		return 0;
	pid_t *v = grow_room(r->followed, r->nfollowed, &r->cap_followed, 64, sizeof(*v));

	if (!v)
		return -1;
	r->followed = v;
	r->followed[r->nfollowed++] = pid;
	return 0;
}

static int layout_id(struct py_registry *r, const struct py_process *p)
{
	struct pyb_layout l;

	py_bpf_layout(p, &l);
	for (int i = 0; i < r->nlayouts; i++)
		if (memcmp(&r->layouts[i], &l, sizeof(l)) == 0)
			return i;
	/* the walker reads a frame, and the fields of its code object, in
	 * one read each, into buffers of 128 and PYB_CODE_SPAN_MAX bytes */
	if (r->nlayouts == PYB_MAX_LAYOUTS || l.frame_span > 128 ||
	    l.cw_span >= PYB_CODE_SPAN_MAX || l.bytes_data < l.bytes_size ||
	    l.bytes_data - l.bytes_size > 24)
		return -1;
	r->layouts[r->nlayouts] = l;
	if (bpf_update_elem(r->layouts_fd, &r->nlayouts, &l, 0) < 0)
		return -1;
	return r->nlayouts++;
}

/* Lets BPF say again that a walk met code in no known file. */
static void clear_maps_stale(struct py_registry *r, struct py_target *t)
{
	struct pyb_proc cfg;
	uint32_t key = (uint32_t)t->pid;

	t->maps_stale_ns = 0;
	if (bpf_lookup_elem(r->procs_fd, &key, &cfg) == 0 && (cfg.flags & PYB_PROC_MAPS_STALE)) {
		cfg.flags &= ~(uint32_t)PYB_PROC_MAPS_STALE;
		bpf_update_elem(r->procs_fd, &key, &cfg, BPF_EXIST);
	}
}

/*
 * One read of t's mappings of code makes BPF's trie and the names of its
 * native frames: the generation counted before the read and after it the
 * same, with no change under way, vouches for both (the trie is then said
 * to match it, and the names are kept as that generation's). *moved: the
 * generation was not the one the trie matched. Returns how many mappings
 * changed, or -1 if the process cannot be read.
 */
static int sync_native(struct py_registry *r, struct py_target *t, bool *moved)
{
	struct exec_maps em;
	uint32_t g1 = 0, g2 = 0;
	bool stable;
	int changed;

	*moved = native_maps_gen_moved(r->native, t->pid);
	stable = native_maps_gen(r->native, t->pid, &g1) == 0;
	if (exec_maps_read(t->pid, &em) < 0 || !em.n) {
		exec_maps_free(&em);
		return -1; /* gone: what was read of it still names its frames */
	}
	changed = native_maps_sync(r->native, &t->proc, &em);
	stable = stable && native_maps_gen(r->native, t->pid, &g2) == 0 && g1 == g2;
	if (stable)
		native_maps_set_synced(r->native, t->pid, g1);
	if (!r->nsyms)
		r->nsyms = native_symbols_new();
	native_symbols_set_maps(r->nsyms, t->pid, &em, stable ? (int64_t)g1 : NATIVE_GEN_LATEST);
	return changed;
}

int registry_native_refresh(struct py_registry *r, pid_t pid)
{
	struct py_target *t = registry_find(r, pid);
	int total = 0;

	if (!t || t->state != TARGET_ACTIVE || !r->native || !t->native)
		return 0;
	/* a few rounds while changes keep coming; then BPF says again */
	for (int round = 0; round < 4; round++) {
		bool moved;
		int changed = sync_native(r, t, &moved);

		if (changed < 0)
			break;
		total += changed;
		if (!changed && !moved && !native_maps_gen_moved(r->native, pid)) {
			/* JIT code or anonymous memory: not asked again for a second */
			t->maps_stale_ns = monotonic_ns();
			return 0;
		}
		clear_maps_stale(r, t);
		if (!native_maps_gen_moved(r->native, pid))
			break;
	}
	/* named by the new maps, read while it lives: a process that exits
	 * before the report can no longer be read */
	native_symbols_preload(r->nsyms, pid);
	return total;
}

static int register_bpf(struct py_registry *r, struct py_target *t)
{
	struct pyb_proc cfg = { 0 };
	char path[64];
	struct stat self_ns, ns;
	uint32_t key = (uint32_t)t->pid;

	t->layout = layout_id(r, &t->proc);
	if (t->layout < 0)
		return -1;
	cfg.runtime_addr = t->proc.runtime_addr;
	cfg.layout = (uint32_t)t->layout;
	cfg.pthread_tid_offset = t->proc.pthread_tid_offset;
	/* where native walks may stop: the eval loop (all of it, or none) */
	if (t->proc.eval_ranges <= PYB_EVAL_RANGES)
		for (int i = 0; i < t->proc.eval_ranges; i++) {
			cfg.eval_start[i] = t->proc.eval_code[i].start;
			cfg.eval_end[i] = t->proc.eval_code[i].end;
		}
	/* its files' unwind rows first: BPF walks only what it can read */
	t->native = false;
	if (r->native) {
		bool moved;

		native_maps_forget(r->native, t->pid);
		native_maps_watch(r->native, t->pid);
		/* the program's names before an exec are not this one's */
		native_symbols_forget(r->nsyms, t->pid);
		t->native = sync_native(r, t, &moved) > 0;
		/* Until its code ranges are known, any munmap of the process
		 * counts as a change, and the first read (building the
		 * files' tables) is slow: one of a process that unmaps memory
		 * often is seldom stable. Walks stay leaf-only until one is;
		 * the next reads are quick. */
		for (int round = 0; t->native && round < 3 &&
				    native_maps_gen_moved(r->native, t->pid);
		     round++)
			if (sync_native(r, t, &moved) < 0)
				break;
		if (t->native)
			cfg.flags |= PYB_PROC_NATIVE_STACKS;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)t->pid);
	if (stat("/proc/self/ns/pid", &self_ns) == 0 && stat(path, &ns) == 0 &&
	    (ns.st_ino != self_ns.st_ino || ns.st_dev != self_ns.st_dev)) {
		cfg.flags |= PYB_PROC_OTHER_PIDNS;
		cfg.pidns_dev = (uint64_t)ns.st_dev;
		cfg.pidns_ino = (uint64_t)ns.st_ino;
	}
	if (r->gc_flag && py_gc_flag_locate(&t->proc, &t->gc_collecting, &t->gc_gil, t->gc_why,
			      sizeof(t->gc_why)) == 0) {
		cfg.gc_collecting = t->gc_collecting;
		cfg.gc_gil = t->gc_gil;
	}
	/* what the tool keeps beside it (the GIL's address) first: BPF sees
	 * the process whole from its first event */
	if (r->on_active)
		r->on_active(r->on_active_ctx, t);
	return bpf_update_elem(r->procs_fd, &key, &cfg, 0);
}

/*
 * A process is gone when /proc says so: a read that found no process may
 * have raced with a thread's end, and a process that exits makes any
 * check fail (its memory goes first). A Python we could not have read
 * anyway is still reported as such.
 */
bool registry_failure_is_exit(const struct py_process *p)
{
	return p->fail != PY_FAIL_NONE && p->fail != PY_FAIL_UNSUPPORTED && !proc_alive(p->pid);
}

/* Failures that will not go away by waiting. */
static bool final_failure(const struct py_process *p)
{
	return p->fail == PY_FAIL_UNSUPPORTED || registry_failure_is_exit(p);
}

bool registry_failure_may_pass(const struct py_process *p)
{
	return !final_failure(p) && p->fail != PY_FAIL_NOT_PYTHON;
}

void registry_note_ended(struct py_registry *r, const struct py_process *p, const char *comm)
{
	if (p->comm[0])
		comm = p->comm;
	r->ended_early++;
	if (r->verbose)
		fprintf(stderr, "%s: PID %d%s%s%s: ended before it could be profiled (%s)\n",
			r->tool, (int)p->pid, comm && comm[0] ? " (" : "", TEXT_ESC(comm ? comm : ""),
			comm && comm[0] ? ")" : "", TEXT_ESC(p->err));
}

/* Number of OS threads of pid, or 0: procfs gives /proc/PID/task two
 * links and one more per thread (a stat, not a file to read and parse). */
static long os_threads(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (stat(path, &st) < 0 || st.st_nlink < 2)
		return 0;
	return (long)st.st_nlink - 2;
}

/*
 * BPF finds a thread's state by walking the interpreter's list of them,
 * PYB_MAX_THREAD_SCAN deep, and caches what it found. New threads join
 * the list at its head, so in a process with more threads than that the
 * oldest ones (often the busy ones, started first) would never be found:
 * for such processes user space, which can walk the whole list, fills the
 * cache itself, once a second. BPF checks each entry before use.
 */
/* Its BPF entry stays: samples may be in flight. */
static void close_pidfd(struct py_registry *r, struct py_target *t)
{
	if (t->pidfd >= 0) {
		close(t->pidfd);
		t->pidfd = -1;
		r->npidfds--;
	}
}

static void mark_exited(struct py_registry *r, struct py_target *t)
{
	t->state = TARGET_GONE;
	r->exited++;
	close_pidfd(r, t);
	if (r->native) /* its pid may come back as another program */
		native_maps_forget(r->native, t->pid);
}

static int by_host_tid(const void *a, const void *b)
{
	const struct py_thread *x = a, *y = b;

	return (x->host_tid > y->host_tid) - (x->host_tid < y->host_tid);
}

/*
 * Hands BPF the thread state of each of t's threads (tstates), so that
 * the first sample of a thread need not search the interpreter's list.
 * Once as a process is activated, whatever its size: a host-wide run meets
 * hundreds of processes at once, and each search reads two words of every
 * thread state before the match, cold (a thread started later is searched
 * for by BPF). Again every SEED_EVERY_NS while the process has more
 * threads than BPF's search covers.
 */
static void seed_thread_states(struct py_registry *r, struct py_target *t, uint64_t now,
			       bool activated)
{
	struct py_thread *threads;
	int n;

	if (r->tstates_fd < 0 || (!activated && now - t->last_seed_ns < SEED_EVERY_NS))
		return;
	t->last_seed_ns = now;
	t->many_threads = os_threads(t->pid) > PYB_MAX_THREAD_SCAN / 2;
	if (!t->many_threads && !activated)
		return;
	threads = malloc(PY_MAX_THREADS * sizeof(*threads));
	if (!threads)
		return;
	n = py_threads_read(&t->proc, threads, PY_MAX_THREADS);
	if (n > 0)
		qsort(threads, (size_t)n, sizeof(*threads), by_host_tid);
	for (int i = 0; i < n;) {
		uint32_t tid = (uint32_t)threads[i].host_tid;
		uint64_t ts = threads[i].tstate, frame = 0;
		int end = i + 1;

		/* a thread with a state in several interpreters: the one with a
		 * frame, as BPF prefers */
		while (end < n && threads[end].host_tid == threads[i].host_tid)
			end++;
		for (int k = i; end - i > 1 && k < end; k++)
			if (py_frames_first(&t->proc, threads[k].tstate, &frame) == 0 && frame) {
				ts = threads[k].tstate;
				break;
			}
		if (tid && ts)
			bpf_update_elem(r->tstates_fd, &tid, &ts, 0);
		i = end;
	}
	free(threads);
}

/* -v: how the process was recognised. */
static void say_recognised(const struct py_registry *r, const struct py_target *t)
{
	const struct py_process *p = &t->proc;

	fprintf(stderr, "%s: PID %d (%s): CPython %s%s, %s, offsets from %s%s%s\n", r->tool,
		(int)t->pid, TEXT_ESC(p->comm), p->version_str,
		p->free_threaded ? " (free-threaded)" : "", TEXT_ESC(p->interp_path),
		py_offsets_source_name(p->source), p->notes[0] ? "; " : "", TEXT_ESC(p->notes));
}

static void activate(struct py_registry *r, struct py_target *t, uint64_t now)
{
	const char *unwalkable = py_rules_bpf_refusal(t->proc.rules);

	if (unwalkable) {
		t->state = TARGET_REFUSED;
		py_process_fail(&t->proc, PY_FAIL_UNSUPPORTED, "Python %s%s: %s", t->proc.version_str,
				t->proc.free_threaded ? "t" : "", unwalkable);
		r->refused++;
		return;
	}
	if (register_bpf(r, t) < 0) {
		t->state = TARGET_REFUSED;
		py_process_fail(&t->proc, PY_FAIL_UNSUPPORTED, "cannot register with BPF");
		r->refused++;
		return;
	}
	t->state = TARGET_ACTIVE;
	t->active_since_ns = now;
	/* the same process after an exec keeps its pidfd */
	if (t->pidfd < 0 && r->npidfds < MAX_PIDFDS) {
		t->pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
		r->npidfds += t->pidfd >= 0;
	}
	t->activations++;
	seed_thread_states(r, t, now, true);
	r->active_ever++;
	t->maps_stale_ns = 0;
	if (r->native && !t->native)
		r->no_native++;
	if (r->verbose)
		say_recognised(r, t);
}

/* No thread runs Python code: nothing checked the frame and code offsets.
 * Wait for one, checking less and less often (a process that is starting
 * up runs its first code soon: every 20 ms while it is young). */
static void wait_for_frames(struct py_registry *r, struct py_target *t, uint64_t now)
{
	bool young = t->starting && now - t->first_seen_ns < PENDING_GIVE_UP_NS;

	if (t->state != TARGET_WAITING) {
		t->state = TARGET_WAITING;
		t->retry_ns = PENDING_RETRY_NS;
		if ((r->only || (r->verbose && !young)) && !t->reported) {
			fprintf(stderr, "%s: PID %d (%s): %s; waiting until one does\n", r->tool,
				(int)t->pid, TEXT_ESC(t->proc.comm), TEXT_ESC(t->proc.err));
			t->reported = true;
		}
	} else if (t->retry_ns < WAITING_RETRY_MAX_NS && !young) {
		t->retry_ns *= 2;
	}
}

static void try_target(struct py_registry *r, struct py_target *t)
{
	uint64_t now = monotonic_ns();
	int rc;

	t->last_try_ns = now;
	/* waiting: the binary is known, only the check against memory is due */
	rc = t->state == TARGET_WAITING ? py_process_choose(&t->proc, &t->cand)
					: py_process_open_keep(&t->proc, t->pid, &t->cand);
	t->seen_python |= t->proc.interp_path[0] != '\0';
	if (rc == 0) {
		activate(r, t, now);
	} else if (registry_failure_is_exit(&t->proc)) {
		t->state = TARGET_GONE;
		if (listed(r, t->pid) && !t->reported) {
			fprintf(stderr, "%s: PID %d: %s; skipped\n", r->tool, (int)t->pid,
				TEXT_ESC(t->proc.err));
			t->reported = true;
		} else if (!r->only && t->seen_python && !t->ended_counted) {
			registry_note_ended(r, &t->proc, t->exec_comm);
			t->ended_counted = true;
		}
	} else if (t->proc.fail == PY_FAIL_NO_FRAMES) {
		wait_for_frames(r, t, now);
	} else if (t->proc.fail == PY_FAIL_GONE) {
		t->state = TARGET_PENDING; /* in exit, not a zombie yet: gone in a moment */
	} else if (final_failure(&t->proc) || now - t->first_seen_ns > PENDING_GIVE_UP_NS ||
		   (!t->starting && !registry_failure_may_pass(&t->proc))) {
		bool python = t->proc.fail != PY_FAIL_NOT_PYTHON;

		t->state = python ? TARGET_REFUSED : TARGET_NOT_PYTHON;
		r->refused += python;
	} else {
		t->state = TARGET_PENDING;
	}
	if (t->state != TARGET_ACTIVE)
		close_pidfd(r, t);
	/* Say why a Python process (or one the user named) is not profiled. */
	if ((t->state == TARGET_REFUSED || (t->state == TARGET_NOT_PYTHON && listed(r, t->pid))) &&
	    !t->reported) {
		fprintf(stderr, "%s: PID %d (%s): %s; skipped\n", r->tool, (int)t->pid,
			TEXT_ESC(t->proc.comm), TEXT_ESC(t->proc.err));
		t->reported = true;
	}
}

void registry_consider(struct py_registry *r, pid_t pid, bool young, const char *comm)
{
	struct py_target *t = registry_find(r, pid);

	if (!wanted(r, pid))
		return;
	if (t) {
		if (t->state == TARGET_ACTIVE && !young)
			return;
		/* exec'd into something new: look again from scratch */
		if (t->state == TARGET_ACTIVE) {
			uint32_t key = (uint32_t)pid;

			bpf_delete_elem(r->procs_fd, &key);
		}
	} else {
		struct py_target *v = grow_room(r->v, r->n, &r->cap, 64, sizeof(*v));

		if (!v)
			return;
		r->v = v;
		t = &r->v[r->n++];
		memset(t, 0, sizeof(*t));
		t->pid = pid;
		t->pidfd = -1;
	}
	if (t->state == TARGET_WAITING) /* exec'd: its binary is to be read again */
		t->state = TARGET_PENDING;
	t->first_seen_ns = monotonic_ns();
	t->starting = young;
	if (!young) /* not starting up: a short while of retries is enough */
		t->first_seen_ns -= PENDING_GIVE_UP_NS - SETTLED_RETRY_NS;
	t->reported = false;
	snprintf(t->exec_comm, sizeof(t->exec_comm), "%s", comm ? comm : "");
	/* a system-wide scan looks at processes with python in a file name;
	 * an exec of a python* program is one too, even if it ends first */
	t->seen_python = (!young && !r->only) || strncmp(t->exec_comm, "python", 6) == 0;
	try_target(r, t);
}

void registry_tick(struct py_registry *r)
{
	uint64_t now = monotonic_ns();

	for (size_t i = 0; i < r->n; i++) {
		struct py_target *t = &r->v[i];

		if ((t->state == TARGET_PENDING && now - t->last_try_ns >= PENDING_RETRY_NS) ||
		    (t->state == TARGET_WAITING && now - t->last_try_ns >= t->retry_ns)) {
			try_target(r, t);
		} else if (t->state == TARGET_ACTIVE && now >= t->next_check_ns) {
			/* once a second: every event wakes a turn, and a host-wide
			 * run has hundreds of targets */
			t->next_check_ns = now + CHECK_EVERY_NS;
			if (t->pidfd < 0 && !proc_alive(t->pid)) {
				mark_exited(r, t);
				continue;
			}
			seed_thread_states(r, t, now, false);
			if (t->maps_stale_ns && now - t->maps_stale_ns >= 1000000000ULL)
				clear_maps_stale(r, t);
			/* a change BPF could not announce (it had, and we were
			 * reading): read again */
			if (t->native && r->native && native_maps_gen_moved(r->native, t->pid))
				registry_native_refresh(r, t->pid);
		}
	}
}

int registry_turn_ms(const struct py_registry *r)
{
	int ms = REGISTRY_IDLE_TURN_MS;
	uint64_t now = monotonic_ns();

	for (size_t i = 0; i < r->n; i++) {
		const struct py_target *t = &r->v[i];

		if (t->state == TARGET_PENDING)
			return (int)(PENDING_RETRY_NS / 1000000);
		if (t->state == TARGET_WAITING) {
			uint64_t due = t->last_try_ns + t->retry_ns;
			int in_ms = due > now ? (int)((due - now + 999999) / 1000000) : 1;

			if (in_ms < ms)
				ms = in_ms;
		}
		if (t->state == TARGET_ACTIVE && (t->pidfd < 0 || t->many_threads) &&
		    ms > (int)(SEED_EVERY_NS / 1000000))
			ms = (int)(SEED_EVERY_NS / 1000000);
	}
	return ms;
}

int registry_exit_fds(const struct py_registry *r, struct pollfd *fds, int max)
{
	int n = 0;

	for (size_t i = 0; i < r->n && n < max; i++) {
		if (r->v[i].state != TARGET_ACTIVE || r->v[i].pidfd < 0)
			continue;
		fds[n].fd = r->v[i].pidfd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		n++;
	}
	return n;
}

void registry_note_exits(struct py_registry *r, const struct pollfd *fds, int n)
{
	for (int k = 0; k < n; k++) {
		if (!fds[k].revents)
			continue;
		for (size_t i = 0; i < r->n; i++)
			if (r->v[i].state == TARGET_ACTIVE && r->v[i].pidfd == fds[k].fd)
				mark_exited(r, &r->v[i]);
	}
}

/*
 * Cheap first look for a system-wide scan: the executable or a mapped file
 * is called python* or libpython*. Reading symbols of every binary on the
 * machine would cost far more.
 */
static bool maybe_python(pid_t pid)
{
	struct proc_maps maps;
	bool found = false;

	if (proc_maps_read(pid, &maps) < 0)
		return false;
	for (size_t i = 0; i < maps.n && !found; i++) {
		const char *base = proc_map_basename(&maps.v[i]);

		found = strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0;
	}
	proc_maps_free(&maps);
	return found;
}

void registry_scan(struct py_registry *r)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid())
			continue;
		if (!registry_find(r, (pid_t)pid) && (r->only || maybe_python((pid_t)pid)))
			registry_consider(r, (pid_t)pid, false, NULL);
	}
	closedir(d);
}
