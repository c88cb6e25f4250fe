// SPDX-License-Identifier: Apache-2.0
/*
 * pymem's default mode: the memory Python processes got from the kernel,
 * by the Python + native + kernel stack that asked for it.
 *
 * Resident memory is counted as it is made resident: each page fault on
 * a page that was not present charges a page to the faulting thread's
 * stacks (bpf_c/pymem.bpf.c), so memory mapped but never touched costs
 * nothing until it is. Mapped memory (mmap, munmap, brk, mremap) is
 * counted per process. Each process's own accounting (VmRSS, RssAnon in
 * /proc/PID/status) is read as it is registered and at the end, for the
 * net change to set the stacks against. With -i, one report per interval.
 */
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "periodic.h"
#include "pymem.h"
#include "report/formats.h"
#include "report/row_limit.h"
#include "report/summary.h"
#include "report/units.h"
#include "bpf/mem_totals.h"
#include "bpf/tool.h"
#include "sys/clock.h"
#include "sys/plural.h"
#include "sys/proc_maps.h"
#include "sys/text_escape.h"
#include "sys/grow.h"

extern const char pymem_bpf_text[];

/* At most this many processes get a line of their own (the rest are
 * counted in the summary). */
#define GROWTH_MAX_PROCS 4096
/* How often a process's resident memory is read during the run, so that
 * one that exits keeps its last figure. */
#define GROWTH_LOOK_NS 1000000000ull

struct growth_proc {
	pid_t pid;
	char comm[16];
	struct proc_memory first, last; /* at registration; at the last look */
	struct proc_memory mark;        /* where the current interval began */
	struct pyb_mem_totals mark_totals;
	bool have_first, ended;
};

struct growth {
	const struct pymem_options *o;
	struct tool_session *s;
	struct growth_proc *v;
	size_t n, cap, dropped;
	int totals_fd;
	uint64_t page, last_look_ns;
	struct periodic_output periodic; /* -i with -o */
	struct mem_split split;          /* of the intervals reported so far */
};

static struct growth_proc *find_proc(struct growth *g, pid_t pid)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].pid == pid)
			return &g->v[i];
	return NULL;
}

/* A new entry at the end of g->v, or NULL (counted) when full. */
static struct growth_proc *new_proc(struct growth *g)
{
	struct growth_proc *v = g->n < GROWTH_MAX_PROCS
					? grow_room(g->v, g->n, &g->cap, 16, sizeof(*v))
					: NULL;

	if (!v) {
		g->dropped++;
		return NULL;
	}
	g->v = v;
	return &g->v[g->n++];
}

/* A process registered with BPF: its memory now, its break for BPF. */
static void on_active(void *ctx, struct py_target *t)
{
	struct growth *g = ctx;
	struct growth_proc *p = find_proc(g, t->pid);

	mem_totals_seed_brk(g->totals_fd, t->pid, proc_heap_end(t->pid));
	if (p && !p->ended)
		return; /* an exec: the process goes on */
	/* else a new process, or one with the PID of one that ended: from here */
	if (!p && !(p = new_proc(g)))
		return;
	memset(p, 0, sizeof(*p));
	p->pid = t->pid;
	mem_totals_read(g->totals_fd, t->pid, &p->mark_totals);
	if (proc_comm(t->pid, 0, p->comm, sizeof(p->comm)) < 0)
		p->comm[0] = '\0';
	p->have_first = proc_memory_read(t->pid, &p->first) == 0;
	p->last = p->mark = p->first;
}

/* Reads every process's resident memory (one that exited keeps its last). */
static void look(struct growth *g)
{
	for (size_t i = 0; i < g->n; i++) {
		struct growth_proc *p = &g->v[i];

		if (!p->ended && proc_memory_read(p->pid, &p->last) < 0)
			p->ended = true;
	}
	g->last_look_ns = monotonic_ns();
}

static void on_tick(struct tool_session *s, void *ctx)
{
	struct growth *g = ctx;

	(void)s;
	if (monotonic_ns() - g->last_look_ns >= GROWTH_LOOK_NS)
		look(g);
}

static void signed_bytes(int64_t v, char *buf, size_t len)
{
	if (len < 2)
		return;
	buf[0] = v < 0 ? '-' : '+';
	report_format_bytes((uint64_t)(v < 0 ? -v : v), buf + 1, len - 1);
}

/* One line per process: resident memory from mark to now, and what the
 * faults and mapping calls of the interval said. */
