// SPDX-License-Identifier: Apache-2.0
/*
 * pymem --gc: the cyclic collector's pauses. Each collection with its
 * generation, duration, objects collected and the Python stack that
 * triggered it; per process a log2 histogram of pauses, the total time
 * paused and its share of the run; -i: the same per interval.
 *
 * Exact where the interpreter has CPython's gc__start/gc__done USDT
 * probes (built --with-dtrace, as Debian's are): each process gets its
 * own uprobes, the kernel raising the probes' semaphores in that process
 * (bpf/usdt_attach.h), so it works in chroots and containers too.
 * Sampled elsewhere (pyenv's builds have no probes) and where the probes
 * cannot be attached: GC_SAMPLE_HZ CPU-clock samples of the thread that
 * holds the GIL while the collector's `collecting` flag is set
 * (cpython/gc_flag.h) give the time spent collecting on CPU, without
 * collections or their stacks. The report says which method each process
 * got, and why not the exact one.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <bcc/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pymem.h"
#include "abi/gc_abi.h"
#include "bpf/tool.h"
#include "bpf/usdt_attach.h"
#include "report/json.h"
#include "report/log2_hist.h"
#include "sys/clock.h"
#include "sys/elf_image.h"
#include "sys/plural.h"
#include "sys/text_escape.h"
#include "sys/grow.h"

extern const char pymem_gc_bpf_text[];

#define GC_LOG_SIZE 65536      /* BPF's ring of collections (a power of two) */
#define GC_KEEP_MAX 1000000    /* collections kept for the report; then counted only */
#define GC_TOP_DEFAULT 10      /* longest collections listed per process */
#define GC_GENERATIONS 3
#define GC_SAMPLE_HZ 997       /* the sampled method's rate */
#define STR_(x) #x
#define STR(x) STR_(x)

enum gc_method { GC_UNSEEN, GC_EXACT, GC_SAMPLED, GC_NOT_MEASURED };

/* What one process's collections added up to (over the run, or an interval). */
struct gc_totals {
	uint64_t n, ns, max_ns;
	uint64_t gen_n[GC_GENERATIONS + 1]; /* the last: a generation out of range */
	int64_t collected;
};

struct gc_proc {
	pid_t pid;
	char comm[32];
	char version[24];
	enum gc_method method;
	char why[200];           /* GC_SAMPLED, GC_NOT_MEASURED: why not exact */
	uint64_t samples;        /* GC_SAMPLED: samples taken collecting */
	int fds[2];              /* the uprobes (gc__done, gc__start); -1 none */
	struct gc_totals all, interval;
	struct log2_hist hist;   /* pauses in microseconds */
};

struct gc_run {
	struct pymem_options *o;
	struct tool_session *s;
	int start_fd, done_fd, probes_fd, log_fd, head_fd, sampled_fd;
	uint64_t period_ns;        /* the sampled method's sample period */
	struct gc_proc *procs;
	size_t nprocs, cap_procs;
	struct pyb_gc_event *log;  /* kept collections, in order */
	size_t nlog, cap_log;
	uint64_t read_upto;        /* log entries of BPF's ring read */
	uint64_t lost, dropped;    /* overwritten in BPF's ring; not kept (GC_KEEP_MAX) */
	uint64_t start_ns;         /* monotonic, when tracing began */
	uint64_t next_print_ns, interval_start_ns;
	FILE *table;
};

static struct gc_proc *proc_of(struct gc_run *r, pid_t pid, bool create)
{
	struct gc_proc *p;

	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	if (!create)
		return NULL;
	{
		struct gc_proc *v = grow_room(r->procs, r->nprocs, &r->cap_procs, 16, sizeof(*v));

		if (!v)
			return NULL;
		r->procs = v;
	}
	p = &r->procs[r->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->fds[0] = p->fds[1] = -1;
	return p;
}

static void close_probes(struct gc_proc *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->fds[i] >= 0)
			bpf_close_perf_event_fd(p->fds[i]);
		p->fds[i] = -1;
	}
}

