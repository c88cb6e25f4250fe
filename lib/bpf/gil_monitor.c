/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/gil_monitor.h"

#include <bcc/libbpf.h>
#include <stdlib.h>
#include <string.h>

#include "sys/proc_maps.h"
#include "sys/clock.h"
#include "cpython/gil.h"
#include "cpython/gil_locate.h"
#include "cpython/threads.h"

#define THREADS_EVERY_NS (100ull * 1000 * 1000)
#define GIL_RETRY_NS (500ull * 1000 * 1000)

void gil_monitor_init(struct gil_monitor *m, const char *tool, int gils_fd, int threads_fd,
		      int waits_fd, int hists_fd)
{
	memset(m, 0, sizeof(*m));
	m->tool = tool;
	m->gils_fd = gils_fd;
	m->threads_fd = threads_fd;
	m->waits_fd = waits_fd;
	m->hists_fd = hists_fd;
	m->counts_fd = -1;
}

void gil_monitor_free(struct gil_monitor *m)
{
	free(m->procs);
	free(m->threads);
	memset(m, 0, sizeof(*m));
}

size_t gil_monitor_count(const struct gil_monitor *m)
{
	return m->nprocs;
}

static struct gil_proc_info *find_proc(struct gil_monitor *m, pid_t pid)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

static struct gil_thread_info *find_thread(struct gil_monitor *m, pid_t tid)
{
	for (size_t i = 0; i < m->nthreads; i++)
		if (m->threads[i].tid == tid)
			return &m->threads[i];
	return NULL;
}

static struct gil_thread_info *add_thread(struct gil_monitor *m, pid_t pid, pid_t tid)
{
	struct gil_thread_info *t;