static void print_procs(struct growth *g, FILE *out, bool interval)
{
	char rss0[32], rss1[32], drss[32], danon[32], faulted[32], mapped[32], unmapped[32];

	fprintf(out, "\n%-8s %-16s %11s %11s %12s %12s %11s %11s %11s\n", "PID", "COMM",
		interval ? "RSS BEFORE" : "RSS START", interval ? "RSS NOW" : "RSS END",
		"RSS CHANGE", "ANON CHANGE", "FAULTED IN", "MAPPED", "UNMAPPED");
	for (size_t i = 0; i < g->n; i++) {
		struct growth_proc *p = &g->v[i];
		struct pyb_mem_totals t;
		char comm[64];

		mem_totals_read(g->totals_fd, p->pid, &t);
		text_escaped(comm, sizeof(comm), p->comm);
		if (!p->have_first) {
			snprintf(rss0, sizeof(rss0), "?");
			snprintf(drss, sizeof(drss), "?");
			snprintf(danon, sizeof(danon), "?");
		} else {
			report_format_bytes(p->mark.rss, rss0, sizeof(rss0));
			signed_bytes((int64_t)(p->last.rss - p->mark.rss), drss, sizeof(drss));
			signed_bytes((int64_t)(p->last.anon - p->mark.anon), danon, sizeof(danon));
		}
		report_format_bytes(p->last.rss, rss1, sizeof(rss1));
		if (p->ended)
			strncat(rss1, "*", sizeof(rss1) - strlen(rss1) - 1);
		report_format_bytes((t.faults - p->mark_totals.faults) * g->page, faulted,
				    sizeof(faulted));
		report_format_bytes(t.mapped - p->mark_totals.mapped, mapped, sizeof(mapped));
		report_format_bytes(t.unmapped - p->mark_totals.unmapped, unmapped, sizeof(unmapped));
		fprintf(out, "%-8d %-16s %11s %11s %12s %12s %11s %11s %11s\n", (int)p->pid, comm,
			rss0, rss1, drss, danon, faulted, mapped, unmapped);
	}
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].ended) {
			fprintf(out, "(* exited during the run: its last figure, read at most "
				     "a second before it ended)\n");
			break;
		}
}

/* The next interval starts from here. */
static void mark(struct growth *g)
{
	for (size_t i = 0; i < g->n; i++) {
		g->v[i].mark = g->v[i].last;
		mem_totals_read(g->totals_fd, g->v[i].pid, &g->v[i].mark_totals);
	}
}

static void write_stacks(const struct growth *g, const struct report *rep, FILE *out)
{
	int top = g->o->top < 0 ? 20 : g->o->top;

	if (g->o->cli.format != REPORT_TEXT)
		report_write(rep, g->o->cli.format, out, "bytes", "pymem");
	else
		report_print_top(rep, (size_t)top, "fewer bytes", report_format_bytes, out);
}

/* The text report's end, after the table of processes: the summary of
 * its stacks. */
static void write_summary(const struct growth *g, const struct report *rep, FILE *out)
{
	if (g->o->cli.format != REPORT_TEXT || !rep->n)
		return;
	fprintf(out, "\n");
	report_print_summary(rep, "bytes", NULL, g->o->top ? SUMMARY_PROCS : 0, out);
}

