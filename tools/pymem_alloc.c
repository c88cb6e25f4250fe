// SPDX-License-Identifier: Apache-2.0
/*
 * pymem --alloc: the libc allocations of Python processes still
 * outstanding at the end (or at each -i interval), by Python + native
 * stack, in bytes; bcc's memleak for Python.
 *
 * Uprobes on each target's own libc (bpf/libc_uprobes.h), attached as the
 * process becomes a target (a -p process, a launched command, a child
 * with --children): malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, and anonymous mmap and munmap.
 * BPF keeps every outstanding block (address -> size, stack) and the
 * bytes outstanding per stack (bpf_c/pymem_alloc.bpf.c).
 *
 * Opt-in and for named processes only: each probed call traps into the
 * kernel (about a microsecond, more for a return probe), so a uprobe on
 * every process's malloc is not the near-zero cost of the other modes.
 * pymalloc, CPython's allocator of objects of 512 bytes or less, is
 * inlined into the interpreter and takes its arenas from mmap: those
 * arenas are seen, the objects in them are not.
 */
#include <bcc/libbpf.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pymem.h"
#include "report/units.h"
#include "sys/plural.h"
#include "report/formats.h"
#include "report/row_limit.h"
#include "report/summary.h"
#include "bpf/libc_uprobes.h"
#include "bpf/tool.h"
#include "sys/cpu_list.h"
#include "sys/proc_maps.h"
#include "sys/text_escape.h"

extern const char pymem_alloc_bpf_text[];

/* alloc_stats indexes (bpf_c/pymem_alloc.bpf.c) */
enum {
	ALLOC_ST_CALLS,
	ALLOC_ST_RECORDED,
	ALLOC_ST_BYTES,
	ALLOC_ST_FREES,
	ALLOC_ST_FREED,
	ALLOC_ST_UNMATCHED,
	ALLOC_ST_LOST,
	ALLOC_ST_REUSED,
	ALLOC_ST_FILTERED,
	ALLOC_ST_SAMPLED_OUT,
	ALLOC_ST_FAILED,
	ALLOC_ST_MAX,
};

/* The programs, by the way each call passes what it allocates. */
enum { P_SIZE1, P_SIZE2, P_CALLOC, P_REALLOC, P_MEMALIGN, P_MMAP, P_RETURN, P_FREE, P_MAX };

static const char *const prog_names[P_MAX] = {
	"alloc_enter_size1",   "alloc_enter_size2",	     "alloc_enter_calloc",
	"alloc_enter_realloc", "alloc_enter_posix_memalign", "alloc_enter_mmap",
	"alloc_return",	       "alloc_enter_free",
};

/* Each probed function: its symbol, its entry program, whether it returns
 * a block (a return probe too) and whether a libc without it is refused. */
static const struct {
	const char *symbol;
	int entry;
	bool returns, needed;
} functions[] = {
	{ "malloc", P_SIZE1, true, true },
	{ "calloc", P_CALLOC, true, true },
	{ "realloc", P_REALLOC, true, true },
	{ "free", P_FREE, false, true },
	{ "posix_memalign", P_MEMALIGN, true, false },
	{ "aligned_alloc", P_SIZE2, true, false },
	{ "memalign", P_SIZE2, true, false },
	{ "valloc", P_SIZE1, true, false },
	{ "pvalloc", P_SIZE1, true, false },
	{ "mmap", P_MMAP, true, false },
	{ "munmap", P_FREE, false, false },
};
#define NFUNCTIONS (sizeof(functions) / sizeof(functions[0]))

#define ALLOCS_DEFAULT 1000000 /* outstanding blocks BPF keeps (as memleak) */

struct alloc_run {
	struct pymem_options *o;
	struct tool_session *s;
	int progs[P_MAX];
	struct libc_uprobe probes[2 * NFUNCTIONS];
	size_t nprobes;
	struct libc_uprobes up;
	pid_t probed[SESSION_MAX_PIDS * 4]; /* processes probed (once each) */
	size_t nprobed, refused;
	unsigned intervals;
};