	if (m->nthreads == m->cap_threads) {
		size_t cap = m->cap_threads ? m->cap_threads * 2 : 64;
		struct gil_thread_info *v = realloc(m->threads, cap * sizeof(*v));

		if (!v)
			return NULL;
		m->threads = v;
		m->cap_threads = cap;
	}
	t = &m->threads[m->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	return t;
}

/*
 * A new target, or (p set) a new program in a known one after an exec: find
 * its GIL, check it, tell BPF. A failure that may pass (a read that
 * failed) is tried again on the next turns for GIL_RETRY_NS after the
 * target became active; a process that ended first is counted with the
 * others that did (registry_note_ended); other refusals are printed. An
 * exec'd program's GIL is another (at another address, its hand-over count
 * starting again): its hand-overs add to the process's count.
 */
static void adopt(struct gil_monitor *m, struct py_registry *reg, struct py_target *t,
		  uint64_t now, struct gil_proc_info *p)
{
	struct py_gil_state st;
	uint64_t addr;
	uint32_t key = (uint32_t)t->pid;
	bool fresh = !p;
	int rc;

	if (fresh) {
		if (m->nprocs == m->cap_procs) {
			size_t cap = m->cap_procs ? m->cap_procs * 2 : 16;
			struct gil_proc_info *v = realloc(m->procs, cap * sizeof(*v));

			if (!v)
				return;
			m->procs = v;
			m->cap_procs = cap;
		}
		p = &m->procs[m->nprocs];
		memset(p, 0, sizeof(*p));
		p->pid = t->pid;
	}
	rc = py_gil_locate(&t->proc, &addr);
	if (rc == 0 && py_gil_read(&t->proc, addr, &st) < 0)
		rc = py_process_fail(&t->proc, proc_alive(t->pid) ? PY_FAIL_TRANSIENT : PY_FAIL_GONE,
				     "cannot read the GIL state");
	if (rc == 0 && bpf_update_elem(m->gils_fd, &key, &addr, 0) < 0)
		rc = py_process_fail(&t->proc, PY_FAIL_UNSUPPORTED, "cannot hand the GIL to BPF");
	if (rc < 0) {
		if (t->proc.fail == PY_FAIL_TRANSIENT && proc_alive(t->pid) &&
		    now - t->active_since_ns < GIL_RETRY_NS)
			return; /* not remembered: tried again next turn */
		p->activation = t->activations;
		if (!reg->only && registry_failure_is_exit(&t->proc))
			registry_note_ended(reg, &t->proc, t->exec_comm);
		else
			fprintf(stderr, "%s: PID %d (%s, Python %d.%d%s): %s; skipped\n", m->tool,
				(int)t->pid, t->proc.comm, t->proc.version.major,
				t->proc.version.minor, t->proc.free_threaded ? "t" : "",
				t->proc.err);
		if (!fresh)
			bpf_delete_elem(m->gils_fd, &key); /* the old program's GIL */
		p->gone = true;
		p->gil = 0;
		m->refused++;
		m->free_threaded += t->proc.free_threaded;
		if (fresh)
			m->nprocs++; /* remembered, so it is not tried again */
		return;
	}
	p->activation = t->activations;
	snprintf(p->comm, sizeof(p->comm), "%.15s", t->proc.comm);
	snprintf(p->version, sizeof(p->version), "%d.%d.%d", t->proc.version.major,
		 t->proc.version.minor, t->proc.version.micro);
	if (p->gil) {
		uint64_t total = p->switch_last - p->switch_first;
		uint64_t since = p->switch_last - p->switch_prev;

		p->switch_first = st.switch_number - total;
		p->switch_prev = st.switch_number - since;
		p->switch_last = st.switch_number;
	} else {
		p->switch_first = p->switch_last = p->switch_prev = st.switch_number;
		p->first_ns = p->last_ns = p->prev_ns = now;
	}
	p->gil = addr;
	p->gone = false;
	p->interval_us = st.interval_us;
	if (fresh)
		m->nprocs++;
}

static void refresh_threads(struct gil_monitor *m, struct py_target *t, uint64_t now)
{
	struct py_thread *v = calloc(PY_MAX_THREADS, sizeof(*v));
	int n;

	if (!v)
		return;
	n = py_threads_read(&t->proc, v, PY_MAX_THREADS);
	for (int i = 0; i < n; i++) {
		struct gil_thread_info *ti;

		if (!v[i].host_tid || (m->only_tid && v[i].host_tid != m->only_tid))
			continue;
		ti = find_thread(m, v[i].host_tid);
		if (!ti) {
			ti = add_thread(m, t->pid, v[i].host_tid);
			if (!ti)
				break;
			ti->first_ns = now;
			ti->prev_wall_ns = 0;
		}
		ti->tstate = v[i].tstate;
		ti->last_ns = now;
		proc_comm(t->pid, v[i].host_tid, ti->comm, sizeof(ti->comm));
	}
	free(v);
}

/* One look at the GIL: who holds it, how many hand-overs so far. */
static void sample_gil(struct gil_monitor *m, struct gil_proc_info *p, struct py_target *t,
		       uint64_t now)
{
	struct py_gil_state st;

	if (py_gil_read(&t->proc, p->gil, &st) < 0)
		return;
	/* The count only grows: one that went back is another program's GIL
	 * at the same address (an exec the registry has not seen yet, e.g. the
	 * same non-PIE interpreter). Its numbers wait for the re-adoption. */
	if (st.switch_number < p->switch_last)
		return;
	p->samples++;
	p->switch_last = st.switch_number;
	p->last_ns = now;
	if (st.locked != 1)
		return;
	for (size_t i = 0; i < m->nthreads; i++)
		if (m->threads[i].pid == p->pid && m->threads[i].tstate == st.last_holder) {
			m->threads[i].hold_samples++;
			break;
		}
}

void gil_monitor_tick(struct gil_monitor *m, struct py_registry *reg)
{
	uint64_t now = monotonic_ns();
	bool list_threads = now - m->last_threads_ns >= THREADS_EVERY_NS;

	for (size_t i = 0; i < reg->n; i++) {
		struct py_target *t = &reg->v[i];
		struct gil_proc_info *p = find_proc(m, t->pid);

		if (t->state != TARGET_ACTIVE) {
			if (p)
				p->gone = true;
			continue;
		}
		if (!p || p->activation != t->activations) {
			adopt(m, reg, t, now, p);
			p = find_proc(m, t->pid);
			list_threads = true;
		}
		if (!p || !p->gil)
			continue;
		if (list_threads)
			refresh_threads(m, t, now);
		sample_gil(m, p, t, now);
	}
	if (list_threads)
		m->last_threads_ns = now;
}

/* Adds (or, negative, takes) us to the count of key; an emptied count goes. */
static void count_add(int counts_fd, struct pyb_count_key key, int64_t us)
{
	uint64_t v = 0;

	bpf_lookup_elem(counts_fd, &key, &v);
	v = us < 0 && (uint64_t)-us >= v ? 0 : v + (uint64_t)us;
	if (v)
		bpf_update_elem(counts_fd, &key, &v, BPF_ANY);
	else
		bpf_delete_elem(counts_fd, &key);
}

/*
 * An episode still open when the run ended: its futex wait in progress
 * counts up to the end (or to its wakeup), and if the thread was still
 * waiting (in a wait, or between the timed waits of one), the whole
 * episode moves to stacks flagged PYB_COUNT_OPEN ("[still waiting for the
 * GIL]").
 */
static void close_open_episode(struct gil_monitor *m, struct pyb_gil_wait *w,
			       struct gil_thread_info *t, uint64_t end)
{
	uint64_t until = w->woken_ts > w->enter_ts && w->woken_ts < end ? w->woken_ts : end;
	uint64_t now_us = w->enter_ts && until > w->enter_ts ? (until - w->enter_ts) / 1000 : 0;
	bool waiting = w->enter_ts || (w->last_exit && end - w->last_exit < GIL_EPISODE_GAP_NS);

