/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/stack_collector.h"

#include <bcc/bcc_syms.h>
#include <bcc/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/native_maps.h"
#include "sys/native_symbols.h"
#include "sys/proc_maps.h"
#include "abi/native_abi.h"
#include "abi/py_abi.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own, not in userspace errno.h */
_Static_assert(PYB_STACK_ID_USER_MODE == -EFAULT, "bpf_get_stackid's answer in user mode");
#endif
#define MAX_NATIVE 127 /* kernel perf_event_max_stack default */

void stack_collector_free(struct stack_collector *c)
{
	free(c->keep_py);
	free(c->keep_ids);
	thread_names_free(&c->threads);
	free(c->seen);
	string_table_free(&c->task_roots);
	if (c->ksyms)
		bcc_free_symcache(c->ksyms, -1);
	memset(c, 0, sizeof(*c));
}

/* Open-addressing set of drained pystack keys (0 is never a key). */
static bool seen_insert(struct stack_collector *c, uint64_t key)
{
	if ((c->seen_n + 1) * 2 > c->seen_cap) {
		size_t cap = c->seen_cap ? c->seen_cap * 2 : 4096;
		uint64_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return false;
		for (size_t i = 0; i < c->seen_cap; i++) {
			size_t j;

			if (!c->seen[i])
				continue;
			for (j = (c->seen[i] * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1); v[j];
			     j = (j + 1) & (cap - 1))
				;
			v[j] = c->seen[i];
		}
		free(c->seen);
		c->seen = v;
		c->seen_cap = cap;
	}
	for (size_t j = (key * 0x9e3779b97f4a7c15ULL >> 20) & (c->seen_cap - 1);;
	     j = (j + 1) & (c->seen_cap - 1)) {
		if (c->seen[j] == key)
			return false;
		if (!c->seen[j]) {
			c->seen[j] = key;
			c->seen_n++;
			return true;
		}
	}
}

/* Names the code objects of stored stack key, once; st is scratch space. */
static void name_stack(struct stack_collector *c, struct py_registry *reg, int pystacks_fd,
		       uint64_t key, struct pyb_stack *st)
{
	struct py_target *t;
	struct code_name *e;

	if (!seen_insert(c, key) || bpf_lookup_elem(pystacks_fd, &key, st) < 0)
		return;
	t = registry_find(reg, (pid_t)st->pid);
	if (!t || t->state != TARGET_ACTIVE)
		return;
	if (t->native) /* while it lives */
		native_symbols_preload(reg->nsyms, t->pid);
	for (uint32_t i = 0; i < st->len && i < PYB_MAX_FRAMES; i++) {
		struct pyb_named_key k = { .pid = st->pid,
					   .code = st->frames[i].code,
					   .ident = st->frames[i].ident };
		uint8_t one = 1;

		if (st->frames[i].flags & (PYB_FRAME_SHIM | PYB_FRAME_HIDDEN))
			continue;
		e = code_names_get(&reg->names, &t->proc, k.code, k.ident);
		/* named: BPF need not say so again (a failure is retried) */
		if (e && e->resolved && reg->named_fd >= 0)
			bpf_update_elem(reg->named_fd, &k, &one, BPF_ANY);
	}
}

void stack_collector_name_stack(struct stack_collector *c, struct py_registry *reg,
				int pystacks_fd, uint64_t key)
{
	struct pyb_stack *st = malloc(sizeof(*st));

	if (!st)
		return;
	name_stack(c, reg, pystacks_fd, key, st);
	free(st);
}