static int compile(struct tool_session *s, const struct pymem_options *o)
{
	struct tool_cflags f = { 0 };

	tool_cflag(&f, "-DUSER_STACKS=%d", !o->cli.no_native);
	tool_cflag(&f, "-DPYSTACKS_SIZE=65536");
	tool_cflag(&f, "-DCOUNTS_SIZE=65536");
	tool_cflag(&f, "-DALLOCS_SIZE=%d", ALLOCS_DEFAULT);
	tool_cflag(&f, "-DMIN_SIZE=%lluULL", (unsigned long long)o->alloc_min);
	tool_cflag(&f, "-DMAX_SIZE=%lluULL", (unsigned long long)o->alloc_max);
	tool_cflag(&f, "-DSAMPLE_EVERY=%dULL", o->alloc_sample);
	tool_cflag(&f, "-DPYB_PYTHON_ROOT=%d", !o->cli.startup_frames);
	return tool_compile(s, pymem_alloc_bpf_text, &f);
}

/* As a process becomes a target: its libc's functions probed, once. */
static void on_active(void *ctx, struct py_target *t)
{
	struct alloc_run *r = ctx;
	char err[256];
	int n;

	for (size_t i = 0; i < r->nprobed; i++)
		if (r->probed[i] == t->pid)
			return;
	if (r->nprobed == sizeof(r->probed) / sizeof(r->probed[0])) {
		r->refused++;
		return;
	}
	n = libc_uprobes_attach(&r->up, t->pid, r->probes, r->nprobes, err, sizeof(err));
	if (n < 0) {
		char comm[16] = "";

		proc_comm(t->pid, 0, comm, sizeof(comm));
		fprintf(stderr, "pymem: PID %d (%s) not probed: %s\n", (int)t->pid, TEXT_ESC(comm),
			err);
		r->refused++;
		return;
	}
	r->probed[r->nprobed++] = t->pid;
	if (r->o->cli.verbose)
		fprintf(stderr, "pymem: PID %d: %d uprobes on its libc\n", (int)t->pid, n);
}

/* Loads the programs and lays out the probes; the native walk chain. */
static int load(struct alloc_run *r)
{
	for (int i = 0; i < P_MAX; i++) {
		r->progs[i] = tool_load(r->s, prog_names[i], BPF_PROG_TYPE_KPROBE);
		if (r->progs[i] < 0)
			return -1;
	}
	for (size_t i = 0; i < NFUNCTIONS; i++) {
		r->probes[r->nprobes++] = (struct libc_uprobe){
			.symbol = functions[i].symbol,
			.needed = functions[i].needed,
			.prog_fd = r->progs[functions[i].entry],
		};
		if (functions[i].returns)
			r->probes[r->nprobes++] = (struct libc_uprobe){
				.symbol = functions[i].symbol,
				.ret = true,
				.needed = functions[i].needed,
				.prog_fd = r->progs[P_RETURN],
			};
	}
	if (bpfmod_wait_loads(&r->s->bpf) < 0) {
		fprintf(stderr, "pymem: %s\n", r->s->bpf.err);
		return -1;
	}
	return cli_native_chain(&r->o->cli, r->s, true, "native_walk_alloc", BPF_PROG_TYPE_KPROBE);
}

static void read_stats(struct tool_session *s, uint64_t *st)
{
	int fd = tool_table(s, "alloc_stats");
	int ncpu = cpu_list_possible_count();
	uint64_t *v = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*v)) : NULL;

	for (uint32_t i = 0; i < ALLOC_ST_MAX; i++) {
		st[i] = 0;
		if (!v || fd < 0 || bpf_lookup_elem(fd, &i, v) < 0)
			continue;
		for (int c = 0; c < ncpu; c++)
			st[i] += v[c];
	}
	free(v);
}

