/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/stack_hist.h"

#include <bcc/libbpf.h>
#include <stdlib.h>
#include <string.h>

#include "report/log2_hist.h"
#include "abi/py_abi.h"
#include "sys/text_escape.h"
#include "sys/plural.h"
#include "sys/grow.h"

struct hist_entry {
	uint32_t pid;
	uint64_t pystack;
	uint64_t total;
	char comm[16];
	struct log2_hist h;
};

struct hist_set {
	struct hist_entry *v;
	size_t n, cap;
};

static int by_key(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->pystack != y->pystack)
		return x->pystack < y->pystack ? -1 : 1;
	return 0;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return by_key(a, b);
}

static struct hist_entry *set_add(struct hist_set *s)
{
	struct hist_entry *v = grow_room(s->v, s->n, &s->cap, 256, sizeof(*v));

	if (!v)
		return NULL;
	s->v = v;
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	return &s->v[s->n++];
}

/* One entry per (pid, Python stack) with its total time. */
static int collect_totals(struct hist_set *s, int counts_fd, unsigned int kind)
{
	struct pyb_count_key key, next;
	bool first = true;
	size_t out = 0;

	while (bpf_get_next_key(counts_fd, first ? NULL : &key, &next) == 0) {
		struct hist_entry *e;
		uint64_t value;

		first = false;
		key = next;
		if (key.kind != kind || bpf_lookup_elem(counts_fd, &key, &value) < 0)
			continue;
		e = set_add(s);
		if (!e)
			return -1;
		e->pid = key.pid;
		e->pystack = key.pystack;
		e->total = value;
		memcpy(e->comm, key.comm, sizeof(e->comm));
		e->comm[sizeof(e->comm) - 1] = '\0';
	}
	/* one row per stack: sum rows that differ only in thread or native stacks */
	qsort(s->v, s->n, sizeof(*s->v), by_key);
	for (size_t i = 0; i < s->n; i++) {
		if (out && by_key(&s->v[out - 1], &s->v[i]) == 0) {
			s->v[out - 1].total += s->v[i].total;
			continue;
		}
		s->v[out++] = s->v[i];
	}
	s->n = out;
	return 0;
}

static void add_counts(struct hist_set *s, int hists_fd)
{
	struct pyb_hist_key key, next;
	bool first = true;

	while (bpf_get_next_key(hists_fd, first ? NULL : &key, &next) == 0) {
		struct hist_entry probe = { .pid = next.pid, .pystack = next.pystack }, *e;
		uint64_t count;

		first = false;
		key = next;
		if (key.slot >= LOG2_HIST_SLOTS || bpf_lookup_elem(hists_fd, &key, &count) < 0)
			continue;
		e = bsearch(&probe, s->v, s->n, sizeof(*s->v), by_key);
		if (e)
			e->h.slots[key.slot] += count;
	}
}

int stack_hist_print(struct stack_collector *col, struct py_registry *reg,
		     const struct stack_hist_maps *maps, unsigned int kind, int top,
		     const char *unit, FILE *out)
{
	struct hist_set s = { 0 };
	char label[4096];
	int printed = 0;

	if (collect_totals(&s, maps->counts_fd, kind) < 0) {
		free(s.v);
		return -1;
	}
	add_counts(&s, maps->hists_fd);
	qsort(s.v, s.n, sizeof(*s.v), by_total_desc);
	for (size_t i = 0; i < s.n && printed < top; i++) {
		struct hist_entry *e = &s.v[i];
		uint64_t events = 0;

		for (int k = 0; k < LOG2_HIST_SLOTS; k++)
			events += e->h.slots[k];
		if (!events)
			continue;
		if (!e->pystack ||
		    stack_collector_python_label(col, reg, maps->pystacks_fd, e->pystack, 8, "\n    ",
					      label, sizeof(label)) < 0)
			snprintf(label, sizeof(label), "[no Python frames]");
		fprintf(out, "%s%s (%u): %llu %s in %llu %s, at\n    %s\n\n", printed ? "\n" : "",
			TEXT_ESC(e->comm), e->pid, (unsigned long long)e->total, unit,
			(unsigned long long)events, plural(events, "wait", "waits"), label);
		/* bcc names the microsecond column "usecs" */
		log2_hist_print(&e->h, strcmp(unit, "us") == 0 ? "usecs" : unit, out);
		printed++;
	}
	free(s.v);
	return printed;
}
