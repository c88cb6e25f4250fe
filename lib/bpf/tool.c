/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/tool.h"

#include <linux/bpf.h>
#include <stdarg.h>
#include <stdio.h>

#include "sys/clock.h"

void tool_cflag(struct tool_cflags *f, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (f->n >= TOOL_MAX_CFLAGS) {
		f->overflow = true;
		return;
	}
	va_start(ap, fmt);
	len = vsnprintf(f->buf[f->n], TOOL_CFLAG_LEN, fmt, ap);
	va_end(ap);
	if (len < 0 || len >= TOOL_CFLAG_LEN) {
		f->overflow = true;
		return;
	}
	f->v[f->n] = f->buf[f->n];
	f->n++;
}

int tool_compile(struct tool_session *s, const char *text, const struct tool_cflags *f)
{
	if (f->overflow) {
		fprintf(stderr, "%s: too many or too long compile flags\n", s->tool);
		return -1;
	}
	if (session_compile(s, text, f->v, f->n) < 0)
		return -1;
	s->pystacks_fd = tool_table(s, "pystacks");
	s->counts_fd = tool_table(s, "counts");
	s->stacks_fd = tool_table(s, "stack_traces");
	s->stats_fd = tool_table(s, "stats");
	return 0;
}

int tool_table(struct tool_session *s, const char *name)
{
	return bpfmod_table_fd(&s->bpf, name);
}

int tool_load(struct tool_session *s, const char *fn, int prog_type)
{
	int fd = bpfmod_load(&s->bpf, fn, prog_type);

	if (fd < 0)
		fprintf(stderr, "%s: %s\n", s->tool, s->bpf.err);
	return fd;
}

void tool_expect_missed_runs(struct tool_session *s, int prog_fd)
{
	bpfmod_expect_misses(&s->bpf, prog_fd);
}

uint64_t tool_expected_misses(struct tool_session *s)
{
	return bpfmod_expected_misses(&s->bpf);
}

int tool_attach_tracepoint(struct tool_session *s, int prog_fd, const char *category,
			   const char *event)
{
	if (bpfmod_attach_tracepoint(&s->bpf, prog_fd, category, event) < 0) {
		fprintf(stderr, "%s: %s\n", s->tool, s->bpf.err);
		return -1;
	}
	return 0;
}

/* The system calls whose entries forget a descriptor's kind, in the
 * order of tool_sched_progs.fd_forget. */
static const char *const fd_forget_calls[TOOL_FD_FORGET] = { "sys_enter_close", "sys_enter_dup2",
							     "sys_enter_dup3" };

int tool_load_sched(struct tool_session *s, struct tool_sched_progs *p)
{
	p->waking = tool_load(s, "tracepoint__sched__sched_waking", BPF_PROG_TYPE_TRACEPOINT);
	if (p->waking < 0)
		return -1;
	p->switched = tool_load(s, "tracepoint__sched__sched_switch", BPF_PROG_TYPE_TRACEPOINT);
	if (p->switched < 0)
		return -1;
	for (int i = 0; i < TOOL_FD_FORGET; i++) {
		char name[64];

		snprintf(name, sizeof(name), "tracepoint__syscalls__%s", fd_forget_calls[i]);
		p->fd_forget[i] = tool_load(s, name, BPF_PROG_TYPE_TRACEPOINT);
		if (p->fd_forget[i] < 0)
			return -1;
	}
	return 0;
}

int tool_attach_sched(struct tool_session *s, const struct tool_sched_progs *p, bool wait_reasons)
{
	for (int i = 0; wait_reasons && i < TOOL_FD_FORGET; i++)
		if (tool_attach_tracepoint(s, p->fd_forget[i], "syscalls", fd_forget_calls[i]) < 0)
			return -1;
	if (tool_attach_tracepoint(s, p->waking, "sched", "sched_waking") < 0)
		return -1;
	return tool_attach_tracepoint(s, p->switched, "sched", "sched_switch");
}

void tool_set_filter(struct tool_session *s, const struct stack_filter *f)
{
	s->filter = *f;
}

struct stack_filter tool_filter(const struct tool_session *s)
{
	return s->filter;
}

void tool_set_tasks(struct tool_session *s, struct async_tasks *tasks)
{
	s->tasks = tasks;
}

void tool_want_gc_flag(struct tool_session *s)
{
	s->gc_flag = true;
}

void tool_on_tick(struct tool_session *s, void (*fn)(struct tool_session *, void *), void *ctx,
		  int tick_ms, bool wake_on_stdin)
{
	s->on_tick = fn;
	s->tick_ctx = ctx;
	s->tick_ms = tick_ms;
	s->wake_on_stdin = wake_on_stdin;
}

void tool_on_active(struct tool_session *s, void (*fn)(void *ctx, struct py_target *t),
		    void *ctx)
{
	s->on_active = fn;
	s->on_active_ctx = ctx;
}

void tool_on_interval(struct tool_session *s, void (*fn)(struct tool_session *, void *),
		      void *ctx, uint64_t interval_ns)
{
	s->on_interval = fn;
	s->interval_ctx = ctx;
	s->interval_ns = interval_ns;
}

uint64_t tool_interval_start_realtime_ns(const struct tool_session *s)
{
	return s->interval_start_realtime_ns;
}

struct py_registry *tool_registry(struct tool_session *s)
{
	return &s->reg;
}

struct stack_collector *tool_collector(struct tool_session *s)
{
	return &s->col;
}

size_t tool_target_count(const struct tool_session *s)
{
	return s->npids;
}

uint64_t tool_start_now(struct tool_session *s)
{
	s->start_ns = monotonic_ns();
	return s->start_ns;
}

uint64_t tool_end_ns(const struct tool_session *s)
{
	return s->end_ns;
}

void tool_name_stacks(struct tool_session *s)
{
	stack_collector_drain(&s->col, &s->reg, s->pystacks_fd);
}