static void not_measured(struct gc_proc *p, const char *why)
{
	p->method = GC_NOT_MEASURED;
	snprintf(p->why, sizeof(p->why), "%s", why);
}

/* Each register's slot in struct pt_regs (gc_abi.h), by DWARF number. */
static const uint8_t pt_regs_slot[XREG_COUNT] = {
	[XREG_RAX] = 10, [XREG_RDX] = 12, [XREG_RCX] = 11, [XREG_RBX] = 5, [XREG_RSI] = 13,
	[XREG_RDI] = 14, [XREG_RBP] = 4, [XREG_RSP] = 19, [XREG_R8] = 9, [XREG_R9] = 8,
	[XREG_R10] = 7, [XREG_R11] = 6, [XREG_R12] = 3, [XREG_R13] = 2, [XREG_R14] = 1,
	[XREG_R15] = 0, [XREG_RIP] = 16,
};

static int usdt_arg(const struct stapsdt_probe *probe, struct pyb_usdt_arg *out)
{
	const struct stapsdt_arg *a = &probe->args[0];

	if (probe->nargs < 1 || !probe->sem_offset || a->reg >= XREG_COUNT)
		return -1;
	out->kind = a->kind == STAPSDT_ARG_REG ? PYB_USDT_REG
		    : a->kind == STAPSDT_ARG_MEM ? PYB_USDT_MEM : PYB_USDT_CONST;
	out->reg = pt_regs_slot[a->reg];
	out->size = a->size;
	out->is_signed = a->is_signed;
	out->value = (int32_t)a->value;
	return 0;
}

/* The exact method: p's probes attached. Returns 0, or -1 with why in err. */
static int attach_probes(struct gc_run *r, struct py_target *t, struct gc_proc *p, char *err,
			 size_t len)
{
	struct stapsdt_probe start, done;
	struct pyb_gc_probes args;
	struct elf_image img;
	uint32_t key = (uint32_t)t->pid;
	int rs, rd;

	if (py_process_open_interp(&t->proc, &img) < 0) {
		snprintf(err, len, "its interpreter's file cannot be read");
		return -1;
	}
	rs = stapsdt_find(&img, "python", "gc__start", &start);
	rd = stapsdt_find(&img, "python", "gc__done", &done);
	elf_image_close(&img);
	if (rs > 0 || rd > 0) {
		snprintf(err, len, "no gc__start/gc__done probes in its interpreter (built "
				   "without --with-dtrace)");
		return -1;
	}
	if (rs < 0 || rd < 0 || usdt_arg(&start, &args.generation) < 0 ||
	    usdt_arg(&done, &args.collected) < 0) {
		snprintf(err, len, "its gc__start/gc__done probes are not of a form pymem knows");
		return -1;
	}
	if (bpf_update_elem(r->probes_fd, &key, &args, BPF_ANY) < 0) {
		snprintf(err, len, "no room for it in BPF's table of processes");
		return -1;
	}
	/* done first: a collection that starts once both are on is paired */
	if ((p->fds[0] = usdt_attach(r->done_fd, t->pid, &t->proc.interp_file, &done, err,
				     len)) < 0 ||
	    (p->fds[1] = usdt_attach(r->start_fd, t->pid, &t->proc.interp_file, &start, err,
				     len)) < 0) {
		close_probes(p);
		bpf_delete_elem(r->probes_fd, &key);
		return -1;
	}
	return 0;
}

/* The method of a process that becomes a target (again after an exec):
 * exact if it can be, else sampled if its collector's flag was found. */
