/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/session.h"
#include "sys/plural.h"

#define CLI_MAX_LONG 64
#define CLI_SHARED_SHORT "p:t:o:vh"

/* long-only shared options, above any tool's own */
enum {
	OPT_FORMAT = 0x10000,
	OPT_VERSION,
	OPT_EBPF,
	OPT_CHILDREN,
	OPT_RUN_AS,
	OPT_THREADS,
	OPT_FUNCTION,
	OPT_NO_NATIVE,
	OPT_STARTUP_FRAMES,
};

static const struct option shared_long[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "ebpf", no_argument, NULL, OPT_EBPF },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "run-as", required_argument, NULL, OPT_RUN_AS },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ "function", no_argument, NULL, OPT_FUNCTION },
	{ "no-native", no_argument, NULL, OPT_NO_NATIVE },
	{ "startup-frames", no_argument, NULL, OPT_STARTUP_FRAMES },
};

/* Returns 1 when opt is not a shared option, 0 when handled, -1 on error. */
static int shared_option(struct cli *c, struct tool_session *s, int opt, const char *arg)
{
	switch (opt) {
	case 'p':
		if (cli_parse_pid_list(arg, s->pids, SESSION_MAX_PIDS, &s->npids) < 0) {
			fprintf(stderr, "%s: invalid PID list: %s\n", c->tool, arg);
			return -1;
		}
		return 0;
	case 't':
		if (cli_parse_pid(arg, &c->tid) < 0) {
			fprintf(stderr, "%s: invalid TID: %s\n", c->tool, arg);
			return -1;
		}
		return 0;
	case 'o':
		c->output = arg;
		return 0;
	case OPT_FORMAT:
		c->json = c->allow_json && strcmp(arg, "json") == 0;
		if (!c->json && report_format_parse(arg, &c->format) < 0) {
			fprintf(stderr, "%s: unknown format: %s\n", c->tool, arg);
			return -1;
		}
		return 0;
	case 'v':
		c->verbose = true;
		return 0;
	case 'h':
		fputs(c->usage, stdout);
		exit(0);
	case OPT_VERSION:
		cli_print_version(c->tool);
		exit(0);
	case OPT_EBPF:
		c->ebpf = true;
		return 0;
	case OPT_CHILDREN:
		c->children = true;
		return 0;
	case OPT_RUN_AS:
		c->run_as = arg;
		return 0;
	case OPT_THREADS:
		s->view_threads = true;
		return 0;
	case OPT_FUNCTION:
		s->view_functions = true;
		return 0;
	case OPT_NO_NATIVE:
		c->no_native = true;
		s->no_native = true;
		return 0;
	case OPT_STARTUP_FRAMES:
		c->startup_frames = true;
		return 0;
	default:
		return 1;
	}
}

static int build_options(struct cli *c, const char *own_short, const struct option *own_long,
			 char *shortopts, size_t shortsize, struct option *longopts)
{
	size_t n = 0;

	for (; own_long && own_long[n].name; n++) {
		if (n + sizeof(shared_long) / sizeof(*shared_long) + 1 > CLI_MAX_LONG) {
			fprintf(stderr, "%s: too many options\n", c->tool);
			return -1;
		}
		longopts[n] = own_long[n];
	}
	memcpy(&longopts[n], shared_long, sizeof(shared_long));
	n += sizeof(shared_long) / sizeof(*shared_long);
	longopts[n] = (struct option){ 0 };
	snprintf(shortopts, shortsize, "%s%s", CLI_SHARED_SHORT, own_short ? own_short : "");
	return 0;
}

/* Whether getopt would take arg as the value of the option before it. */
static bool takes_value(const char *opt, const char *shortopts, const struct option *longopts)
{
	if (opt[0] != '-' || !opt[1])
		return false;
	if (opt[1] == '-') {
		size_t len = strcspn(opt + 2, "="), hits = 0;
		const struct option *hit = NULL;

		if (opt[2 + len] == '=')
			return false;
		for (const struct option *o = longopts; o->name; o++) {
			if (strncmp(o->name, opt + 2, len) != 0)
				continue;
			if (strlen(o->name) == len)
				return o->has_arg == required_argument;
			hit = o;
			hits++;
		}
		/* an ambiguous prefix is an error getopt reports */
		return hits == 1 && hit->has_arg == required_argument;
	}
	for (const char *p = opt + 1; *p; p++) {
		const char *spec = strchr(shortopts, *p);

		if (spec && *p != ':' && spec[1] == ':')
			return !p[1]; /* "-p" then its value, or "-p123" */
	}
	return false;
}

/* Index of the "--" that ends the tool's arguments, or argc. */
static int command_start(int argc, char **argv, const char *shortopts,
			 const struct option *longopts)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return i;
		if (takes_value(argv[i], shortopts, longopts))
			i++;
	}
	return argc;
}

