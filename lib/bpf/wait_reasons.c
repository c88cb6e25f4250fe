/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/wait_reasons.h"

#include <bcc/bcc_syms.h>
#include <bcc/libbpf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "abi/wait_abi.h"
#include "cpython/gil_locate.h"
#include "bpf/thread_names.h"
#include "sys/text_escape.h"
#include "sys/grow.h"

/* Leaf frames; the per-thread table shows them without the brackets. */
static const char *const names[PYB_WAIT_MAX] = {
	[PYB_WAIT_UNKNOWN] = "[in a system call begun before tracing]",
	[PYB_WAIT_SLEEP] = "[sleep]",
	[PYB_WAIT_LOCK] = "[lock or condition wait]",
	[PYB_WAIT_GIL] = "[GIL wait]",
	[PYB_WAIT_FUTEX] = "[futex wait: lock, condition or GIL]",
	[PYB_WAIT_SOCKET] = "[socket I/O]",
	[PYB_WAIT_PIPE] = "[pipe I/O]",
	[PYB_WAIT_FD_OTHER] = "[I/O on a terminal, device or other file]",
	[PYB_WAIT_POLL] = "[poll/select/epoll]",
	[PYB_WAIT_CHILD] = "[waiting for a child process]",
	[PYB_WAIT_SIGNAL] = "[waiting for a signal]",
	[PYB_WAIT_UNINTERRUPTIBLE] = "[uninterruptible sleep]",
	[PYB_WAIT_DISK] = "[disk I/O]",
	[PYB_WAIT_PAGE_FAULT] = "[page fault]",
	[PYB_WAIT_STOPPED] = "[stopped]",
	[PYB_WAIT_CPU] = RUNNABLE_MARKER,
	[PYB_WAIT_NO_SYSCALL] = "[asleep outside a system call]",
};

/* x86-64 system calls that may sleep and have no reason of their own. */
static const struct {
	unsigned nr;
	const char *name;
} syscalls[] = {
	{ 2, "open" },	      { 26, "msync" },	      { 65, "semop" },
	{ 70, "msgrcv" },     { 72, "fcntl" },	      { 73, "flock" },
	{ 74, "fsync" },      { 75, "fdatasync" },    { 202, "futex" },
	{ 208, "io_getevents" }, { 220, "semtimedop" }, { 243, "mq_timedreceive" },
	{ 257, "openat" },    { 426, "io_uring_enter" },
};

static struct wait_fd_kind *find_fd(struct wait_reasons *w, pid_t pid, uint32_t fd)
{
	for (size_t i = 0; i < w->nfds; i++)
		if (w->fds[i].pid == pid && w->fds[i].fd == fd)
			return &w->fds[i];
	return NULL;
}

static uint32_t fd_kind(pid_t pid, uint32_t fd)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/fd/%u", (int)pid, fd);
	if (stat(path, &st) < 0)
		return 0;
	if (S_ISSOCK(st.st_mode))
		return PYB_WAIT_SOCKET;
	if (S_ISFIFO(st.st_mode))
		return PYB_WAIT_PIPE;
	return PYB_WAIT_FD_OTHER;
}

/* BPF asks what a descriptor is, the first time a thread blocks on it. */
static void on_fd_event(void *ctx, void *data, int size)
{
	struct wait_reasons *w = ctx;
	struct pyb_fd_key k;
	struct wait_fd_kind *e;
	uint32_t kind;

	if (size < (int)sizeof(k))
		return;
	memcpy(&k, data, sizeof(k));
	kind = fd_kind((pid_t)k.pid, k.fd);
	if (!kind)
		return; /* closed already: the name says "fd N" */
	bpf_update_elem(w->fds_fd, &k, &kind, BPF_ANY);
	e = find_fd(w, (pid_t)k.pid, k.fd);
	if (!e) {
		struct wait_fd_kind *v = grow_room(w->fds, w->nfds, &w->cap_fds, 64, sizeof(*v));

		if (!v)
			return;
		w->fds = v;
	}
	if (!e)
		e = &w->fds[w->nfds++];
	*e = (struct wait_fd_kind){ (pid_t)k.pid, k.fd, kind };
}

static void on_lost_fd_events(void *ctx, uint64_t lost)
{
	(void)ctx;
	(void)lost; /* those descriptors are named by number */
}

/* Where the process's GIL is, so that futex waits on it are told apart. */
static void on_active(void *ctx, struct py_target *t)
{
	struct wait_reasons *w = ctx;
	uint32_t key = (uint32_t)t->pid;
	uint64_t addr = 0;

	if (t->proc.free_threaded || py_gil_locate(&t->proc, &addr) == 0)
		bpf_update_elem(w->gils_fd, &key, &addr, BPF_ANY);
	else
		bpf_delete_elem(w->gils_fd, &key); /* its futex waits stay unsplit */
}