void stack_collector_drain(struct stack_collector *c, struct py_registry *reg, int pystacks_fd)
{
	uint64_t key, next;
	struct pyb_stack *st = malloc(sizeof(*st));
	bool first = true;

	if (!st)
		return;
	while (bpf_get_next_key(pystacks_fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		name_stack(c, reg, pystacks_fd, key, st);
	}
	free(st);
}

/* Growing list of frames (indices into the report's frames), leaf first
 * while it is built. */
struct frame_list {
	uint32_t *v;
	int n, cap;
	struct report *rep; /* where the frames are interned */
};

static void frames_push(struct frame_list *l, const struct report_frame *f)
{
	long idx;

	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 64;
		uint32_t *v = realloc(l->v, (size_t)cap * sizeof(*v));

		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	idx = report_intern_frame(l->rep, f);
	if (idx >= 0)
		l->v[l->n++] = (uint32_t)idx;
}

static void frames_push_marker(struct frame_list *l, const char *text)
{
	struct report_frame f = { .kind = REPORT_FRAME_MARKER, .name = text };

	frames_push(l, &f);
}

static void frames_clear(struct frame_list *l)
{
	l->n = 0;
}

static void push_python(struct stack_collector *c, struct py_registry *reg, pid_t pid,
			const struct pyb_frame *f, struct frame_list *out)
{
	struct code_name *e;
	struct report_frame rf = { .kind = REPORT_FRAME_PYTHON, .line = REPORT_LINE_UNKNOWN };
	char unknown[48];

	/* kept in the stack (it may end an eval-loop run) but never shown */
	if (f->flags & PYB_FRAME_HIDDEN)
		return;
	e = code_names_find(&reg->names, pid, f->code, f->ident);
	if (!e || !e->resolved) {
		c->unknown_code++;
		snprintf(unknown, sizeof(unknown), "[unknown code 0x%llx]",
			 (unsigned long long)f->code);
		rf.name = unknown;
	} else {
		int line = code_name_line(e, f->instr_offset);

		rf.name = e->name;
		rf.file = e->filename;
		rf.line = line >= 0 ? line : REPORT_LINE_UNKNOWN;
		rf.first_line = e->firstlineno > 0 ? e->firstlineno : 0;
	}
	frames_push(out, &rf);
}

/*
 * A native frame of target t: its function's name if known, else its
 * module and where the function starts (by the module's unwind
 * information; the address itself if that has none), never a bare
 * [unknown]; always where it comes from (file, offset, build-id), so a
 * symbolizer can name it later. A caller's address is a return address:
 * the call is the byte before, which may be the end of another function.
 */
static void push_native(struct stack_collector *c, struct py_registry *reg, struct py_target *t,
			uint32_t gen, uint64_t ip, bool caller, struct frame_list *out)
{
	struct report_frame rf = { .kind = REPORT_FRAME_NATIVE, .addr = ip };
	struct native_where where;
	uint64_t look = caller ? ip - 1 : ip, start;
	const char *path;
	char unnamed[96];

	(void)c;
	rf.name = native_symbols_name(reg->nsyms, t->pid, gen, look, NULL);
	if (native_symbols_where(reg->nsyms, t->pid, gen, ip, &where) == 0) {
		rf.module = where.path;
		rf.build_id = where.build_id;
		rf.offset = where.file_offset;
		rf.map_start = where.start;
		rf.map_end = where.end;
		rf.map_offset = where.offset;
	}
	if (!rf.name) {
		const char *base;

		if (native_symbols_function(reg->nsyms, t->pid, gen, look, &start, &path) < 0) {
			path = rf.module;
			start = rf.module ? rf.offset : ip;
		}
		base = path ? strrchr(path, '/') : NULL;
		snprintf(unnamed, sizeof(unnamed), "%.64s+0x%llx",
			 base ? base + 1 : path ? path : "[unknown]", (unsigned long long)start);
		rf.name = unnamed;
		rf.unnamed = true;
	}
	frames_push(out, &rf);
}

/*
 * User frames, leaf first. With a trusted native stack, each native frame
 * inside the eval loop stands for one eval-loop run and is replaced by the
 * Python frames that run executed; C frames stay where they are. Without
 * one, the Python frames alone.
 */
/* Drops shim frames from a copy of the stack, flagging the frame inside
 * each shim as the entry of its eval-loop run. */
static void strip_shims(const struct pyb_stack *in, struct pyb_stack *out)
{
	uint32_t len = in->len > PYB_MAX_FRAMES ? PYB_MAX_FRAMES : in->len;

	out->len = 0;
	out->flags = in->flags;
	out->pid = in->pid;
	for (uint32_t i = 0; i < len; i++) {
		if (in->frames[i].flags & PYB_FRAME_SHIM) {
			if (out->len)
				out->frames[out->len - 1].flags |= PYB_FRAME_ENTRY;
			continue;
		}
		out->frames[out->len++] = in->frames[i];
	}
}

/* The outermost eval-loop frame of a native stack (leaf first), or -1:
 * what is below it (the interpreter's start-up, a thread's bootstrap)
 * runs no Python code. */
static int outermost_eval(const struct py_target *t, const uint64_t *ips, int nips)
{
	for (int i = nips - 1; i >= 0; i--)
		if (py_process_in_eval(&t->proc, ips[i]))
			return i;
	return -1;
}

/* A native stack as BPF recorded it: frames, leaf first, and the mapping
 * generation they are named by. */
struct native_walk {
	uint64_t ips[MAX_NATIVE];
	int n;
	uint32_t gen, end;
};

static void build_user(struct stack_collector *c, struct py_registry *reg, struct py_target *t,
		       const struct pyb_stack *st, const struct native_walk *w, bool startup,
		       struct frame_list *out, uint32_t keep, int *cut_at)
{
	uint32_t next = 0, len = st ? st->len : 0;
	const uint64_t *ips = w->ips;
	int nips = w->n;
	int outermost;
	bool unplaced;

	/*
	 * The process's mappings changed since BPF's trie was read (the walk
	 * stopped at the leaf), or what was mapped when it was taken is no
	 * longer known: its native frames are not named after another file.
	 * Python frames alone, marked.
	 */
	if (t && t->native && nips > 0 &&
	    (w->end == PYB_NATIVE_MAPS_CHANGED ||
	     !native_symbols_has_gen(reg->nsyms, t->pid, w->gen))) {
		c->native_changed++;
		frames_push_marker(out, MAPPING_CHANGED_MARKER);
		nips = 0;
	}
	outermost = t && t->native && len > 0 ? outermost_eval(t, ips, nips) : -1;

	/*
	 * Python frames but a native stack that never enters the eval loop:
	 * the walk ended before it (code without unwind information, JIT
	 * code). What it walked, the leaf and its callers, is C code the
	 * innermost Python frame called: kept there, marked where the walk
	 * stopped, and the summary counts them.
	 */
	unplaced = t && t->native && nips > 0 && len > 0 && outermost < 0;
	if (unplaced)
		c->native_unplaced++;
	if (outermost >= 0 && !startup)
		nips = outermost + 1;
	if (t && t->native && nips > 0) {
		for (int i = 0; i < nips; i++) {
			bool eval = py_process_in_eval(&t->proc, ips[i]);

			if (eval && next < len) {
				/* one eval-loop run: frames up to and including its entry */
				do {
					push_python(c, reg, t->pid, &st->frames[next], out);
					if (next + 1 == keep)
						*cut_at = out->n;
				} while (!(st->frames[next++].flags & PYB_FRAME_ENTRY) &&
					 next < len);
				continue;
			}
			push_native(c, reg, t, w->gen, ips[i], i > 0, out);
		}
		/* the walk's last frame is shown: say why it is the last */
		if (nips == w->n && (unplaced || native_end_early(w->end)))
			frames_push_marker(out, native_end_marker(w->end));
	}
	for (; next < len; next++) {
		push_python(c, reg, t ? t->pid : (pid_t)st->pid, &st->frames[next], out);
		if (next + 1 == keep)
			*cut_at = out->n;
	}
	if (st && (st->flags & PYB_STACK_TRUNCATED))
		frames_push_marker(out, "[truncated]");
	if (st && (st->flags & PYB_STACK_READ_ERROR))
		frames_push_marker(out, "[unreadable frame]");
}

/*
 * --async: how many of the (shim-free) Python frames belong to the task the
 * sample ran in, the task, and the outermost of those frames (the task's
 * coroutine); 0 when it ran in none we could name.
 */
static uint32_t task_frames(struct stack_collector *c, const struct stack_filter *f,
			    const struct pyb_count_key *k, const struct pyb_stack *raw,
			    uint64_t value, const struct async_task **task,
			    const struct pyb_frame **coro)
{
	uint32_t keep = 0;

	*task = NULL;
	*coro = NULL;
	if (f->tasks)
		c->all_value += value;
	if (!f->tasks || !k->task_depth || !raw)
		return 0;
	*task = async_tasks_get(f->tasks, (pid_t)k->pid, k->task);
	if (!*task) {
		c->untasked_value += value;
		return 0;
	}
	for (uint32_t i = 0; i < k->task_depth && i < raw->len && i < PYB_MAX_FRAMES; i++) {
		if (raw->frames[i].flags & PYB_FRAME_SHIM)
			continue;
		keep++;
		*coro = &raw->frames[i];
	}
	c->task_value += value;
	return keep;
}

/*
 * The label of the task frame a sample of task is rooted in, into buf: the
 * task's name, or its coroutine's as read while it lived; for a task that
 * ended before it was read, grouped by coroutine, the coroutine of the
 * sample's own outermost task frame coro, named as the sample's frames are
 * (only if its code is still the code BPF saw, and is the task's).
 */
static const char *task_label(struct py_registry *reg, const struct async_task *task,
			      const struct pyb_frame *coro, char *buf, size_t len)
{
	const struct code_name *e;

	if (!task->nroot)
		return NULL;
	if (!task->coro_from_sample)
		return task->root[task->nroot - 1].task_name;
	e = coro && coro->code == task->code && !(coro->flags & PYB_FRAME_HIDDEN)
		    ? code_names_find(&reg->names, task->pid, coro->code, coro->ident)
		    : NULL;
	snprintf(buf, len, "%s", e && e->resolved ? e->name : ASYNC_UNKNOWN_COROUTINE);
	return buf;
}

/* Replaces the frames outside the task (from cut_at on, leaf-first list)
 * with the task's root: "<task LABEL>" and the tasks awaiting it. */
static void root_in_task(struct frame_list *user, int cut_at, const struct async_task *task,
			 const char *label)
{
	char own[PY_NAME_MAX + 16];

	user->n = cut_at;
	for (int i = task->nroot - 1; i >= 0; i--) {
		const struct async_root_frame *r = &task->root[i];
		struct report_frame f = {
			.kind = r->task ? REPORT_FRAME_MARKER : REPORT_FRAME_PYTHON,
			.name = r->name,
			.file = r->file,
			.line = r->line >= 0 ? r->line : REPORT_LINE_UNKNOWN,
			.first_line = r->first_line > 0 ? r->first_line : 0,
		};

		if (i == task->nroot - 1 && task->coro_from_sample && label) {
			snprintf(own, sizeof(own), "<task %s>", label);
			f.name = own;
		}
		frames_push(user, &f);
	}
}

/* Native stack id (native_stacks) into w; 0 for PYB_STACK_ID_NONE (none
 * was taken), or -1. */
static int read_native(int fd, int32_t id, struct native_walk *w)
{
	struct pyb_native_stack ns;

	w->n = 0;
	if (id == PYB_STACK_ID_NONE)
		return 0;
	if (id < 0 || fd < 0 || bpf_lookup_elem(fd, &id, &ns) < 0)
		return -1;
	w->n = ns.len > PYB_MAX_NATIVE ? PYB_MAX_NATIVE : (int)ns.len;
	w->gen = ns.gen;
	w->end = ns.end;
	memcpy(w->ips, ns.ips, (size_t)w->n * sizeof(*w->ips));
	return 0;
}

/* Whether a kernel frame is the tracing machinery's own: some kernels put
 * the tracepoint's iterator (__traceiter_sched_switch) or BPF's entry on
 * top of a stack taken in a tracepoint program, above where the thread
 * really is (__schedule): not a frame of the thread's. */
static bool tracing_frame(const char *name)
{
	static const char *const own[] = { "__traceiter_", "__bpf_trace_", "bpf_trace_run",
					   "trace_call_bpf", "perf_trace_", "__probestub_" };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strncmp(name, own[i], strlen(own[i])) == 0)
			return true;
	return false;
}