/* The totals, and (at the end) what the counts cover. */
static void print_totals(struct alloc_run *r, FILE *out, bool end)
{
	uint64_t st[ALLOC_ST_MAX];
	char a[32], f[32], o[32];
	uint64_t outstanding, blocks;

	read_stats(r->s, st);
	outstanding = st[ALLOC_ST_BYTES] > st[ALLOC_ST_FREED]
			      ? st[ALLOC_ST_BYTES] - st[ALLOC_ST_FREED] : 0;
	report_format_bytes(st[ALLOC_ST_BYTES], a, sizeof(a));
	report_format_bytes(st[ALLOC_ST_FREED], f, sizeof(f));
	report_format_bytes(outstanding, o, sizeof(o));
	blocks = st[ALLOC_ST_RECORDED] - st[ALLOC_ST_FREES];
	fprintf(out,
		"pymem: %llu %s recorded (%s), %llu of them freed (%s): %llu %s, "
		"%s (%llu %s) outstanding",
		(unsigned long long)st[ALLOC_ST_RECORDED],
		plural(st[ALLOC_ST_RECORDED], "allocation", "allocations"), a,
		(unsigned long long)st[ALLOC_ST_FREES], f, (unsigned long long)blocks,
		plural(blocks, "block", "blocks"), o, (unsigned long long)outstanding,
		plural(outstanding, "byte", "bytes"));
	if (r->o->alloc_sample > 1)
		fprintf(out, " (estimated: 1 allocation in %d recorded, its bytes counted %d times)",
			r->o->alloc_sample, r->o->alloc_sample);
	fprintf(out,
		"\npymem: %llu allocating %s in all; not recorded: %llu outside -z/-Z, "
		"%llu sampled out, %llu lost (%d outstanding blocks kept at most); "
		"%llu %s of blocks not recorded (made before the run, or not recorded), "
		"%llu %s given again without %s free seen, %llu failed %s\n",
		(unsigned long long)st[ALLOC_ST_CALLS], plural(st[ALLOC_ST_CALLS], "call", "calls"),
		(unsigned long long)st[ALLOC_ST_FILTERED],
		(unsigned long long)st[ALLOC_ST_SAMPLED_OUT],
		(unsigned long long)st[ALLOC_ST_LOST], ALLOCS_DEFAULT,
		(unsigned long long)st[ALLOC_ST_UNMATCHED],
		plural(st[ALLOC_ST_UNMATCHED], "free", "frees"),
		(unsigned long long)st[ALLOC_ST_REUSED],
		plural(st[ALLOC_ST_REUSED], "block", "blocks"),
		plural(st[ALLOC_ST_REUSED], "its", "their"), (unsigned long long)st[ALLOC_ST_FAILED],
		plural(st[ALLOC_ST_FAILED], "call", "calls"));
	if (!end)
		return;
	fprintf(out,
		"pymem: covers libc's malloc, calloc, realloc, posix_memalign, aligned_alloc, "
		"memalign, valloc, pvalloc and anonymous mmap (C extensions, Python objects over "
		"512 bytes, pymalloc's arenas); not the objects of 512 bytes or less that pymalloc "
		"places in its arenas\n");
	if (r->refused)
		fprintf(out, "pymem: %zu process%s not probed (see above)\n", r->refused,
			r->refused == 1 ? "" : "es");
}

/* The bytes outstanding now, by stack, in the form asked for. */
static int write_report(struct alloc_run *r, bool interval)
{
	struct pymem_options *o = r->o;
	struct report rep;
	int rc;

	report_init(&rep, false);
	rep.bytes_type = "inuse_space"; /* as Go's heap profiles name bytes in use */
	if (interval)
		session_collect_standing(r->s, &rep);
	else
		session_collect(r->s, &rep);
	report_drop_zero_rows(&rep);
	if (o->cli.format == REPORT_TEXT) {
		struct report_top t;
		int top = o->top < 0 ? 10 : o->top;

		report_top_rows(&rep, (size_t)top, &t);
		if (t.omitted)
			fprintf(o->cli.out,
				"(%zu more stack%s with fewer bytes outstanding, %llu bytes in all, "
				"not shown: --all shows every stack)\n\n",
				t.omitted, t.omitted == 1 ? "" : "s",
				(unsigned long long)t.omitted_value);
		report_print_text(&t.view, o->cli.out);
		report_top_free(&t);
		report_print_summary(&rep, "bytes", NULL, o->top ? SUMMARY_PROCS : 0, o->cli.out);
		rc = 0;
	} else {
		rc = report_write(&rep, o->cli.format, o->cli.out, "bytes", "pymem --alloc") < 0;
	}
	report_free(&rep);
	return rc;
}