/* -i without -o: a report on stdout every interval. */
static void on_interval(struct tool_session *s, void *ctx)
{
	struct growth *g = ctx;
	FILE *out = g->o->cli.out;
	struct report rep;
	char when[16] = "";
	time_t now = time(NULL);
	struct tm tm;

	mem_counts_split(tool_table(s, "counts"), 0, &g->split); /* before they are consumed */
	if (g->o->cli.output) { /* one file per interval */
		periodic_write(s, &g->periodic);
		look(g);
		print_procs(g, stderr, true);
		mark(g);
		return;
	}
	if (localtime_r(&now, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	look(g);
	report_init(&rep, false);
	session_collect_interval(s, &rep);
	if (g->o->cli.format == REPORT_TEXT)
		fprintf(out, "\n[%s]\n", when);
	write_stacks(g, &rep, out);
	print_procs(g, g->o->cli.format == REPORT_TEXT ? out : stderr, true);
	write_summary(g, &rep, out);
	fflush(out);
	report_free(&rep);
	mark(g);
}

static int compile(struct tool_session *s, const struct pymem_options *o, uint64_t page)
{
	struct tool_cflags f = { 0 };

	tool_cflag(&f, "-DSTACK_STORAGE_SIZE=16384");
	tool_cflag(&f, "-DUSER_STACKS=1");
	tool_cflag(&f, "-DKERNEL_STACKS=1");
	tool_cflag(&f, "-DTHREAD_FILTER=%d", (int)o->cli.tid);
	tool_cflag(&f, "-DPYSTACKS_SIZE=65536");
	tool_cflag(&f, "-DCOUNTS_SIZE=65536");
	tool_cflag(&f, "-DPYB_PYTHON_ROOT=%d", !o->cli.startup_frames);
	tool_cflag(&f, "-DPYB_PAGE_BYTES=%lluULL", (unsigned long long)page);
	return tool_compile(s, pymem_bpf_text, &f);
}

/* The programs (function, tracepoint), in the order they attach:
 * mapping calls' exits before their entries (an entry without its exit
 * would stay pending), then the faults. */
static const char *const progs[][3] = {
	{ "pymem_exit_map_call", "syscalls", "sys_exit_mmap" },
	{ "pymem_exit_map_call", "syscalls", "sys_exit_munmap" },
	{ "pymem_exit_map_call", "syscalls", "sys_exit_mremap" },
	{ "pymem_exit_brk", "syscalls", "sys_exit_brk" },
	{ "pymem_enter_mmap", "syscalls", "sys_enter_mmap" },
	{ "pymem_enter_munmap", "syscalls", "sys_enter_munmap" },
	{ "pymem_enter_mremap", "syscalls", "sys_enter_mremap" },
	{ "tracepoint__exceptions__page_fault_user", "exceptions", "page_fault_user" },
	{ "tracepoint__exceptions__page_fault_kernel", "exceptions", "page_fault_kernel" },
};
#define NPROGS (sizeof(progs) / sizeof(progs[0]))

static int start(const struct pymem_options *o, struct tool_session *s, int *fds)
{
	for (size_t i = 0; i < NPROGS; i++) {
		/* one program on several tracepoints is loaded once */
		fds[i] = i && strcmp(progs[i][0], progs[i - 1][0]) == 0
				 ? fds[i - 1]
				 : tool_load(s, progs[i][0], BPF_PROG_TYPE_TRACEPOINT);
		if (fds[i] < 0)
			return -1;
	}
	/* A BPF read of the target's memory that meets a page not present
	 * faults in the kernel, and the kernel skips this program then: such
	 * a read makes nothing resident (it fails), so nothing is lost. */
	tool_expect_missed_runs(s, fds[NPROGS - 1]); /* page_fault_kernel */
	if (cli_native_chain(&o->cli, s, true, "native_walk_fault", BPF_PROG_TYPE_TRACEPOINT) < 0)
		return -1;
	session_install_signals();
	if (session_start_discovery(s) < 0)
		return -1;
	for (size_t i = 0; i < NPROGS; i++)
		if (tool_attach_tracepoint(s, fds[i], progs[i][1], progs[i][2]) < 0)
			return -1;
	return 0;
}

/* What the stacks do not show, on stderr. */
static void print_summary(struct growth *g, struct tool_session *s, const struct mem_split *sp)
{
	uint64_t faults = 0, prot = 0, kfaults = 0, brk_unknown = 0, counted = sp->python + sp->other;
	char b[32], py[32], other[32], lost[32];

	for (size_t i = 0; i < g->n; i++) {
		struct pyb_mem_totals t;

		mem_totals_read(g->totals_fd, g->v[i].pid, &t);
		faults += t.faults;
		prot += t.prot_faults;
		kfaults += t.kernel_faults;
		brk_unknown += t.brk_unknown;
	}
	report_format_bytes(faults * g->page, b, sizeof(b));
	report_format_bytes(sp->python, py, sizeof(py));
	report_format_bytes(sp->other, other, sizeof(other));
	fprintf(stderr,
		"pymem: %llu %s resident (%s, %llu of them in the kernel on a user buffer): %s "
		"with a Python stack, %s in threads without one\n",
		(unsigned long long)faults,
		plural(faults, "page fault made a page", "page faults made pages"), b,
		(unsigned long long)kfaults, py, other);
	if (faults * g->page > counted) {
		report_format_bytes(faults * g->page - counted, lost, sizeof(lost));
		fprintf(stderr, "pymem: %s of them not attributed to any stack (maps full)\n",
			lost);
	}
	fprintf(stderr,
		"pymem: %llu %s on pages already present (copy on write, write-protect) not "
		"counted as growth",
		(unsigned long long)prot, plural(prot, "fault", "faults"));
	if (brk_unknown)
		fprintf(stderr, "; %llu brk %s before the break was known (not counted as mapped)",
			(unsigned long long)brk_unknown, plural(brk_unknown, "call", "calls"));
	fputc('\n', stderr);
	if (g->dropped)
		fprintf(stderr, "pymem: %zu more %s (beyond the first %d) left out of the table\n",
			g->dropped, plural(g->dropped, "process", "processes"), GROWTH_MAX_PROCS);
	if (g->o->cli.verbose) {
		uint64_t own = tool_expected_misses(s);

		fprintf(stderr,
			"pymem: %llu %s of pymem's own reads of the targets' memory (pages not "
			"present: the read fails, nothing is made resident; not growth)\n",
			(unsigned long long)own, plural(own, "fault", "faults"));
	}
}

static void print_header(const struct pymem_options *o, const struct tool_session *s)
{
	char after[96];

	snprintf(after, sizeof(after), " by Python + native + kernel stack%s",
		 o->interval ? ", a report per interval" : "");
	/* folded stacks on stdout: the header on stderr, out of their way */
	cli_print_header(o->cli.format == REPORT_TEXT || o->cli.output ? stdout : stderr, &o->cli,
			 s, "Tracing memory made resident (bytes) by page faults of ", after);
}

static int run(struct growth *g, struct tool_session *s)
{
	const struct pymem_options *o = g->o;
	struct report rep;
	int rc = 0;

	if (session_start_command(s) < 0)
		return session_end_command(s);
	session_run(s, o->cli.duration);
	look(g);
	if (o->interval) {
		on_interval(s, g); /* the last, partial interval */
		if (o->cli.output)
			fprintf(stderr, "pymem: %u %s written (%s)%s\n", g->periodic.written,
				plural(g->periodic.written, "report", "reports"), o->cli.output,
				g->periodic.failed ? ", some failed" : "");
		rc = g->periodic.failed ? 1 : 0;
	} else {
		if (o->cli.format == REPORT_TEXT && !o->cli.output)
			printf("\n");
		mem_counts_split(tool_table(s, "counts"), 0, &g->split);
		report_init(&rep, false);
		session_collect(s, &rep);
		write_stacks(g, &rep, o->cli.out);
		print_procs(g, o->cli.format == REPORT_TEXT ? o->cli.out : stderr, false);
		write_summary(g, &rep, o->cli.out);
		report_free(&rep);
	}
	session_print_summary(s, "page fault", "page faults");
	print_summary(g, s, &g->split);
	return cli_exit_status(&o->cli, s, rc);
}

int pymem_growth(struct pymem_options *o, struct tool_session *s)
{
	struct growth g = { .o = o, .s = s };
	int fds[NPROGS];
	int rc = 1;
	long page = sysconf(_SC_PAGESIZE);

	g.page = page > 0 ? (uint64_t)page : 4096;
	if (o->cli.format == REPORT_TEXT && o->folded)
		o->cli.format = REPORT_FOLDED;
	if (o->interval && o->cli.output && periodic_check_pattern("pymem", o->cli.output) < 0)
		return 2;
	if (o->cli.ebpf) {
		fputs(pymem_bpf_text, stdout);
		return 0;
	}
	if (cli_prepare_targets(&o->cli, s) < 0 || compile(s, o, g.page) < 0)
		return 1;
	g.totals_fd = tool_table(s, "mem_totals");
	tool_on_active(s, on_active, &g);
	tool_on_tick(s, on_tick, &g, 0, false);
	/* -i with -o: -o names the files of the intervals, not one file */
	if (start(o, s, fds) == 0 &&
	    ((o->interval && o->cli.output) || cli_open_output(&o->cli) == 0)) {
		struct stack_filter f = cli_stack_filter(&o->cli, true, true, NULL);

		tool_set_filter(s, &f);
		if (o->interval) {
			g.periodic = (struct periodic_output){
				.tool = "pymem", .unit = "bytes", .pattern = o->cli.output,
				.format = o->cli.format,
			};
			tool_on_interval(s, on_interval, &g, (uint64_t)o->interval * 1000000000ull);
		}
		tool_start_now(s);
		print_header(o, s);
		rc = run(&g, s);
	}
	if (cli_close_output(&o->cli) < 0)
		rc = 1;
	session_close(s);
	free(g.v);
	return rc;
}
