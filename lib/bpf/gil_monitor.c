/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/gil_monitor.h"

#include <bcc/libbpf.h>
#include <stdlib.h>
#include <string.h>

#include "sys/proc_maps.h"
#include "sys/clock.h"
#include "sys/remote_mem.h"
#include "cpython/gil.h"
#include "cpython/gil_locate.h"
#include "cpython/threads.h"
#include "sys/text_escape.h"
#include "sys/plural.h"
#include "bpf/thread_names.h"

#define THREADS_EVERY_NS (100ull * 1000 * 1000)
#define GILS_EVERY_NS (1000ull * 1000 * 1000)
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
	size_t n = 0;

	for (size_t i = 0; i < m->nprocs; i++)
		n += m->procs[i].slot == 0;
	return n;
}

/* The GIL in slot of process pid (slot 0: the main interpreter's). */
static struct gil_proc_info *find_gil(struct gil_monitor *m, pid_t pid, int slot)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid && m->procs[i].slot == slot)
			return &m->procs[i];
	return NULL;
}

static struct gil_proc_info *find_proc(struct gil_monitor *m, pid_t pid)
{
	return find_gil(m, pid, 0);
}

static struct gil_proc_info *add_gil(struct gil_monitor *m, pid_t pid, int slot)
{
	struct gil_proc_info *p;