static void on_active(void *ctx, struct py_target *t)
{
	struct gc_run *r = ctx;
	struct gc_proc *p = proc_of(r, t->pid, true);
	uint32_t key = (uint32_t)t->pid;
	uint64_t zero = 0;
	char err[160];

	if (!p)
		return;
	close_probes(p);
	bpf_delete_elem(r->sampled_fd, &key);
	snprintf(p->comm, sizeof(p->comm), "%s", t->proc.comm);
	snprintf(p->version, sizeof(p->version), "%s", t->proc.version_str);
	if (t->proc.free_threaded) {
		not_measured(p, "free-threaded build: not supported");
		return;
	}
	if (attach_probes(r, t, p, err, sizeof(err)) == 0) {
		p->method = GC_EXACT;
		p->why[0] = '\0';
		return;
	}
	if (!t->gc_collecting || !t->gc_gil) {
		not_measured(p, err);
		snprintf(p->why + strlen(p->why), sizeof(p->why) - strlen(p->why),
			 "; not sampled: %s", t->gc_why);
		return;
	}
	if (bpf_update_elem(r->sampled_fd, &key, &zero, BPF_ANY) < 0) {
		not_measured(p, "no room for it in BPF's table of processes");
		return;
	}
	p->method = GC_SAMPLED;
	snprintf(p->why, sizeof(p->why), "%s", err);
}

static void totals_add(struct gc_totals *t, const struct pyb_gc_event *e)
{
	uint32_t g = e->generation >= 0 && e->generation < GC_GENERATIONS
			     ? (uint32_t)e->generation : GC_GENERATIONS;

	t->n++;
	t->ns += e->duration_ns;
	if (e->duration_ns > t->max_ns)
		t->max_ns = e->duration_ns;
	t->gen_n[g]++;
	t->collected += e->collected;
}

static void keep(struct gc_run *r, const struct pyb_gc_event *e)
{
	struct gc_proc *p = proc_of(r, (pid_t)e->pid, true);

	if (r->o->cli.tid && (pid_t)e->tid != r->o->cli.tid)
		return;
	if (p) {
		totals_add(&p->all, e);
		totals_add(&p->interval, e);
		log2_hist_add(&p->hist, (e->duration_ns + 500) / 1000, 1);
	}
	if (r->nlog == GC_KEEP_MAX) {
		r->dropped++;
		return;
	}
	{
		struct pyb_gc_event *v = grow_room(r->log, r->nlog, &r->cap_log, 1024, sizeof(*v));

		if (!v) {
			r->dropped++;
			return;
		}
		r->log = v;
	}
	r->log[r->nlog++] = *e;
}

/* Reads BPF's ring from where the last call stopped: an entry not yet
 * whole is read on the next call, one written over is counted lost. */
static void drain(struct gc_run *r)
{
	uint32_t zero = 0;
	uint64_t head = 0;

	if (bpf_lookup_elem(r->head_fd, &zero, &head) < 0)
		return;
	if (head - r->read_upto > GC_LOG_SIZE) {
		r->lost += head - r->read_upto - GC_LOG_SIZE;
		r->read_upto = head - GC_LOG_SIZE;
	}
	for (; r->read_upto < head; r->read_upto++) {
		uint32_t slot = (uint32_t)(r->read_upto & (GC_LOG_SIZE - 1));
		struct pyb_gc_event e;

		if (bpf_lookup_elem(r->log_fd, &slot, &e) < 0)
			break;
		if (e.seq > r->read_upto + 1) { /* written over meanwhile */
			r->lost++;
			continue;
		}
		if (e.seq != r->read_upto + 1)
			break; /* not whole yet */
		keep(r, &e);
	}
}

static const char *method_name(enum gc_method m)
{
	return m == GC_EXACT     ? "exact (gc__start/gc__done probes)"
	       : m == GC_SAMPLED ? "sampled (the collector's flag, " STR(GC_SAMPLE_HZ) " Hz)"
				 : "not measured";
}

/* GC_SAMPLED: what BPF counted for p so far. */
static void read_samples(struct gc_run *r, struct gc_proc *p)
{
	uint32_t key = (uint32_t)p->pid;
	uint64_t n;

	if (p->method == GC_SAMPLED && bpf_lookup_elem(r->sampled_fd, &key, &n) == 0)
		p->samples = n;
}

