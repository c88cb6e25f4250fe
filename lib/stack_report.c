/* SPDX-License-Identifier: Apache-2.0 */
#include "stack_report.h"

#include <bcc/bcc_syms.h>
#include <bcc/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc_maps.h"
#include "py_abi.h"

#define MAX_NATIVE 127 /* kernel perf_event_max_stack default */
#define FRAME_MAX 1400

void stack_report_init(struct stack_report *rep, bool user_stacks, bool kernel_stacks,
		       bool delimiter)
{
	memset(rep, 0, sizeof(*rep));
	rep->user_stacks = user_stacks;
	rep->kernel_stacks = kernel_stacks;
	rep->delimiter = delimiter;
	rep->only_kind = -1;
}

void stack_report_free(struct stack_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		free(rep->rows[i].frames);
	free(rep->rows);
	free(rep->seen);
	if (rep->ksyms)
		bcc_free_symcache(rep->ksyms, -1);
	memset(rep, 0, sizeof(*rep));
}

/* Open-addressing set of drained pystack keys (0 is never a key). */
static bool seen_insert(struct stack_report *rep, uint64_t key)
{
	if ((rep->seen_n + 1) * 2 > rep->seen_cap) {
		size_t cap = rep->seen_cap ? rep->seen_cap * 2 : 4096;
		uint64_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return false;
		for (size_t i = 0; i < rep->seen_cap; i++) {
			size_t j;

			if (!rep->seen[i])
				continue;
			for (j = (rep->seen[i] * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1); v[j];
			     j = (j + 1) & (cap - 1))
				;
			v[j] = rep->seen[i];
		}
		free(rep->seen);
		rep->seen = v;
		rep->seen_cap = cap;
	}
	for (size_t j = (key * 0x9e3779b97f4a7c15ULL >> 20) & (rep->seen_cap - 1);;
	     j = (j + 1) & (rep->seen_cap - 1)) {
		if (rep->seen[j] == key)
			return false;
		if (!rep->seen[j]) {
			rep->seen[j] = key;
			rep->seen_n++;
			return true;
		}
	}
}

/* Names the code objects of stored stack key, once; st is scratch space. */
static void name_stack(struct stack_report *rep, struct py_registry *reg, int pystacks_fd,
		       uint64_t key, struct pyb_stack *st)
{
	struct py_target *t;
	struct code_name *e;

	if (!seen_insert(rep, key) || bpf_lookup_elem(pystacks_fd, &key, st) < 0)
		return;
	t = registry_find(reg, (pid_t)st->pid);
	if (!t || t->state != TARGET_ACTIVE)
		return;
	for (uint32_t i = 0; i < st->len && i < PYB_MAX_FRAMES; i++) {
		struct pyb_named_key k = { .pid = st->pid,
					   .code = st->frames[i].code,
					   .ident = st->frames[i].ident };
		uint8_t one = 1;

		if (st->frames[i].flags & PYB_FRAME_SHIM)
			continue;
		e = code_names_get(&reg->names, &t->proc, k.code, k.ident);
		/* named: BPF need not say so again (a failure is retried) */
		if (e && e->resolved && reg->named_fd >= 0)
			bpf_update_elem(reg->named_fd, &k, &one, BPF_ANY);
	}
}

void stack_report_name_stack(struct stack_report *rep, struct py_registry *reg, int pystacks_fd,
			     uint64_t key)
{
	struct pyb_stack *st = malloc(sizeof(*st));

	if (!st)
		return;
	name_stack(rep, reg, pystacks_fd, key, st);
	free(st);
}