	if (m->nprocs == m->cap_procs) {
		size_t cap = m->cap_procs ? m->cap_procs * 2 : 16;
		struct gil_proc_info *v = realloc(m->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		m->procs = v;
		m->cap_procs = cap;
	}
	p = &m->procs[m->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->slot = slot;
	return p;
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

/* Starts or restarts the counts of GIL p, just found at its state st. */
static void start_counts(struct gil_proc_info *p, const struct py_gil_state *st, uint64_t now)
{
	p->switch_first = p->switch_last = p->switch_prev = st->switch_number;
	p->first_ns = p->last_ns = p->prev_ns = now;
	p->samples = p->prev_samples = 0;
}

/*
 * Takes the GILs the process has now (refs): a GIL watched before keeps its
 * slot and counts, a new one takes a free slot, and one no longer there
 * (its interpreter ended) is kept for the report, marked gone. Then tells
 * BPF. Returns 0, or -1 if BPF's map cannot be written.
 */
static int take_gils(struct gil_monitor *m, struct py_target *t, const struct py_gil_ref *refs,
		     int n, uint64_t now)
{
	struct pyb_gils bpf_gils = { { 0 } };
	struct gil_proc_info *main_gil = find_proc(m, t->pid);
	uint32_t key = (uint32_t)t->pid;
	bool used[PYB_MAX_GILS] = { false };
	int slots[PY_MAX_GILS];

	for (int i = 0; i < n; i++) {
		slots[i] = -1;
		for (size_t k = 0; k < m->nprocs; k++) {
			struct gil_proc_info *p = &m->procs[k];

			if (p->pid == t->pid && !p->gone && p->gil == refs[i].gil && p->slot > 0 &&
			    i > 0)
				slots[i] = p->slot;
		}
		if (i == 0)
			slots[i] = 0;
		if (slots[i] >= 0)
			used[slots[i]] = true;
	}
	for (int i = 0; i < n; i++)
		for (int k = 1; slots[i] < 0 && k < PYB_MAX_GILS; k++)
			if (!used[k])
				used[slots[i] = k] = true;
	/* interpreters that ended */
	for (size_t k = 0; k < m->nprocs; k++) {
		struct gil_proc_info *p = &m->procs[k];
		bool kept = false;

		if (p->pid != t->pid || p->slot == 0 || p->gone)
			continue;
		for (int i = 0; i < n; i++)
			kept |= slots[i] == p->slot;
		if (!kept) {
			p->gone = true;
			p->slot = -1 - p->slot; /* its slot may be taken again */
		}
	}
	for (int i = 1; i < n; i++) {
		struct gil_proc_info *p = slots[i] > 0 ? find_gil(m, t->pid, slots[i]) : NULL;
		struct py_gil_state st;

		if (slots[i] < 0 || py_gil_read(&t->proc, refs[i].gil, &st) < 0)
			continue;
		if (!p) {
			p = add_gil(m, t->pid, slots[i]);
			main_gil = find_proc(m, t->pid); /* add_gil may move it */
			if (!p)
				continue;
			p->number = main_gil ? main_gil->ngils : i;
			if (main_gil)
				main_gil->ngils++;
			start_counts(p, &st, now);
		}
		snprintf(p->comm, sizeof(p->comm), "%.15s", t->proc.comm);
		snprintf(p->version, sizeof(p->version), "%s", main_gil ? main_gil->version : "?");
		p->gil = refs[i].gil;
		p->interp = refs[i].interp;
		p->interval_us = st.interval_us;
		p->activation = t->activations;
		bpf_gils.addr[slots[i]] = refs[i].gil;
	}
	bpf_gils.addr[0] = refs[0].gil;
	return bpf_update_elem(m->gils_fd, &key, &bpf_gils, 0);
}

/* Marks the sub-interpreters' GILs of process pid gone (their slots free). */
static void drop_sub_gils(struct gil_monitor *m, pid_t pid)
{
	for (size_t k = 0; k < m->nprocs; k++)
		if (m->procs[k].pid == pid && m->procs[k].slot > 0) {
			m->procs[k].gone = true;
			m->procs[k].slot = -1 - m->procs[k].slot;
		}
}

/*
 * A new target, or (p set) a new program in a known one after an exec: find
 * its GILs, check them, tell BPF. A failure that may pass (a read that
 * failed) is tried again on the next turns for GIL_RETRY_NS after the
 * target became active; a process that ended first is counted with the
 * others that did (registry_note_ended); other refusals are printed. An
 * exec'd program's GIL is another (at another address, its hand-over count
 * starting again): its hand-overs add to the process's count.
 */
static void adopt(struct gil_monitor *m, struct py_registry *reg, struct py_target *t,
		  uint64_t now, struct gil_proc_info *p)
{
	struct py_gil_ref refs[PY_MAX_GILS];
	struct py_gil_state st;
	uint32_t key = (uint32_t)t->pid;
	bool fresh = !p;
	int n;

	n = py_gils_locate(&t->proc, refs, PY_MAX_GILS);
	if (n > 0 && py_gil_read(&t->proc, refs[0].gil, &st) < 0)
		n = py_process_fail(&t->proc, proc_alive(t->pid) ? PY_FAIL_TRANSIENT : PY_FAIL_GONE,
				    "cannot read the GIL state");
	if (n == 0)
		n = py_process_fail(&t->proc, PY_FAIL_TRANSIENT, "cannot read the GIL state");
	if (n < 0 && t->proc.fail == PY_FAIL_TRANSIENT && proc_alive(t->pid) &&
	    now - t->active_since_ns < GIL_RETRY_NS)
		return; /* not remembered: tried again next turn */
	if (fresh) {
		p = add_gil(m, t->pid, 0);
		if (!p)
			return;
	}
	p->activation = t->activations;
	drop_sub_gils(m, t->pid); /* a new program: its sub-interpreters are others */
	if (n > 0) {
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
			start_counts(p, &st, now);
			p->ngils = 1;
		}
		p->gil = refs[0].gil;
		p->interp = refs[0].interp;
		p->gone = false;
		p->interval_us = st.interval_us;
		p->gils_checked_ns = now;
		/* with the sub-interpreters' GILs */
		if (take_gils(m, t, refs, n, now) == 0)
			return;
		n = py_process_fail(&t->proc, PY_FAIL_UNSUPPORTED, "cannot hand the GIL to BPF");
		p = find_proc(m, t->pid); /* take_gils may have moved it */
	}
	if (!reg->only && registry_failure_is_exit(&t->proc))
		registry_note_ended(reg, &t->proc, t->exec_comm);
	else
		fprintf(stderr, "%s: PID %d (%s, Python %d.%d%s): %s; skipped\n", m->tool,
			(int)t->pid, TEXT_ESC(t->proc.comm), t->proc.version.major,
			t->proc.version.minor, t->proc.free_threaded ? "t" : "", TEXT_ESC(t->proc.err));
	bpf_delete_elem(m->gils_fd, &key); /* the old program's GILs, or a part handed */
	drop_sub_gils(m, t->pid);
	p->gone = true;
	p->gil = 0;
	m->refused++;
	m->free_threaded += t->proc.free_threaded;
	/* remembered, so it is not tried again */
}

/* Where interpreters may have GILs of their own, looks again once a second
 * for interpreters that came or went. */
static void recheck_gils(struct gil_monitor *m, struct py_target *t, struct gil_proc_info *p,
			 uint64_t now)
{
	struct py_gil_ref refs[PY_MAX_GILS];
	size_t watched = 0;
	int n;

	if (t->proc.rules->gil_home != PY_GIL_IN_INTERPRETER || now - p->gils_checked_ns < GILS_EVERY_NS)
		return;
	p->gils_checked_ns = now;
	n = py_gils_locate(&t->proc, refs, PY_MAX_GILS);
	if (n <= 0 || refs[0].gil != p->gil)
		return; /* the main one failed or changed: an exec, seen soon */
	for (size_t k = 0; k < m->nprocs; k++)
		watched += m->procs[k].pid == t->pid && m->procs[k].slot > 0 && !m->procs[k].gone;
	for (int i = 1; i < n; i++) {
		bool known = false;

		for (size_t k = 0; k < m->nprocs; k++)
			known |= m->procs[k].pid == t->pid && m->procs[k].slot > 0 &&
				 !m->procs[k].gone && m->procs[k].gil == refs[i].gil;
		if (!known)
			watched = (size_t)-1;
	}
	if (watched != (size_t)(n - 1))
		take_gils(m, t, refs, n, now);
}

/* The slot of the GIL of the interpreter interp in process pid; 0 (the
 * main one's) if that interpreter shares it. */
static int slot_of_interp(struct gil_monitor *m, pid_t pid, uint64_t interp)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid && m->procs[i].interp == interp && !m->procs[i].gone)
			return m->procs[i].slot;
	return 0;
}