static void on_interval(struct tool_session *s, void *ctx)
{
	struct alloc_run *r = ctx;

	(void)s;
	fprintf(r->o->cli.out, "\n[interval %u] bytes outstanding by stack:\n", ++r->intervals);
	write_report(r, true);
	print_totals(r, r->o->cli.format == REPORT_TEXT ? r->o->cli.out : stderr, false);
	fflush(r->o->cli.out);
}

static int run(struct alloc_run *r)
{
	struct pymem_options *o = r->o;
	struct tool_session *s = r->s;
	int rc;

	if (o->interval)
		tool_on_interval(s, on_interval, r, (uint64_t)o->interval * 1000000000ull);
	if (session_start_command(s) < 0)
		return session_end_command(s);
	session_run(s, o->cli.duration);
	libc_uprobes_close(&r->up); /* the targets stop trapping before the report */
	if (o->cli.format == REPORT_TEXT && !o->cli.output)
		printf("\n");
	if (o->interval && o->cli.format == REPORT_TEXT)
		fprintf(o->cli.out, "[end of the run] bytes outstanding by stack:\n");
	rc = write_report(r, false);
	print_totals(r, o->cli.format == REPORT_TEXT ? o->cli.out : stderr, true);
	session_print_summary(s, "allocation recorded", "allocations recorded");
	if (o->cli.verbose)
		session_print_bpf_stats(s, r->progs[P_RETURN], "alloc_return",
					session_stat(s, PYB_STAT_SAMPLES), "allocation");
	return cli_exit_status(&o->cli, s, rc);
}

/* The run from the parsed options: r lives as long as the session that
 * calls back into it. */
static int alloc_session(struct alloc_run *r)
{
	struct pymem_options *o = r->o;
	struct tool_session *s = r->s;
	struct stack_filter f;
	int rc = 1;

	if (compile(s, o) < 0 || load(r) < 0)
		goto out;
	s->on_active = on_active;
	s->on_active_ctx = r;
	session_install_signals();
	if (session_start_discovery(s) < 0 || cli_open_output(&o->cli) < 0)
		goto out;
	if (r->nprobed == 0 && !s->launched) {
		fprintf(stderr, "pymem: no process could be probed\n");
		goto out;
	}
	f = cli_stack_filter(&o->cli, true, false, NULL);
	tool_set_filter(s, &f);
	if (o->cli.format == REPORT_TEXT || o->cli.output)
		cli_print_header(stdout, &o->cli, s,
				 "Tracing libc allocations (bytes outstanding) of ",
				 " by Python + native stack");
	rc = run(r);
out:
	if (cli_close_output(&o->cli) < 0)
		rc = 1;
	libc_uprobes_close(&r->up);
	session_close(s);
	return rc;
}

int pymem_alloc(struct pymem_options *o, struct tool_session *s)
{
	struct alloc_run *r;
	int rc;

	if (o->cli.ebpf) {
		fputs(pymem_alloc_bpf_text, stdout);
		return 0;
	}
	if (o->cli.json) {
		fprintf(stderr, "pymem: --alloc reports stacks: --format text, folded, svg, "
				"speedscope or pprof\n");
		return 2;
	}
	if (cli_prepare_targets(&o->cli, s) < 0)
		return 1;
	if (tool_target_count(s) == 0) {
		fprintf(stderr, "pymem: --alloc traces named processes only (-p PID or -- CMD): "
				"a uprobe on every process's malloc would slow the whole machine\n");
		return 2;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		fprintf(stderr, "pymem: out of memory\n");
		return 1;
	}
	r->o = o;
	r->s = s;
	rc = alloc_session(r);
	free(r);
	return rc;
}