int wait_reasons_start(struct wait_reasons *w, struct tool_session *s)
{
	memset(w, 0, sizeof(*w));
	w->stacks_fd = s->stacks_fd;
	w->gils_fd = bpfmod_table_fd(&s->bpf, "wait_gils");
	w->fds_fd = bpfmod_table_fd(&s->bpf, "wait_fds");
	if (w->gils_fd < 0 || w->fds_fd < 0 ||
	    bpfmod_open_events(&s->bpf, "wait_events", on_fd_event, on_lost_fd_events, w, 4) <
		    0) {
		fprintf(stderr, "%s: %s\n", s->tool, s->bpf.err);
		return -1;
	}
	s->on_active = on_active;
	s->on_active_ctx = w;
	return 0;
}

/* Whether a kernel stack passes through the page-fault entry (x86-64:
 * asm_exc_page_fault since Linux 5.8, page_fault before). */
static bool stack_in_page_fault(struct wait_reasons *w, int32_t id)
{
	uint64_t ips[127] = { 0 };

	if (!w->ksyms)
		w->ksyms = bcc_symcache_new(-1, NULL);
	if (id < 0 || !w->ksyms || bpf_lookup_elem(w->stacks_fd, &id, ips) < 0)
		return false;
	for (size_t i = 0; i < sizeof(ips) / sizeof(*ips) && ips[i]; i++) {
		struct bcc_symbol sym;

		if (bcc_symcache_resolve_no_demangle(w->ksyms, ips[i], &sym) == 0 &&
		    (strcmp(sym.name, "asm_exc_page_fault") == 0 ||
		     strcmp(sym.name, "exc_page_fault") == 0 || strcmp(sym.name, "page_fault") == 0))
			return true;
	}
	return false;
}

/* An uninterruptible sleep: a page fault, or (in a system call) disk I/O. */
static uint32_t uninterruptible_kind(struct wait_reasons *w, int32_t id)
{
	struct wait_stack_kind *v;
	uint32_t kind;

	if (id < 0)
		return PYB_WAIT_UNINTERRUPTIBLE; /* the stack map was full */
	for (size_t i = 0; i < w->nstacks; i++)
		if (w->stacks[i].id == id)
			return w->stacks[i].kind;
	kind = stack_in_page_fault(w, id) ? PYB_WAIT_PAGE_FAULT : PYB_WAIT_DISK;
	v = grow_room(w->stacks, w->nstacks, &w->cap_stacks, 64, sizeof(*v));
	if (!v)
		return kind;
	w->stacks = v;
	w->stacks[w->nstacks++] = (struct wait_stack_kind){ id, kind };
	return kind;
}

/* The reason of a count, with a descriptor's kind resolved. */
static uint32_t reason_of(struct wait_reasons *w, const struct pyb_count_key *k)
{
	uint32_t reason = PYB_WAIT_REASON(k->detail);

	if (k->kind == PYB_KIND_RUNNABLE)
		return PYB_WAIT_CPU;
	/* no system call seen: a wait the thread was in as tracing began
	 * (pyoffcpu seeds those from outside) */
	if (reason == PYB_WAIT_NONE)
		return PYB_WAIT_UNKNOWN;
	if (reason == PYB_WAIT_UNINTERRUPTIBLE)
		return uninterruptible_kind(w, k->kernel_stack);
	if (reason == PYB_WAIT_FD) {
		const struct wait_fd_kind *e = find_fd(w, (pid_t)k->pid, PYB_WAIT_ARG(k->detail));
		uint32_t kind = e ? e->kind : fd_kind((pid_t)k->pid, PYB_WAIT_ARG(k->detail));

		if (kind)
			return kind;
	}
	return reason < PYB_WAIT_MAX ? reason : PYB_WAIT_UNKNOWN;
}

static const char *name_of(struct wait_reasons *w, uint32_t reason, uint32_t detail)
{
	if (reason == PYB_WAIT_FD) {
		snprintf(w->label, sizeof(w->label), "[I/O on fd %u]", PYB_WAIT_ARG(detail));
		return w->label;
	}
	if (reason == PYB_WAIT_SYSCALL) {
		unsigned nr = PYB_WAIT_ARG(detail);

		for (size_t i = 0; i < sizeof(syscalls) / sizeof(*syscalls); i++)
			if (syscalls[i].nr == nr) {
				snprintf(w->label, sizeof(w->label), "[%s]", syscalls[i].name);
				return w->label;
			}
		snprintf(w->label, sizeof(w->label), "[system call %u]", nr);
		return w->label;
	}
	return names[reason] ? names[reason] : "[?]";
}