static void refresh_threads(struct gil_monitor *m, struct py_registry *reg, struct py_target *t,
			    uint64_t now)
{
	struct py_thread *v = calloc(PY_MAX_THREADS, sizeof(*v));
	int n;

	if (!v)
		return;
	n = py_threads_read(&t->proc, v, PY_MAX_THREADS);
	for (int i = 0; i < n; i++) {
		struct gil_thread_info *ti;
		const char *pyname;
		int k;

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
		if (ti->last_ns != now) {
			/* first of this listing: the thread's states start again
			 * (newest interpreter first: it is listed under that one's
			 * GIL unless its waits say otherwise) */
			memset(ti->tstates, 0, sizeof(ti->tstates));
			if (!ti->waited)
				ti->slot = slot_of_interp(m, t->pid, v[i].interp);
		}
		for (k = 0; k < GIL_THREAD_TSTATES && ti->tstates[k]; k++)
			;
		if (k < GIL_THREAD_TSTATES)
			ti->tstates[k] = v[i].tstate;
		ti->last_ns = now;
		proc_comm(t->pid, v[i].host_tid, ti->comm, sizeof(ti->comm));
		pyname = m->names ? thread_names_get(m->names, reg, t->pid, v[i].host_tid) : NULL;
		if (pyname)
			snprintf(ti->name, sizeof(ti->name), "%s", pyname);
	}
	free(v);
}