static int check_targets(const struct cli *c, const struct tool_session *s)
{
	if (c->tid && s->npids) {
		fprintf(stderr, "%s: -p and -t are mutually exclusive\n", c->tool);
		return -1;
	}
	if (c->command && (c->tid || s->npids)) {
		fprintf(stderr, "%s: a command to run cannot go with -p or -t\n", c->tool);
		return -1;
	}
	if (c->children && !s->npids) {
		fprintf(stderr, "%s: --children needs -p\n", c->tool);
		return -1;
	}
	if (c->run_as && !c->command) {
		fprintf(stderr, "%s: --run-as needs a command to run (-- CMD)\n", c->tool);
		return -1;
	}
	return 0;
}

int cli_parse(struct cli *c, struct tool_session *s, int argc, char **argv,
	      const char *own_short, const struct option *own_long, cli_own_option own,
	      void *ctx)
{
	struct option longopts[CLI_MAX_LONG];
	char shortopts[128];
	int opt, rc, dashes;

	if (build_options(c, own_short, own_long, shortopts, sizeof(shortopts), longopts) < 0)
		return -1;
	/* -- CMD [ARGS...]: getopt only sees what comes before */
	dashes = command_start(argc, argv, shortopts, longopts);
	if (dashes < argc) {
		if (dashes + 1 == argc) {
			fprintf(stderr, "%s: no command after --\n", c->tool);
			return -1;
		}
		c->command = &argv[dashes + 1];
		argc = dashes;
	}
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		rc = shared_option(c, s, opt, optarg);
		if (rc == 1 && opt != '?' && own)
			rc = own(opt, optarg, ctx);
		if (rc == 1 || opt == '?')
			fputs(c->usage, stderr);
		if (rc)
			return -1;
	}
	if (optind < argc &&
	    cli_parse_small_int(argv[optind++], 1, 1 << 30, &c->duration) < 0) {
		fprintf(stderr, "%s: invalid duration: %s\n", c->tool, argv[optind - 1]);
		return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument: %s\n", c->tool, argv[optind]);
		return -1;
	}
	return check_targets(c, s);
}

int cli_prepare_targets(struct cli *c, struct tool_session *s)
{
	s->verbose = c->verbose;
	/* -t: trace the thread's process, report that thread only */
	if (c->tid)
		return session_target_thread(s, c->tid);
	s->follow_children = c->children;
	if (c->command)
		return session_launch(s, c->command, c->run_as);
	return 0;
}

struct stack_filter cli_stack_filter(const struct cli *c, bool user_stacks, bool kernel_stacks,
				     const struct async_tasks *tasks)
{
	return (struct stack_filter){ .user_stacks = user_stacks,
				      .kernel_stacks = kernel_stacks,
				      .startup_frames = c->startup_frames,
				      .only_tid = c->tid,
				      .only_kind = -1,
				      .tasks = tasks };
}

int cli_exit_status(const struct cli *c, struct tool_session *s, int rc)
{
	int code = session_end_command(s);

	(void)c;
	return rc ? rc : code;
}

void cli_print_target(FILE *f, const struct cli *c, const struct tool_session *s)
{
	if (c->tid) {
		fprintf(f, "TID %d", (int)c->tid);
	} else if (s->launched) {
		fprintf(f, "command PID %d and its descendants", (int)s->pids[0]);
	} else if (s->npids) {
		fprintf(f, "PID");
		for (size_t i = 0; i < s->npids; i++)
			fprintf(f, "%s%d", i ? "," : " ", (int)s->pids[i]);
		if (s->follow_children)
			fprintf(f, " and %s descendants", s->npids == 1 ? "its" : "their");
	} else {
		fprintf(f, "all Python processes");
	}
}

void cli_print_header(FILE *f, const struct cli *c, const struct tool_session *s,
		      const char *before, const char *after)
{
	fputs(before, f);
	cli_print_target(f, c, s);
	fputs(after, f);
	if (c->duration)
		fprintf(f, " for %d %s.\n", c->duration, plural((unsigned)c->duration, "sec", "secs"));
	else
		fprintf(f, "... Hit Ctrl-C to end.\n");
	fflush(f);
}

int cli_open_output(struct cli *c)
{
	c->out = stdout;
	if (!c->output)
		return 0;
	c->out = fopen(c->output, "we");
	if (!c->out) {
		fprintf(stderr, "%s: cannot write %s: %s\n", c->tool, c->output, strerror(errno));
		return -1;
	}
	return 0;
}

int cli_close_output(struct cli *c)
{
	FILE *out = c->out;

	c->out = NULL;
	if (!out || out == stdout)
		return 0;
	if (fclose(out) != 0) {
		fprintf(stderr, "%s: writing %s failed: %s\n", c->tool, c->output, strerror(errno));
		return -1;
	}
	return 0;
}

int cli_native_chain(const struct cli *c, struct tool_session *s, bool user_stacks,
		     const char *fn, int prog_type)
{
	if (c->no_native || !user_stacks)
		return 0;
	if (session_native_chain(s, fn, prog_type) < 0) {
		fprintf(stderr, "%s: too many native walk chains\n", c->tool);
		return -1;
	}
	return 0;
}