const char *wait_reasons_leaf(void *ctx, const struct pyb_count_key *k)
{
	struct wait_reasons *w = ctx;

	if (k->kind != PYB_KIND_BLOCKED)
		return NULL;
	return name_of(w, reason_of(w, k), k->detail);
}

struct thread_reason {
	pid_t pid, tid;
	char comm[16];
	uint32_t reason, detail; /* detail: kept for FD and SYSCALL */
	uint64_t value;
};

struct tally {
	struct thread_reason *v;
	size_t n, cap;
};

static int tally_add(struct tally *t, const struct pyb_count_key *k, uint32_t reason,
		     uint64_t value)
{
	struct thread_reason *v;
	uint32_t detail = reason == PYB_WAIT_FD || reason == PYB_WAIT_SYSCALL ? k->detail : 0;

	for (size_t i = 0; i < t->n; i++) {
		struct thread_reason *e = &t->v[i];

		if (e->tid == (pid_t)k->tid && e->pid == (pid_t)k->pid && e->reason == reason &&
		    e->detail == detail) {
			e->value += value;
			return 0;
		}
	}
	v = grow_room(t->v, t->n, &t->cap, 64, sizeof(*v));
	if (!v)
		return -1;
	t->v = v;
	t->v[t->n] = (struct thread_reason){ (pid_t)k->pid, (pid_t)k->tid, "", reason, detail,
					     value };
	memcpy(t->v[t->n].comm, k->comm, sizeof(t->v[t->n].comm) - 1);
	t->n++;
	return 0;
}

static uint64_t thread_total(const struct tally *t, pid_t pid, pid_t tid)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].pid == pid && t->v[i].tid == tid)
			sum += t->v[i].value;
	return sum;
}

/* Threads by total, largest first; within one, reasons by time. */
static int by_thread_then_value(const void *a, const void *b, void *ctx)
{
	const struct thread_reason *x = a, *y = b;
	const struct tally *t = ctx;
	uint64_t tx, ty;

	if (x->pid != y->pid || x->tid != y->tid) {
		tx = thread_total(t, x->pid, x->tid);
		ty = thread_total(t, y->pid, y->tid);
		if (tx != ty)
			return tx < ty ? 1 : -1;
		return x->tid < y->tid ? -1 : 1;
	}
	return x->value < y->value ? 1 : x->value > y->value ? -1 : 0;
}

int wait_reasons_print_threads(struct wait_reasons *w, int counts_fd, pid_t only_tid,
			       struct thread_names *names, struct py_registry *reg,
			       const char *unit, FILE *out)
{
	struct pyb_count_key key, next;
	struct tally t = { 0 };
	bool first = true;

	while (bpf_get_next_key(counts_fd, first ? NULL : &key, &next) == 0) {
		uint64_t value;

		first = false;
		key = next;
		if ((key.kind != PYB_KIND_BLOCKED && key.kind != PYB_KIND_RUNNABLE) ||
		    (only_tid && (pid_t)key.tid != only_tid) ||
		    bpf_lookup_elem(counts_fd, &key, &value) < 0)
			continue;
		if (tally_add(&t, &key, reason_of(w, &key), value) < 0) {
			free(t.v);
			return -1;
		}
	}
	if (t.n)
		qsort_r(t.v, t.n, sizeof(*t.v), by_thread_then_value, &t);
	if (t.n)
		fprintf(out, "\nOff-CPU time by thread and reason (%s, runnable time included):\n",
			unit);
	for (size_t i = 0; i < t.n; i++) {
		const struct thread_reason *e = &t.v[i];
		uint64_t total = thread_total(&t, e->pid, e->tid);
		const char *name = name_of(w, e->reason, e->detail), *pyname;

		if (!i || e->tid != t.v[i - 1].tid || e->pid != t.v[i - 1].pid) {
			pyname = thread_names_get(names, reg, e->pid, e->tid);
			fprintf(out, "  TID %d (%s, PID %d): %llu %s\n", (int)e->tid,
				TEXT_ESC(pyname ? pyname : e->comm), (int)e->pid,
				(unsigned long long)total, unit);
		}
		/* the leaf frame's name without its brackets */
		fprintf(out, "    %12llu %5.1f%%  %.*s\n", (unsigned long long)e->value,
			total ? 100.0 * (double)e->value / (double)total : 0.0,
			(int)strlen(name) - 2, name + 1);
	}
	free(t.v);
	return 0;
}

void wait_reasons_free(struct wait_reasons *w)
{
	if (w->ksyms)
		bcc_free_symcache(w->ksyms, -1);
	free(w->stacks);
	free(w->fds);
	memset(w, 0, sizeof(*w));
}