void stack_report_drain(struct stack_report *rep, struct py_registry *reg, int pystacks_fd)
{
	uint64_t key, next;
	struct pyb_stack *st = malloc(sizeof(*st));
	bool first = true;

	if (!st)
		return;
	while (bpf_get_next_key(pystacks_fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		name_stack(rep, reg, pystacks_fd, key, st);
	}
	free(st);
}

/* Growing list of frame names, leaf first while it is built. */
struct frame_list {
	char **v;
	int n, cap;
};

static void frames_push(struct frame_list *l, const char *name)
{
	char *copy;

	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 64;
		char **v = realloc(l->v, (size_t)cap * sizeof(*v));

		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return;
	/* ';' separates frames in folded output: never inside a name */
	for (char *p = copy; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = ':';
	l->v[l->n++] = copy;
}

static void frames_clear(struct frame_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
}

static void push_python(struct stack_report *rep, struct py_registry *reg, pid_t pid,
			const struct pyb_frame *f, struct frame_list *out)
{
	struct code_name *e = code_names_find(&reg->names, pid, f->code, f->ident);
	char buf[FRAME_MAX];

	if (!e || !e->resolved)
		rep->unknown_code++;
	if (e)
		code_name_format(e, f->instr_offset, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "[unknown code 0x%llx]", (unsigned long long)f->code);
	frames_push(out, buf);
}

static void native_name(void *syms, uint64_t ip, char *buf, size_t len)
{
	struct bcc_symbol sym;

	if (syms && bcc_symcache_resolve(syms, ip, &sym) == 0) {
		snprintf(buf, len, "%s", sym.demangle_name);
		bcc_symbol_free_demangle_name(&sym);
		return;
	}
	snprintf(buf, len, "[unknown]");
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

static bool passes_eval_loop(const struct py_target *t, const uint64_t *ips, int nips)
{
	for (int i = 0; i < nips; i++)
		if (py_process_in_eval(&t->proc, ips[i]))
			return true;
	return false;
}

static void build_user(struct stack_report *rep, struct py_registry *reg, struct py_target *t,
		       const struct pyb_stack *st, const uint64_t *ips, int nips,
		       uint64_t value, struct frame_list *out)
{
	uint32_t next = 0, len = st ? st->len : 0;

	/*
	 * Python frames but a native stack that never enters the eval loop:
	 * the frame-pointer chain broke inside the interpreter (or the loop
	 * lives in a function we cannot see), so there is no place to put the
	 * native frames. Python frames alone, and the summary says so.
	 */
	if (t && t->native_syms && nips > 0 && len > 0 && !passes_eval_loop(t, ips, nips)) {
		rep->native_unplaced += value;
		nips = 0;
	}
	if (t && t->native_syms && nips > 0) {
		for (int i = 0; i < nips; i++) {
			char buf[FRAME_MAX];
			bool eval = py_process_in_eval(&t->proc, ips[i]);

			if (eval && next < len) {
				/* one eval-loop run: frames up to and including its entry */
				do {
					push_python(rep, reg, t->pid, &st->frames[next], out);
				} while (!(st->frames[next++].flags & PYB_FRAME_ENTRY) &&
					 next < len);
				continue;
			}
			native_name(t->native_syms, ips[i], buf, sizeof(buf));
			frames_push(out, buf);
		}
	}
	for (; next < len; next++)
		push_python(rep, reg, t ? t->pid : (pid_t)st->pid, &st->frames[next], out);
	if (st && (st->flags & PYB_STACK_TRUNCATED))
		frames_push(out, "[truncated]");
	if (st && (st->flags & PYB_STACK_READ_ERROR))
		frames_push(out, "[unreadable frame]");
}

static int read_stack(int fd, int32_t id, uint64_t *ips)
{
	uint64_t raw[MAX_NATIVE] = { 0 };
	int n = 0;

	if (id < 0 || bpf_lookup_elem(fd, &id, raw) < 0)
		return -1;
	while (n < MAX_NATIVE && raw[n])
		ips[n] = raw[n], n++;
	return n;
}

static int add_row(struct stack_report *rep, const struct pyb_count_key *k, struct frame_list *user,
		   struct frame_list *kernel, const char *leaf_marker, uint64_t value)
{
	size_t len = 1 + (leaf_marker ? strlen(leaf_marker) + 1 : 0);
	char *s, *p;
	struct report_row *row;

	for (int i = 0; i < user->n; i++)
		len += strlen(user->v[i]) + 1;
	for (int i = 0; i < kernel->n; i++)
		len += strlen(kernel->v[i]) + 5;
	s = malloc(len);
	if (!s)
		return -1;
	p = s;
	/* root first: user frames from the outermost, then kernel frames */
	for (int i = user->n - 1; i >= 0; i--)
		p += sprintf(p, "%s%s", p == s ? "" : ";", user->v[i]);
	for (int i = kernel->n - 1; i >= 0; i--)
		p += sprintf(p, "%s%s_[k]", p == s ? "" : ";", kernel->v[i]);
	if (leaf_marker)
		p += sprintf(p, "%s%s", p == s ? "" : ";", leaf_marker);
	*p = '\0';
	if (rep->n == rep->cap) {
		size_t cap = rep->cap ? rep->cap * 2 : 1024;
		struct report_row *v = realloc(rep->rows, cap * sizeof(*v));

		if (!v) {
			free(s);
			return -1;
		}
		rep->rows = v;
		rep->cap = cap;
	}
	row = &rep->rows[rep->n++];
	row->pid = (pid_t)k->pid;
	memcpy(row->comm, k->comm, sizeof(row->comm));
	row->comm[sizeof(row->comm) - 1] = '\0';
	/* BPF could not name another thread (pygil's holders): ask /proc */
	if (!row->comm[0] && proc_comm((pid_t)k->pid, (pid_t)k->tid, row->comm, sizeof(row->comm)) < 0)
		snprintf(row->comm, sizeof(row->comm), "?");
	row->frames = s;
	row->nuser = user->n;
	row->nkernel = kernel->n;
	row->value = value;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	c = strcmp(x->comm, y->comm);
	return c ? c : strcmp(x->frames, y->frames);
}

/* Same process, thread name and frames (different threads): one row. */
static void merge_rows(struct stack_report *rep)
{
	size_t out = 0;

	qsort(rep->rows, rep->n, sizeof(*rep->rows), row_cmp);
	for (size_t i = 0; i < rep->n; i++) {
		if (out && row_cmp(&rep->rows[out - 1], &rep->rows[i]) == 0 &&
		    rep->rows[out - 1].nkernel == rep->rows[i].nkernel) {
			rep->rows[out - 1].value += rep->rows[i].value;
			free(rep->rows[i].frames);
			continue;
		}
		rep->rows[out++] = rep->rows[i];
	}
	rep->n = out;
}

int stack_report_collect(struct stack_report *rep, struct py_registry *reg, int counts_fd,
			 int pystacks_fd, int stacks_fd)
{
	struct pyb_count_key key, next;
	struct pyb_stack *st = malloc(sizeof(*st)), *raw = malloc(sizeof(*raw));
	struct frame_list user = { 0 }, kernel = { 0 };
	uint64_t ips[MAX_NATIVE];
	bool first = true;

	if (!st || !raw) {
		free(st);
		free(raw);
		return -1;
	}
	if (rep->kernel_stacks && !rep->ksyms)
		rep->ksyms = bcc_symcache_new(-1, NULL);
	while (bpf_get_next_key(counts_fd, first ? NULL : &key, &next) == 0) {
		uint64_t value = 0;
		struct py_target *t;
		bool have_py, runnable;
		int n;

		first = false;
		key = next;
		if ((rep->only_tid && (pid_t)key.tid != rep->only_tid) ||
		    bpf_lookup_elem(counts_fd, &key, &value) < 0)
			continue;
		if (rep->only_kind >= 0 && key.kind != (uint32_t)rep->only_kind)
			continue;
		runnable = key.kind == PYB_KIND_RUNNABLE;
		if (runnable) {
			rep->runnable_total += value;
			if (!rep->include_runnable)
				continue;
		}
		rep->total += value;
		t = registry_find(reg, (pid_t)key.pid);
		have_py = key.pystack && bpf_lookup_elem(pystacks_fd, &key.pystack, raw) == 0;
		if (have_py)
			strip_shims(raw, st);
		frames_clear(&user);
		frames_clear(&kernel);
		n = 0;
		if (rep->user_stacks && t && t->native_syms) {
			n = read_stack(stacks_fd, key.user_stack, ips);
			if (n < 0) {
				rep->missed_user += value;
				n = 0;
			}
		}
		build_user(rep, reg, t, have_py ? st : NULL, ips, n, value, &user);
		/* never an empty row: a thread state without frames (a thread
		 * starting or ending, an interpreter starting) is marked too */
		if (user.n == 0)
			frames_push(&user, key.pystack && !have_py ? "[lost Python stack]"
								   : "[no Python frames]");
		if (rep->kernel_stacks) {
			n = read_stack(stacks_fd, key.kernel_stack, ips);
			for (int i = 0; i < n; i++) {
				struct bcc_symbol sym;

				if (rep->ksyms && bcc_symcache_resolve_no_demangle(rep->ksyms, ips[i],
										   &sym) == 0)
					frames_push(&kernel, sym.name);
				else
					frames_push(&kernel, "[unknown]");
			}
			/* -EFAULT: sampled in user mode, there is no kernel stack */
			if (n < 0 && key.kernel_stack != -EFAULT)
				rep->missed_kernel += value;
		}
		add_row(rep, &key, &user, &kernel, runnable ? RUNNABLE_MARKER : NULL, value);
	}
	frames_clear(&user);
	frames_clear(&kernel);
	free(user.v);
	free(kernel.v);
	free(st);
	free(raw);
	merge_rows(rep);
	return 0;
}

static int value_cmp(const void *a, const void *b)
{
	const struct report_row *x = *(const struct report_row *const *)a;
	const struct report_row *y = *(const struct report_row *const *)b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return row_cmp(x, y);
}

static const struct report_row **sorted_rows(const struct stack_report *rep)
{
	const struct report_row **v = malloc((rep->n ? rep->n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < rep->n; i++)
		v[i] = &rep->rows[i];
	qsort(v, rep->n, sizeof(*v), value_cmp);
	return v;
}

void stack_report_print_text(const struct stack_report *rep, FILE *out)
{
	const struct report_row **v = sorted_rows(rep);

	if (!v)
		return;
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = v[i];
		char *copy = strdup(r->frames), *save = NULL;
		char **frames = calloc((size_t)(r->nuser + r->nkernel) + 2, sizeof(char *));
		int n = 0;

		if (!copy || !frames) {
			free(copy);
			free(frames);
			break;
		}
		for (char *tok = strtok_r(copy, ";", &save); tok && n < r->nuser + r->nkernel + 2;
		     tok = strtok_r(NULL, ";", &save))
			frames[n++] = tok;
		/* leaf first: kernel frames, then user frames */
		for (int k = n - 1; k >= 0; k--) {
			size_t len = strlen(frames[k]);

			if (k == r->nuser - 1 && r->nkernel && rep->delimiter)
				fprintf(out, "    --\n");
			if (k >= r->nuser && k < r->nuser + r->nkernel && len > 4)
				fprintf(out, "    %.*s\n", (int)(len - 4), frames[k]); /* no _[k] */
			else
				fprintf(out, "    %s\n", frames[k]);
		}
		fprintf(out, "    %-16s %s (%d)\n        %llu\n\n", "-", r->comm, (int)r->pid,
			(unsigned long long)r->value);
		free(frames);
		free(copy);
	}
	free(v);
}

void stack_report_print_folded(const struct stack_report *rep, FILE *out)
{
	const struct report_row **v = sorted_rows(rep);

	if (!v)
		return;
	for (size_t i = 0; i < rep->n; i++) {
		const struct report_row *r = v[i];
		const char *kernel = r->frames;
		char comm[sizeof(r->comm)];

		/* comm is the root frame: the same rule as for names (frames_push) */
		for (size_t k = 0; k < sizeof(comm); k++)
			comm[k] = r->comm[k] == ';' || r->comm[k] == '\n' ? ':' : r->comm[k];
		/* with -d, a "-" frame between user and kernel frames */
		if (rep->delimiter && r->nkernel && r->nuser) {
			for (int k = 0; k < r->nuser; k++)
				kernel = strchr(kernel, ';') + 1;
			fprintf(out, "%s;%.*s;-;%s %llu\n", comm, (int)(kernel - r->frames - 1),
				r->frames, kernel, (unsigned long long)r->value);
		} else {
			fprintf(out, "%s;%s %llu\n", comm, r->frames, (unsigned long long)r->value);
		}
	}
	free(v);
}

int stack_report_python_label(struct stack_report *rep, struct py_registry *reg,
			      int pystacks_fd, uint64_t pystack, int max_frames, const char *sep,
			      char *buf, size_t len)
{
	struct pyb_stack *raw = malloc(sizeof(*raw)), *st = malloc(sizeof(*st));
	struct frame_list names = { 0 };
	uint64_t unknown = rep->unknown_code; /* labels do not count twice */
	size_t used = 0;
	int rc = -1;

	if (len)
		buf[0] = '\0';
	if (!raw || !st || bpf_lookup_elem(pystacks_fd, &pystack, raw) < 0)
		goto out;
	strip_shims(raw, st);
	for (uint32_t i = 0; i < st->len && (int)i < max_frames; i++)
		push_python(rep, reg, (pid_t)st->pid, &st->frames[i], &names);
	for (int i = 0; i < names.n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s", i ? sep : "", names.v[i]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	if ((int)st->len > max_frames && used < len)
		snprintf(buf + used, len - used, "%s...", sep);
	if (!st->len)
		snprintf(buf, len, "[no Python frames]");
	rc = 0;
out:
	rep->unknown_code = unknown;
	frames_clear(&names);
	free(names.v);
	free(raw);
	free(st);
	return rc;
}