	if (t) {
		t->now.episodes++;
		t->now.wait_us += now_us;
	}
	if (m->counts_fd < 0)
		return;
	if (w->holder.pystack)
		count_add(m->counts_fd, w->holder, (int64_t)now_us);
	if (waiting) {
		struct pyb_count_key open = w->key;

		open.flags |= PYB_COUNT_OPEN;
		count_add(m->counts_fd, w->key, -(int64_t)w->episode_us);
		count_add(m->counts_fd, open, (int64_t)(w->episode_us + now_us));
		m->still_waiting++;
	} else {
		count_add(m->counts_fd, w->key, (int64_t)now_us);
	}
	w->episode_us += now_us;
}

/* BPF's counts, plus episodes still open (they end with the run). */
static void read_counts(struct gil_monitor *m, bool final)
{
	uint64_t end = m->end_ns ? m->end_ns : monotonic_ns();
	uint32_t key, next;
	bool first = true;

	while (bpf_get_next_key(m->threads_fd, first ? NULL : &key, &next) == 0) {
		struct gil_thread_info *t;
		struct pyb_gil_thread c;

		first = false;
		key = next;
		if (bpf_lookup_elem(m->threads_fd, &key, &c) < 0)
			continue;
		t = find_thread(m, (pid_t)key);
		if (!t && (!m->only_tid || (pid_t)key == m->only_tid)) {
			/* waited, but exited before a thread listing saw it */
			t = add_thread(m, (pid_t)c.pid, (pid_t)key);
			if (t)
				snprintf(t->comm, sizeof(t->comm), "?");
		}
		if (t)
			t->now = c;
	}
	if (!final)
		return;
	first = true;
	while (bpf_get_next_key(m->waits_fd, first ? NULL : &key, &next) == 0) {
		struct gil_proc_info *p;
		struct pyb_gil_wait w;

		first = false;
		key = next;
		if (bpf_lookup_elem(m->waits_fd, &key, &w) < 0 || !w.episode_start)
			continue;
		close_open_episode(m, &w, find_thread(m, (pid_t)key), end);
		p = find_proc(m, (pid_t)w.key.pid);
		if (p)
			log2_hist_add(&p->hist, w.episode_us, 1);
	}
}

static void read_histograms(struct gil_monitor *m)
{
	struct pyb_hist_key key, next;
	bool first = true;

	while (bpf_get_next_key(m->hists_fd, first ? NULL : &key, &next) == 0) {
		struct gil_proc_info *p;
		uint64_t count;

		first = false;
		key = next;
		if (key.slot >= LOG2_HIST_SLOTS || bpf_lookup_elem(m->hists_fd, &key, &count) < 0)
			continue;
		p = find_proc(m, (pid_t)key.pid);
		if (p)
			p->hist.slots[key.slot] += count;
	}
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* A share, or "-" over a window too short for one (or an unknown one). */
static void share(char *buf, size_t len, uint64_t part, uint64_t whole, bool known)
{
	if (known)
		snprintf(buf, len, "%.1f%%", pct(part, whole));
	else
		snprintf(buf, len, "-");
}

/* What one thread did in the window shown. */
struct thread_window {
	uint64_t wait_us, episodes, holds, wall_ns;
	bool wall_known; /* seen by a thread listing: its wall time is measured */
};

static bool thread_window(const struct gil_thread_info *t, const struct gil_proc_info *p,
			  bool since_last, uint64_t now, struct thread_window *w)
{
	uint64_t first = since_last && t->first_ns < p->prev_ns ? p->prev_ns : t->first_ns;
	uint64_t last = t->last_ns > first ? t->last_ns : first;

	w->wait_us = t->now.wait_us - (since_last ? t->prev.wait_us : 0);
	w->episodes = t->now.episodes - (since_last ? t->prev.episodes : 0);
	w->holds = t->hold_samples - (since_last ? t->prev_hold_samples : 0);
	if (since_last && !w->wait_us && !w->holds && t->last_ns < p->prev_ns)
		return false; /* gone before this interval */
	/* a thread seen at the latest listing lives on until now */
	if (!p->gone && t->last_ns && now - t->last_ns < 2 * THREADS_EVERY_NS)
		last = now;
	w->wall_ns = last - first;
	/* never listed (it ended first), or listed after it waited: its
	 * waits are all that is known of its wall time */
	w->wall_known = t->first_ns && w->wall_ns >= w->wait_us * 1000;
	if (!w->wall_known && w->wall_ns < w->wait_us * 1000)
		w->wall_ns = w->wait_us * 1000;
	return true;
}

/* The window a process's figures cover. */
static uint64_t proc_window(const struct gil_proc_info *p, bool since_last, uint64_t now)
{
	uint64_t from = since_last ? p->prev_ns : p->first_ns;
	uint64_t to = p->gone ? p->last_ns : now;

	return to > from ? to - from : 0;
}

static void print_proc(struct gil_monitor *m, struct gil_proc_info *p, FILE *out,
		       bool since_last, uint64_t now)
{
	uint64_t window = proc_window(p, since_last, now);
	uint64_t switches = p->switch_last - (since_last ? p->switch_prev : p->switch_first);
	uint64_t samples = p->samples - (since_last ? p->prev_samples : 0);
	uint64_t all_wait = 0, all_wall = 0, all_episodes = 0, shared_wait = 0, shared_wall = 0;
	bool long_enough = window >= GIL_MIN_WINDOW_NS, marked = false;
	char wait_pct[16], hold_pct[16], wall[16];

	if (long_enough)
		fprintf(out, "PID %d (%s), Python %s: %.1f GIL switches/s", (int)p->pid, p->comm,
			p->version, (double)switches / ((double)window / 1e9));
	else
		fprintf(out, "PID %d (%s), Python %s: %llu GIL switches in %.2f s (too short for a rate)",
			(int)p->pid, p->comm, p->version, (unsigned long long)switches,
			(double)window / 1e9);
	fprintf(out, ", switch interval %llu us%s\n\n", (unsigned long long)p->interval_us,
		p->gone ? ", exited" : "");
	fprintf(out, "%8s %-16s %8s %10s %6s %7s %12s %6s\n", "TID", "COMM", "WALL(s)", "WAIT(ms)",
		"WAIT%", "WAITS", "AVG_WAIT(us)", "HOLD%");
	for (size_t i = 0; i < m->nthreads; i++) {
		struct gil_thread_info *t = &m->threads[i];
		struct thread_window w;
		bool shares;

		if (t->pid != p->pid || !thread_window(t, p, since_last, now, &w))
			continue;
		shares = w.wall_known && w.wall_ns >= GIL_MIN_WINDOW_NS;
		share(wait_pct, sizeof(wait_pct), w.wait_us * 1000, w.wall_ns, shares);
		share(hold_pct, sizeof(hold_pct), w.holds, samples, long_enough);
		if (w.wall_known)
			snprintf(wall, sizeof(wall), "%.2f", (double)w.wall_ns / 1e9);
		else
			snprintf(wall, sizeof(wall), "-");
		marked |= !shares || !long_enough;
		fprintf(out, "%8d %-16s %8s %10.1f %6s %7llu %12.0f %6s\n", (int)t->tid, t->comm, wall,
			(double)w.wait_us / 1e3, wait_pct, (unsigned long long)w.episodes,
			w.episodes ? (double)w.wait_us / (double)w.episodes : 0.0, hold_pct);
		all_wait += w.wait_us;
		all_episodes += w.episodes;
		all_wall += w.wall_known ? w.wall_ns : 0;
		if (shares) { /* the share of all: over the threads that have one */
			shared_wall += w.wall_ns;
			shared_wait += w.wait_us;
		}
	}
	share(wait_pct, sizeof(wait_pct), shared_wait * 1000, shared_wall,
	      shared_wall >= GIL_MIN_WINDOW_NS);
	fprintf(out, "%8s %-16s %8.2f %10.1f %6s %7llu %12.0f\n", "", "all threads",
		(double)all_wall / 1e9, (double)all_wait / 1e3, wait_pct,
		(unsigned long long)all_episodes,
		all_episodes ? (double)all_wait / (double)all_episodes : 0.0);
	if (marked)
		fprintf(out, "%8s -: seen for less than %.1f s (or not seen by a thread listing): "
			     "too short for a share\n",
			"", (double)GIL_MIN_WINDOW_NS / 1e9);
	fputc('\n', out);
}

/* Processes ranked by the GIL waiting of their threads in the window. */
struct proc_rank {
	struct gil_proc_info *p;
	uint64_t wait_us;
};

static int by_wait_desc(const void *a, const void *b)
{
	const struct proc_rank *x = a, *y = b;

	if (x->wait_us != y->wait_us)
		return x->wait_us > y->wait_us ? -1 : 1;
	return (x->p->pid > y->p->pid) - (x->p->pid < y->p->pid);
}

static struct proc_rank *rank_procs(struct gil_monitor *m, bool since_last, uint64_t now,
				    size_t *n)
{
	struct proc_rank *v = calloc(m->nprocs ? m->nprocs : 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].gil)
			v[(*n)++].p = &m->procs[i];
	for (size_t i = 0; i < m->nthreads; i++) {
		struct gil_thread_info *t = &m->threads[i];
		struct thread_window w;

		for (size_t k = 0; k < *n; k++)
			if (v[k].p->pid == t->pid) {
				if (thread_window(t, v[k].p, since_last, now, &w))
					v[k].wait_us += w.wait_us;
				break;
			}
	}
	qsort(v, *n, sizeof(*v), by_wait_desc);
	return v;
}

static void remember(struct gil_monitor *m, uint64_t now)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		m->procs[i].prev_ns = now;
		m->procs[i].switch_prev = m->procs[i].switch_last;
		m->procs[i].prev_samples = m->procs[i].samples;
	}
	for (size_t i = 0; i < m->nthreads; i++) {
		m->threads[i].prev = m->threads[i].now;
		m->threads[i].prev_hold_samples = m->threads[i].hold_samples;
	}
}

