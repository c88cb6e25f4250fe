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

/* BPF's counts, plus episodes still open (they end with the run). */
static void read_counts(struct gil_monitor *m, bool final)
{
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
		struct gil_thread_info *t;
		struct gil_proc_info *p;
		struct pyb_gil_wait w;

		first = false;
		key = next;
		if (bpf_lookup_elem(m->waits_fd, &key, &w) < 0 || !w.episode_start)
			continue;
		t = find_thread(m, (pid_t)key);
		p = find_proc(m, (pid_t)w.key.pid);
		if (t)
			t->now.episodes++;
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

static void print_proc(struct gil_monitor *m, struct gil_proc_info *p, FILE *out,
		       bool since_last, uint64_t now)
{
	uint64_t from = since_last ? p->prev_ns : p->first_ns;
	uint64_t to = p->gone ? p->last_ns : now;
	uint64_t switches = p->switch_last - (since_last ? p->switch_prev : p->switch_first);
	uint64_t samples = p->samples - (since_last ? p->prev_samples : 0);
	uint64_t all_wait = 0, all_wall = 0, all_episodes = 0;
	double secs = (double)(to > from ? to - from : 1) / 1e9;

	fprintf(out, "PID %d (%s), Python %s: %.1f GIL switches/s, switch interval %llu us%s\n\n",
		(int)p->pid, p->comm, p->version, (double)switches / secs,
		(unsigned long long)p->interval_us, p->gone ? ", exited" : "");
	fprintf(out, "%8s %-16s %8s %10s %6s %7s %12s %6s\n", "TID", "COMM", "WALL(s)", "WAIT(ms)",
		"WAIT%", "WAITS", "AVG_WAIT(us)", "HOLD%");
	for (size_t i = 0; i < m->nthreads; i++) {
		struct gil_thread_info *t = &m->threads[i];
		uint64_t first = since_last && t->first_ns < p->prev_ns ? p->prev_ns : t->first_ns;
		uint64_t last = t->last_ns > first ? t->last_ns : first;
		uint64_t wait, episodes, holds, wall;

		if (t->pid != p->pid)
			continue;
		wait = t->now.wait_us - (since_last ? t->prev.wait_us : 0);
		episodes = t->now.episodes - (since_last ? t->prev.episodes : 0);
		holds = t->hold_samples - (since_last ? t->prev_hold_samples : 0);
		/* a thread seen at the latest listing lives on until now */
		if (!p->gone && now - t->last_ns < 2 * THREADS_EVERY_NS)
			last = now;
		wall = last - first;
		if (wall < wait * 1000)
			wall = wait * 1000; /* seen late (short-lived): its waits bound it */
		if (since_last && !wait && !holds && t->last_ns < p->prev_ns)
			continue; /* gone before this interval */
		fprintf(out, "%8d %-16s %8.2f %10.1f %5.1f%% %7llu %12.0f %5.1f%%\n", (int)t->tid,
			t->comm, (double)wall / 1e9, (double)wait / 1e3, pct(wait * 1000, wall),
			(unsigned long long)episodes, episodes ? (double)wait / (double)episodes : 0.0,
			pct(holds, samples));
		all_wait += wait;
		all_wall += wall;
		all_episodes += episodes;
	}
	fprintf(out, "%8s %-16s %8.2f %10.1f %5.1f%% %7llu %12.0f\n\n", "", "all threads",
		(double)all_wall / 1e9, (double)all_wait / 1e3, pct(all_wait * 1000, all_wall),
		(unsigned long long)all_episodes,
		all_episodes ? (double)all_wait / (double)all_episodes : 0.0);
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
	uint64_t now = monotonic_ns();

	read_counts(m, final);
	if (final)
		read_histograms(m);
	for (size_t i = 0; i < m->nprocs; i++) {
		struct gil_proc_info *p = &m->procs[i];

		if (!p->gil)
			continue;
		print_proc(m, p, out, since_last, now);
		if (final) {
			fprintf(out, "GIL wait durations of PID %d:\n", (int)p->pid);
			log2_hist_print(&p->hist, "usecs", out);
			fputc('\n', out);
		}
	}
	if (since_last)
		remember(m, now);
	fflush(out);
}