static void print_proc_title(FILE *out, const struct gc_proc *p)
{
	fprintf(out, "PID %d (", (int)p->pid);
	text_escape_write(out, p->comm);
	fprintf(out, ")%s%s: %s", p->version[0] ? " Python " : "", p->version,
		method_name(p->method));
	if (p->method != GC_EXACT) {
		fputs(p->method == GC_SAMPLED ? ", not exact: " : ": ", out);
		text_escape_write(out, p->why);
	}
	fputc('\n', out);
}

static void print_totals(FILE *out, const struct gc_totals *t, double run_s)
{
	fprintf(out, "  %" PRIu64 " collection%s (generation 0: %" PRIu64 ", 1: %" PRIu64
		     ", 2: %" PRIu64 "%s), %" PRId64 " objects collected\n",
		t->n, t->n == 1 ? "" : "s", t->gen_n[0], t->gen_n[1], t->gen_n[2],
		t->gen_n[3] ? ", other" : "", t->collected);
	fprintf(out, "  paused %.3f ms", (double)t->ns / 1e6);
	if (run_s >= 0.5)
		fprintf(out, ", %.2f%% of the %.1f s run", 100.0 * (double)t->ns / 1e9 / run_s,
			run_s);
	if (t->n)
		fprintf(out, "; longest %.3f ms, mean %.3f ms", (double)t->max_ns / 1e6,
			(double)t->ns / 1e6 / (double)t->n);
	fputc('\n', out);
}

static int by_duration_desc(const void *a, const void *b)
{
	const struct pyb_gc_event *x = *(const struct pyb_gc_event *const *)a;
	const struct pyb_gc_event *y = *(const struct pyb_gc_event *const *)b;

	return x->duration_ns < y->duration_ns ? 1 : x->duration_ns > y->duration_ns ? -1 : 0;
}

/* The innermost max_frames Python frames of pystack, joined by sep. */
static void stack_label(struct gc_run *r, uint64_t pystack, int max_frames, const char *sep,
			char *buf, size_t len)
{
	if (!pystack || stack_collector_python_label(tool_collector(r->s), tool_registry(r->s),
						     r->s->pystacks_fd, pystack, max_frames, sep, buf,
						     len) < 0)
		snprintf(buf, len, "%s", pystack ? "[lost Python stack]" : "[no Python stack]");
}

/* The longest collections of process p, longest first. */
static void print_longest(struct gc_run *r, const struct gc_proc *p, FILE *out)
{
	const struct pyb_gc_event **v = NULL;
	size_t n = 0, show;
	int top = r->o->top < 0 ? GC_TOP_DEFAULT : r->o->top;
	char label[2048];

	for (size_t i = 0; i < r->nlog; i++)
		n += r->log[i].pid == (uint32_t)p->pid;
	if (!n || !(v = malloc(n * sizeof(*v))))
		return;
	n = 0;
	for (size_t i = 0; i < r->nlog; i++)
		if (r->log[i].pid == (uint32_t)p->pid)
			v[n++] = &r->log[i];
	qsort(v, n, sizeof(*v), by_duration_desc);
	show = top && (size_t)top < n ? (size_t)top : n;
	fprintf(out, "\n  %s collections%s:\n", show < n ? "longest" : "all",
		show < n ? " (--all lists every one)" : "");
	fprintf(out, "  %10s %8s %3s %10s %10s  %s\n", "TIME(s)", "TID", "GEN", "PAUSE(us)",
		"COLLECTED", "TRIGGERED BY (innermost first)");
	for (size_t i = 0; i < show; i++) {
		const struct pyb_gc_event *e = v[i];
		double at = (double)(int64_t)(e->start_ns - r->start_ns) / 1e9;

		stack_label(r, e->pystack, 8, "\n  " "                                               ",
			    label, sizeof(label));
		fprintf(out, "  %10.3f %8u %3d %10.1f %10" PRId64 "  %s\n", at, e->tid,
			e->generation, (double)e->duration_ns / 1e3, e->collected, label);
	}
	free(v);
}