static bool has_tstate(const struct gil_thread_info *t, uint64_t tstate)
{
	for (int k = 0; k < GIL_THREAD_TSTATES; k++)
		if (t->tstates[k] == tstate)
			return true;
	return false;
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
	if (st.locked != 1 || !st.last_holder)
		return;
	for (size_t i = 0; i < m->nthreads; i++)
		if (m->threads[i].pid == p->pid && has_tstate(&m->threads[i], st.last_holder)) {
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
			for (size_t k = 0; p && k < m->nprocs; k++)
				if (m->procs[k].pid == t->pid)
					m->procs[k].gone = true;
			continue;
		}
		if (!p || p->activation != t->activations) {
			adopt(m, reg, t, now, p);
			p = find_proc(m, t->pid);
			list_threads = true;
		}
		if (!p || !p->gil)
			continue;
		recheck_gils(m, t, p, now);
		if (list_threads)
			refresh_threads(m, reg, t, now);
		for (size_t k = 0; k < m->nprocs; k++)
			if (m->procs[k].pid == t->pid && m->procs[k].slot >= 0 &&
			    !m->procs[k].gone && m->procs[k].gil)
				sample_gil(m, &m->procs[k], t, now);
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
 * waiting (in a wait, or between the timed waits of one: just out of one,
 * or no GIL switch since, so it cannot have taken the GIL), the whole
 * episode moves to stacks flagged PYB_COUNT_OPEN ("[still waiting for the
 * GIL]").
 */
static void close_open_episode(struct gil_monitor *m, struct pyb_gil_wait *w,
			       struct gil_thread_info *t, uint64_t end)
{
	uint64_t until = w->woken_ts > w->enter_ts && w->woken_ts < end ? w->woken_ts : end;
	uint64_t now_us = w->enter_ts && until > w->enter_ts ? (until - w->enter_ts) / 1000 : 0;
	uint64_t switches = 0;
	bool waiting = w->enter_ts || (w->last_exit && end - w->last_exit < GIL_EPISODE_GAP_NS) ||
		       (w->switch_addr &&
			remote_read_u64((pid_t)w->key.pid, w->switch_addr, &switches) == 0 &&
			switches == w->switch_at_exit);

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
		if (t) {
			t->now = c;
			if (c.futex_waits) {
				t->slot = (int)c.gil;
				t->waited = true;
			}
		}
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

/* The THREAD column: the thread's Python name, else its OS name, escaped;
 * a longer one is cut and ends in "..." so the table keeps its columns. */
#define THREAD_LABEL_MAX 40

static size_t thread_label(const struct gil_thread_info *t, char *buf, size_t len)
{
	/* buf has len > 3 bytes (THREAD_LABEL_MAX + 1) */
	if (text_escape(buf, len - 3, t->name[0] ? t->name : t->comm, NULL) >= len - 3)
		strcat(buf, "...");
	return strlen(buf);
}

static void print_proc(struct gil_monitor *m, struct gil_proc_info *p, FILE *out,
		       bool since_last, uint64_t now)
{
	uint64_t window = proc_window(p, since_last, now);
	uint64_t switches = p->switch_last - (since_last ? p->switch_prev : p->switch_first);
	uint64_t samples = p->samples - (since_last ? p->prev_samples : 0);
	uint64_t all_wait = 0, all_wall = 0, all_episodes = 0, shared_wait = 0, shared_wall = 0;
	bool long_enough = window >= GIL_MIN_WINDOW_NS, marked = false;
	char wait_pct[16], hold_pct[16], wall[16], label[THREAD_LABEL_MAX + 1];
	int width = 16;
	const struct gil_proc_info *main_gil = p->slot == 0 ? p : find_proc(m, p->pid);
	char which[64] = "";

	/* a process with sub-interpreters of their own GIL: one table per GIL */
	if (main_gil && main_gil->ngils > 1)
		snprintf(which, sizeof(which), ", %s%.0d%s", p->number ? "interpreter " : "main interpreter",
			 p->number, p->number ? " (own GIL)" : "");
	if (long_enough)
		fprintf(out, "PID %d (%s), Python %s%s: %.1f GIL switches/s", (int)p->pid, TEXT_ESC(p->comm),
			p->version, which, (double)switches / ((double)window / 1e9));
	else
		fprintf(out, "PID %d (%s), Python %s%s: %llu GIL %s in %.2f s (too short for a rate)",
			(int)p->pid, TEXT_ESC(p->comm), p->version, which, (unsigned long long)switches,
			plural(switches, "switch", "switches"), (double)window / 1e9);
	fprintf(out, ", switch interval %llu us%s\n\n", (unsigned long long)p->interval_us,
		p->gone ? (p->slot < 0 || p->number ? ", ended" : ", exited") : "");
	for (size_t i = 0; i < m->nthreads; i++) {
		size_t n;

		if (m->threads[i].pid != p->pid || m->threads[i].slot != p->slot)
			continue;
		n = thread_label(&m->threads[i], label, sizeof(label));
		if (n > (size_t)width)
			width = (int)n;
	}
	fprintf(out, "%8s %-*s %8s %10s %6s %7s %12s %6s\n", "TID", width, "THREAD", "WALL(s)",
		"WAIT(ms)", "WAIT%", "WAITS", "AVG_WAIT(us)", "HOLD%");
	for (size_t i = 0; i < m->nthreads; i++) {
		struct gil_thread_info *t = &m->threads[i];
		struct thread_window w;
		bool shares;

		if (t->pid != p->pid || t->slot != p->slot ||
		    !thread_window(t, p, since_last, now, &w))
			continue;
		shares = w.wall_known && w.wall_ns >= GIL_MIN_WINDOW_NS;
		share(wait_pct, sizeof(wait_pct), w.wait_us * 1000, w.wall_ns, shares);
		share(hold_pct, sizeof(hold_pct), w.holds, samples, long_enough);
		if (w.wall_known)
			snprintf(wall, sizeof(wall), "%.2f", (double)w.wall_ns / 1e9);
		else
			snprintf(wall, sizeof(wall), "-");
		marked |= !shares || !long_enough;
		thread_label(t, label, sizeof(label));
		fprintf(out, "%8d %-*s %8s %10.1f %6s %7llu %12.0f %6s\n", (int)t->tid, width, label,
			wall, (double)w.wait_us / 1e3, wait_pct, (unsigned long long)w.episodes,
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
	fprintf(out, "%8s %-*s %8.2f %10.1f %6s %7llu %12.0f\n", "", width, "all threads",
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
	/* one rank per process: its main interpreter's GIL */
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].gil && m->procs[i].slot == 0)
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

		/* the main interpreter's GIL, then those of its sub-interpreters */
		print_proc(m, p, out, since_last, now);
		for (size_t k = 0; k < m->nprocs; k++)
			if (m->procs[k].pid == p->pid && m->procs[k].slot != 0 && m->procs[k].gil)
				print_proc(m, &m->procs[k], out, since_last, now);
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
			"(%zu more %s with less GIL waiting not shown: %.1f ms of waits in "
			"all, %zu with none; --all shows every process)\n\n",
			n - shown, plural(n - shown, "process", "processes"), (double)rest_wait / 1e3,
			rest_idle);
	free(rank);
	if (since_last)
		remember(m, now);
	fflush(out);
}