/* Frames of stack id (0 for PYB_STACK_ID_NONE: none was taken), or -1. */
static int read_stack(int fd, int32_t id, uint64_t *ips)
{
	uint64_t raw[MAX_NATIVE] = { 0 };
	int n = 0;

	if (id == PYB_STACK_ID_NONE)
		return 0;
	if (id < 0 || bpf_lookup_elem(fd, &id, raw) < 0)
		return -1;
	while (n < MAX_NATIVE && raw[n])
		ips[n] = raw[n], n++;
	return n;
}

/* leaves: up to two markers that end the row, NULL for none; task: the
 * asyncio task the row is rooted in, or NULL */
static int add_row(struct report *out, const struct pyb_count_key *k, struct frame_list *user,
		   const char *user_marker, struct frame_list *kernel, const char *const leaves[2],
		   const char *task, const char *thread_name, uint64_t value)
{
	int n = 0, rc, nuser = user->n;
	uint32_t *v = malloc((size_t)(user->n + kernel->n + 3) * sizeof(*v));
	char comm[16];

	if (!v)
		return -1;
	/* root first: user frames from the outermost, then kernel frames */
	for (int i = user->n - 1; i >= 0; i--)
		v[n++] = user->v[i];
	if (user_marker) {
		long m = report_intern_marker(out, user_marker);

		if (m >= 0)
			v[n++] = (uint32_t)m, nuser++;
	}
	for (int i = kernel->n - 1; i >= 0; i--)
		v[n++] = kernel->v[i];
	for (int i = 0; i < 2; i++) {
		long m = leaves[i] ? report_intern_marker(out, leaves[i]) : -1;

		if (m >= 0)
			v[n++] = (uint32_t)m;
	}
	memcpy(comm, k->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	/* BPF could not name another thread (pygil's holders): ask /proc */
	if (!comm[0] && proc_comm((pid_t)k->pid, (pid_t)k->tid, comm, sizeof(comm)) < 0)
		snprintf(comm, sizeof(comm), "?");
	rc = report_add_row(out, (pid_t)k->pid, (pid_t)k->tid, comm, v, n, nuser, kernel->n,
			    value);
	if (rc == 0 && task)
		rc = report_row_set_task(&out->rows[out->n - 1], task);
	if (rc == 0 && thread_name)
		rc = report_row_set_thread_name(&out->rows[out->n - 1], thread_name);
	free(v);
	return rc;
}

/* The frames that end a row: why it waited (waiting for a CPU, or the
 * tool's reason), then whether the wait was still going on at the end. */
static void leaf_markers(const struct stack_filter *f, const struct pyb_count_key *k,
			 const char *leaves[2])
{
	bool runnable = k->kind == PYB_KIND_RUNNABLE;

	leaves[0] = runnable ? RUNNABLE_MARKER : f->leaf ? f->leaf(f->leaf_ctx, k) : NULL;
	leaves[1] = NULL;
	if (!runnable && (k->flags & PYB_COUNT_OPEN))
		leaves[1] = k->kind == PYB_KIND_GIL_WAIT ? STILL_WAITING_MARKER
							 : STILL_BLOCKED_MARKER;
}

/* ---- what periodic output keeps -------------------------------------- */

static void keep_clear(struct stack_collector *c)
{
	c->nkeep_py = c->nkeep_ids = 0;
}

static void keep_push(void **v, size_t *n, size_t *cap, size_t elem, const void *x)
{
	if (*n == *cap) {
		size_t grow = *cap ? *cap * 2 : 1024;
		void *g = realloc(*v, grow * elem);

		if (!g)
			return;
		*v = g;
		*cap = grow;
	}
	memcpy((char *)*v + *n * elem, x, elem);
	(*n)++;
}

static void keep_note(struct stack_collector *c, const struct pyb_count_key *k)
{
	uint32_t ids[2] = { (uint32_t)k->user_stack, (uint32_t)k->kernel_stack };

	if (k->pystack)
		keep_push((void **)&c->keep_py, &c->nkeep_py, &c->cap_keep_py, sizeof(uint64_t),
			  &k->pystack);
	for (int i = 0; i < 2; i++)
		if ((int32_t)ids[i] >= 0)
			keep_push((void **)&c->keep_ids, &c->nkeep_ids, &c->cap_keep_ids,
				  sizeof(uint32_t), &ids[i]);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Deletes the keys of map fd (key_size 8 or 4) not in keep (sorted), if
 * it holds more than max / 2 entries. */
static size_t prune_map(int fd, size_t key_size, const void *keep, size_t nkeep, uint32_t max)
{
	uint8_t key[8] = { 0 }, next[8];
	uint8_t *keys = NULL;
	size_t n = 0, cap = 0, deleted = 0;
	bool first = true;

	if (fd < 0)
		return 0;
	while (bpf_get_next_key(fd, first ? NULL : key, next) == 0) {
		first = false;
		memcpy(key, next, key_size);
		if (n == cap) {
			size_t grow = cap ? cap * 2 : 4096;
			uint8_t *g = realloc(keys, grow * key_size);

			if (!g)
				break;
			keys = g;
			cap = grow;
		}
		memcpy(keys + n++ * key_size, key, key_size);
	}
	for (size_t i = 0; n > max / 2 && i < n; i++)
		if ((!nkeep || !bsearch(keys + i * key_size, keep, nkeep, key_size,
					key_size == 8 ? u64_cmp : u32_cmp)) &&
		    bpf_delete_elem(fd, keys + i * key_size) == 0)
			deleted++;
	free(keys);
	return deleted;
}

size_t stack_collector_prune(struct stack_collector *c, const struct stack_maps *maps,
			     uint32_t pystacks_max, uint32_t stacks_max, uint32_t native_max)
{
	if (c->nkeep_py)
		qsort(c->keep_py, c->nkeep_py, sizeof(*c->keep_py), u64_cmp);
	if (c->nkeep_ids)
		qsort(c->keep_ids, c->nkeep_ids, sizeof(*c->keep_ids), u32_cmp);
	return prune_map(maps->pystacks_fd, 8, c->keep_py, c->nkeep_py, pystacks_max) +
	       prune_map(maps->stacks_fd, 4, c->keep_ids, c->nkeep_ids, stacks_max) +
	       prune_map(maps->native_stacks_fd, 4, c->keep_ids, c->nkeep_ids, native_max);
}

/* ---- reading the counts --------------------------------------------- */

struct count_entry {
	struct pyb_count_key key;
	uint64_t value;
};

/*
 * Every (key, value) of the counts map into *out (malloc'ed); returns how
 * many. consume: each is deleted as it is read (lookup-and-delete, one
 * call: what BPF adds after it lands in a new entry, for the next read).
 */
static size_t read_counts(int fd, bool consume, struct count_entry **out)
{
	struct pyb_count_key key, next;
	struct count_entry *v = NULL;
	size_t n = 0, cap = 0;
	bool first = true;

	/* the keys first: deleting while walking would restart the walk */
	while (bpf_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		if (n == cap) {
			size_t grow = cap ? cap * 2 : 1024;
			struct count_entry *g = realloc(v, grow * sizeof(*g));

			if (!g)
				break;
			v = g;
			cap = grow;
		}
		v[n++].key = key;
	}
	for (size_t i = 0; i < n;) {
		int rc = consume ? bpf_lookup_and_delete(fd, &v[i].key, &v[i].value)
				 : bpf_lookup_elem(fd, &v[i].key, &v[i].value);

		/* kernels before 5.14 cannot lookup-and-delete a hash entry */
		if (rc < 0 && consume && (errno == EINVAL || errno == ENOTSUPP || errno == EOPNOTSUPP)) {
			rc = bpf_lookup_elem(fd, &v[i].key, &v[i].value);
			if (rc == 0)
				bpf_delete_elem(fd, &v[i].key);
		}
		if (rc < 0) /* gone meanwhile */
			v[i] = v[--n];
		else
			i++;
	}
	*out = v;
	return n;
}

int stack_collector_collect(struct stack_collector *c, struct py_registry *reg,
			    const struct stack_maps *maps, const struct stack_filter *f,
			    struct report *out)
{
	struct pyb_stack *st = malloc(sizeof(*st)), *raw = malloc(sizeof(*raw));
	struct native_walk *walk = malloc(sizeof(*walk));
	struct frame_list user = { .rep = out }, kernel = { .rep = out };
	struct count_entry *counts = NULL;
	size_t ncounts;
	uint64_t ips[MAX_NATIVE];

	if (!st || !raw || !walk) {
		free(st);
		free(raw);
		free(walk);
		return -1;
	}
	if (f->kernel_stacks && !c->ksyms)
		c->ksyms = bcc_symcache_new(-1, NULL);
	ncounts = read_counts(maps->counts_fd, f->consume, &counts);
	if (!f->consume) /* the whole run again (pygil reads it per kind) */
		c->native_unplaced = c->native_changed = 0;
	if (f->consume)
		keep_clear(c);
	for (size_t i = 0; i < ncounts; i++) {
		struct pyb_count_key key = counts[i].key;
		uint64_t value = counts[i].value;
		struct py_target *t;
		const struct async_task *task;
		const struct pyb_frame *coro;
		const char *leaves[2], *label = NULL;
		char label_buf[PY_NAME_MAX];
		bool have_py, runnable;
		uint32_t keep;
		int n, cut_at = -1;

		if (f->consume)
			keep_note(c, &key);
		if (f->only_tid && (pid_t)key.tid != f->only_tid)
			continue;
		if (f->only_kind >= 0 && key.kind != (uint32_t)f->only_kind)
			continue;
		if (key.kind == PYB_KIND_SAMPLE && f->sample_weight)
			value *= f->sample_weight;
		runnable = key.kind == PYB_KIND_RUNNABLE;
		if (runnable) {
			out->runnable_total += value;
			if (!f->include_runnable)
				continue;
		}
		out->total += value;
		t = registry_find(reg, (pid_t)key.pid);
		have_py = key.pystack && bpf_lookup_elem(maps->pystacks_fd, &key.pystack, raw) == 0;
		if (have_py)
			strip_shims(raw, st);
		frames_clear(&user);
		frames_clear(&kernel);
		walk->n = 0;
		if (f->user_stacks && t && t->native &&
		    read_native(maps->native_stacks_fd, key.user_stack, walk) < 0)
			c->missed_user += value;
		keep = task_frames(c, f, &key, have_py ? raw : NULL, value, &task, &coro);
		build_user(c, reg, t, have_py ? st : NULL, walk, f->startup_frames, &user,
			   keep ? keep : UINT32_MAX, &cut_at);
		if (keep && cut_at >= 0) {
			label = task_label(reg, task, coro, label_buf, sizeof(label_buf));
			root_in_task(&user, cut_at, task, label);
			if (label)
				string_table_intern(&c->task_roots, label, strlen(label));
		}
		/* never an empty row: a thread state without frames (a thread
		 * starting or ending, an interpreter starting) is marked too */
		if (user.n == 0)
			frames_push_marker(&user, key.pystack && !have_py ? "[lost Python stack]"
									  : "[no Python frames]");
		if (f->kernel_stacks) {
			n = read_stack(maps->stacks_fd, key.kernel_stack, ips);
			for (int i = 0, top = 1; i < n; i++) {
				struct report_frame kf = { .kind = REPORT_FRAME_KERNEL,
							   .addr = ips[i] };
				struct bcc_symbol sym;

				if (c->ksyms && bcc_symcache_resolve_no_demangle(c->ksyms, ips[i],
										   &sym) == 0)
					kf.name = sym.name;
				/* innermost first: the tracepoint's own frames */
				if (top && kf.name && tracing_frame(kf.name))
					continue;
				top = 0;
				frames_push(&kernel, &kf);
			}
			/* sampled in user mode: there is no kernel stack */
			if (n < 0 && key.kernel_stack != PYB_STACK_ID_USER_MODE)
				c->missed_kernel += value;
		}
		leaf_markers(f, &key, leaves);
		/* a collection the thread ran: on top of its user frames */
		add_row(out, &key, &user,
			key.flags & PYB_COUNT_GC ? GC_MARKER
			: key.kind == PYB_KIND_BLOCKED || runnable ? f->offcpu_marker : NULL, &kernel,
			leaves, label,
			thread_names_get(&c->threads, reg, (pid_t)key.pid, (pid_t)key.tid),
			value);
		if (!report_find_proc(out, (pid_t)key.pid) &&
		    report_set_proc(out, (pid_t)key.pid, t ? t->proc.comm : NULL,
				    t ? t->proc.version_str : NULL) == 0 && t)
			report_set_proc_interp(out, (pid_t)key.pid, t->proc.interp_path);
	}
	free(counts);
	free(user.v);
	free(kernel.v);
	free(st);
	free(raw);
	free(walk);
	report_merge_rows(out);
	return 0;
}

int stack_collector_python_label(struct stack_collector *c, struct py_registry *reg,
				 int pystacks_fd, uint64_t pystack, int max_frames,
				 const char *sep, char *buf, size_t len)
{
	struct pyb_stack *raw = malloc(sizeof(*raw)), *st = malloc(sizeof(*st));
	struct report names;
	struct frame_list list = { .rep = &names };
	uint64_t unknown = c->unknown_code; /* labels do not count twice */
	size_t used = 0;
	int rc = -1;

	report_init(&names, false);
	if (len)
		buf[0] = '\0';
	if (!raw || !st || bpf_lookup_elem(pystacks_fd, &pystack, raw) < 0)
		goto out;
	strip_shims(raw, st);
	for (uint32_t i = 0; i < st->len && (int)i < max_frames; i++)
		push_python(c, reg, (pid_t)st->pid, &st->frames[i], &list);
	for (int i = 0; i < list.n && used < len; i++) {
		used += (size_t)snprintf(buf + used, len - used, "%s", i ? sep : "");
		if (used < len)
			used += report_frame_label(&names.frames[list.v[i]], buf + used,
						   len - used);
	}
	if ((int)st->len > max_frames && used < len)
		snprintf(buf + used, len - used, "%s...", sep);
	if (!st->len)
		snprintf(buf, len, "[no Python frames]");
	rc = 0;
out:
	c->unknown_code = unknown;
	free(list.v);
	report_free(&names);
	free(raw);
	free(st);
	return rc;
}