static double run_seconds(const struct gc_run *r, uint64_t end_ns)
{
	return end_ns > r->start_ns ? (double)(end_ns - r->start_ns) / 1e9 : 0;
}

static void print_sampled(struct gc_run *r, struct gc_proc *p, FILE *out, double run_s)
{
	double ms;

	read_samples(r, p);
	ms = (double)(p->samples * r->period_ns) / 1e6;
	fprintf(out, "  about %.1f ms collecting on CPU (%" PRIu64 " sample%s)", ms, p->samples,
		p->samples == 1 ? "" : "s");
	if (run_s >= 0.5)
		fprintf(out, ", %.2f%% of the %.1f s run", ms / 10.0 / run_s, run_s);
	fputs("; collections, their sizes and stacks need the probes\n", out);
}

static void print_text(struct gc_run *r, FILE *out, uint64_t end_ns)
{
	double run_s = run_seconds(r, end_ns);

	if (!r->nprocs)
		fprintf(out, "No Python process was seen.\n");
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gc_proc *p = &r->procs[i];

		if (p->method == GC_UNSEEN)
			continue;
		fputc('\n', out);
		print_proc_title(out, p);
		if (p->method == GC_SAMPLED)
			print_sampled(r, p, out, run_s);
		if (p->method != GC_EXACT)
			continue;
		print_totals(out, &p->all, run_s);
		if (p->all.n) {
			fputc('\n', out);
			log2_hist_print(&p->hist, "usecs", out);
			print_longest(r, p, out);
		}
	}
}

static void json_stack(struct gc_run *r, FILE *out, uint64_t pystack)
{
	static char label[65536];

	stack_label(r, pystack, 64, "\n", label, sizeof(label));
	fputc('[', out);
	for (char *f = label, *nl; f; f = nl) {
		nl = strchr(f, '\n');
		if (nl)
			*nl++ = '\0';
		json_write_string(out, f);
		if (nl)
			fputc(',', out);
	}
	fputc(']', out);
}

/* One document: the processes with their totals, and every collection kept. */
static void print_json(struct gc_run *r, FILE *out, uint64_t end_ns)
{
	double run_s = run_seconds(r, end_ns);
	bool first = true;

	fprintf(out, "{\"duration_s\":%.3f,\"processes\":[", run_s);
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gc_proc *p = &r->procs[i];
		int last = LOG2_HIST_SLOTS - 1;

		if (p->method == GC_UNSEEN)
			continue;
		fprintf(out, "%s{\"pid\":%d,\"comm\":", first ? "" : ",", (int)p->pid);
		first = false;
		json_write_string(out, p->comm);
		fputs(",\"python\":", out);
		json_write_string(out, p->version);
		fprintf(out, ",\"method\":\"%s\"",
			p->method == GC_EXACT ? "exact" : p->method == GC_SAMPLED ? "sampled"
										 : "not measured");
		if (p->method != GC_EXACT) {
			fputs(",\"why\":", out);
			json_write_string(out, p->why);
			if (p->method == GC_SAMPLED) {
				read_samples(r, p);
				fprintf(out, ",\"samples\":%" PRIu64 ",\"sample_hz\":%d,"
					     "\"paused_us\":%.1f",
					p->samples, GC_SAMPLE_HZ,
					(double)(p->samples * r->period_ns) / 1e3);
			}
			fputc('}', out);
			continue;
		}
		fprintf(out,
			",\"collections\":%" PRIu64 ",\"by_generation\":[%" PRIu64 ",%" PRIu64
			",%" PRIu64 "],\"collected\":%" PRId64 ",\"paused_us\":%.1f,"
			"\"longest_us\":%.1f,\"hist_usecs_log2\":[",
			p->all.n, p->all.gen_n[0], p->all.gen_n[1], p->all.gen_n[2],
			p->all.collected, (double)p->all.ns / 1e3, (double)p->all.max_ns / 1e3);
		while (last > 0 && !p->hist.slots[last])
			last--;
		for (int k = 0; k <= last; k++)
			fprintf(out, "%s%" PRIu64, k ? "," : "", p->hist.slots[k]);
		fputs("]}", out);
	}
	fprintf(out, "],\"lost\":%" PRIu64 ",\"not_kept\":%" PRIu64 ",\"collections\":[",
		r->lost, r->dropped);
	for (size_t i = 0; i < r->nlog; i++) {
		const struct pyb_gc_event *e = &r->log[i];

		fprintf(out,
			"%s\n{\"pid\":%u,\"tid\":%u,\"time_s\":%.6f,\"generation\":%d,"
			"\"pause_us\":%.3f,\"collected\":%" PRId64 ",\"stack\":",
			i ? "," : "", e->pid, e->tid,
			(double)(int64_t)(e->start_ns - r->start_ns) / 1e9, e->generation,
			(double)e->duration_ns / 1e3, e->collected);
		json_stack(r, out, e->pystack);
		fputc('}', out);
	}
	fputs("]}\n", out);
}