void gil_monitor_print(struct gil_monitor *m, FILE *out, bool since_last, bool final)
{
	uint64_t now = final && m->end_ns ? m->end_ns : monotonic_ns();
	uint64_t rest_wait = 0;
	size_t n, shown, rest_idle = 0;
	struct proc_rank *rank;

	read_counts(m, final);
	if (final)
		read_histograms(m);
	rank = rank_procs(m, since_last, now, &n);
	if (!rank)
		return;
	shown = m->top && n > m->top ? m->top : n;
	/* system-wide, processes that did not wait are only in the summary */
	while (m->hide_idle && shown > 0 && !rank[shown - 1].wait_us)
		shown--;
	for (size_t i = 0; i < shown; i++) {
		struct gil_proc_info *p = rank[i].p;

		print_proc(m, p, out, since_last, now);
		if (final) {
			fprintf(out, "GIL wait durations of PID %d:\n", (int)p->pid);
			log2_hist_print(&p->hist, "usecs", out);
			fputc('\n', out);
		}
	}
	for (size_t i = shown; i < n; i++) {
		rest_wait += rank[i].wait_us;
		rest_idle += !rank[i].wait_us;
	}
	if (n > shown)
		fprintf(out,
			"(%zu more process%s with less GIL waiting not shown: %.1f ms of waits in "
			"all, %zu with none; --all shows every process)\n\n",
			n - shown, n - shown == 1 ? "" : "es", (double)rest_wait / 1e3, rest_idle);
	free(rank);
	if (since_last)
		remember(m, now);
	fflush(out);
}