/* -i: each process's collections of the interval that ends now. */
static void print_interval(struct gc_run *r, uint64_t now)
{
	char stamp[16];
	time_t t = time(NULL);
	double secs = (double)(now - r->interval_start_ns) / 1e9;

	strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&t));
	fprintf(r->table, "%s\n", stamp);
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gc_proc *p = &r->procs[i];

		if (p->method == GC_SAMPLED) {
			uint64_t before = p->samples;

			read_samples(r, p);
			fprintf(r->table, "PID %d: about %.1f ms collecting on CPU (sampled)\n",
				(int)p->pid, (double)((p->samples - before) * r->period_ns) / 1e6);
		}
		if (p->method != GC_EXACT)
			continue;
		fprintf(r->table, "PID %d: ", (int)p->pid);
		print_totals(r->table, &p->interval, secs);
		memset(&p->interval, 0, sizeof(p->interval));
	}
	fflush(r->table);
	r->interval_start_ns = now;
}

static void on_tick(struct tool_session *s, void *ctx)
{
	struct gc_run *r = ctx;
	uint64_t now = monotonic_ns();

	(void)s;
	drain(r);
	if (r->o->interval && now >= r->next_print_ns) {
		if (r->next_print_ns)
			print_interval(r, now);
		else
			r->interval_start_ns = now;
		r->next_print_ns = now + (uint64_t)r->o->interval * 1000000000ull;
	}
}

static int compile(const struct pymem_options *o, struct tool_session *s)
{
	struct tool_cflags f = { 0 };

	tool_cflag(&f, "-DPYSTACKS_SIZE=65536");
	tool_cflag(&f, "-DCOUNTS_SIZE=65536");
	tool_cflag(&f, "-DPYB_PYTHON_ROOT=%d", !o->cli.startup_frames);
	tool_cflag(&f, "-DGC_LOG_SIZE=%d", GC_LOG_SIZE);
	return tool_compile(s, pymem_gc_bpf_text, &f);
}

static int start(struct gc_run *r)
{
	struct tool_session *s = r->s;
	int sample_fd, hz = GC_SAMPLE_HZ;

	if (cli_native_chain(&r->o->cli, s, true, "native_walk_gc", BPF_PROG_TYPE_KPROBE) < 0)
		return -1;
	if ((r->done_fd = tool_load(s, "gc_done", BPF_PROG_TYPE_KPROBE)) < 0 ||
	    (r->start_fd = tool_load(s, "gc_start", BPF_PROG_TYPE_KPROBE)) < 0 ||
	    (sample_fd = tool_load(s, "on_gc_sample", BPF_PROG_TYPE_PERF_EVENT)) < 0)
		return -1;
	if (bpfmod_wait_loads(&s->bpf) < 0) {
		fprintf(stderr, "pymem: %s\n", s->bpf.err);
		return -1;
	}
	r->probes_fd = tool_table(s, "gc_probes");
	r->log_fd = tool_table(s, "gc_log");
	r->head_fd = tool_table(s, "gc_log_head");
	r->sampled_fd = tool_table(s, "gc_sampled");
	if (r->probes_fd < 0 || r->log_fd < 0 || r->head_fd < 0 || r->sampled_fd < 0) {
		fprintf(stderr, "pymem: the GC program lacks its tables\n");
		return -1;
	}
	s->on_active = on_active;
	s->on_active_ctx = r;
	/* cheap where no process is sampled: a look-up per sample */
	if (session_attach_sampling(s, sample_fd, &hz) < 0)
		return -1;
	r->period_ns = session_sample_period_ns(s); /* as asked, until the end */
	session_install_signals();
	r->start_ns = monotonic_ns();
	tool_want_gc_flag(s);
	if (session_start_discovery(s) < 0)
		return -1;
	tool_on_tick(s, on_tick, r, 0, false);
	cli_print_header(r->table, &r->o->cli, s, "Tracing the collector's pauses of ", "");
	return 0;
}

/* Folded, SVG, speedscope, pprof: paused microseconds by triggering stack. */
static int write_stacks(struct gc_run *r)
{
	struct tool_session *s = r->s;
	struct pymem_options *o = r->o;
	struct stack_filter f = cli_stack_filter(&o->cli, true, false, NULL);
	struct report rep;
	int rc;

	f.only_kind = PYB_KIND_GC_PAUSE;
	tool_set_filter(s, &f);
	report_init(&rep, false);
	session_collect(s, &rep);
	rc = report_write(&rep, o->cli.format, o->cli.out, "us", "pymem --gc") < 0;
	report_free(&rep);
	return rc;
}

static int report(struct gc_run *r)
{
	struct pymem_options *o = r->o;
	uint64_t end = tool_end_ns(r->s);
	bool to_file = o->cli.output != NULL;
	int rc = 0;

	drain(r);
	if (!to_file && !o->cli.json && o->cli.format == REPORT_TEXT) {
		print_text(r, stdout, end);
	} else if (cli_open_output(&o->cli) < 0) {
		return 1;
	} else {
		if (o->cli.json)
			print_json(r, o->cli.out, end);
		else if (o->cli.format == REPORT_TEXT)
			print_text(r, o->cli.out, end);
		else
			rc = write_stacks(r);
		if (cli_close_output(&o->cli) < 0)
			rc = 1;
		if (to_file && !o->folded)
			print_text(r, stdout, end);
	}
	if (r->lost || r->dropped)
		fprintf(stderr,
			"pymem: %" PRIu64 " %s lost (BPF's log overrun: not counted), %" PRIu64
			" not listed (more than %d: counted in the totals)\n",
			r->lost, plural(r->lost, "collection", "collections"), r->dropped,
			GC_KEEP_MAX);
	return rc;
}

int pymem_gc(struct pymem_options *o, struct tool_session *s)
{
	struct gc_run r = { .o = o, .s = s, .start_fd = -1, .done_fd = -1 };
	int rc = 1;

	if (o->cli.ebpf) {
		fputs(pymem_gc_bpf_text, stdout);
		return 0;
	}
	r.table = o->folded || ((o->cli.json || o->cli.format != REPORT_TEXT) && !o->cli.output)
			  ? stderr : stdout;
	if (cli_prepare_targets(&o->cli, s) < 0 || compile(o, s) < 0)
		goto out;
	if (start(&r) == 0) {
		if (session_start_command(s) < 0) {
			rc = session_end_command(s);
			goto out;
		}
		session_run(s, o->cli.duration);
		/* the kernel may have reached less than the rate asked */
		r.period_ns = session_sample_period_ns(s);
		rc = report(&r);
		session_print_summary(s, "sample", "samples");
		rc = cli_exit_status(&o->cli, s, rc);
	}
out:
	for (size_t i = 0; i < r.nprocs; i++)
		close_probes(&r.procs[i]);
	free(r.procs);
	free(r.log);
	session_close(s);
	return rc;
}
