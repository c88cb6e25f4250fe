/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/open.h"
#include "bpf/session.h"

#include <bcc/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sys/cpu_list.h"
#include "sys/cpu_time.h"
#include "sys/native_symbols.h"
#include "sys/perf_limits.h"
#include "sys/proc_maps.h"
#include "sys/proc_tree.h"
#include "sys/clock.h"
#include "abi/py_abi.h"
#include "bpf/loop_guard.h"
#include "bpf/phases.h"
#include "sys/target_file.h"
#include "report/native_unnamed.h"
#include "report/views.h"
#include "sys/text_escape.h"
#include "sys/plural.h"

/*
 * Turns of the main loop cost CPU whatever the sampling rate (a wakeup and
 * a few system calls: about a millisecond of CPU in a VM, which is more
 * than BPF spends on 99 samples): they are kept few. Events wake it at
 * once: exec, fork and new stacks from BPF, exits from the targets'
 * pidfds. The turns retry pending processes (every 20 ms), rescan the
 * system (every second), check processes that have no pidfd and feed
 * BPF the threads of processes with many (every second); with none of
 * that to do, -p runs turn every REGISTRY_IDLE_TURN_MS.
 */
#define SCAN_TURN_MS 1000
#define FAST_TURN_MS 20
#define SESSION_MAX_EXIT_FDS 256
#define SCAN_EVERY_NS (1000ull * 1000 * 1000)

volatile sig_atomic_t session_stop;

static void on_signal(int sig)
{
	(void)sig;
	session_stop = 1;
}

void session_install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int session_target_thread(struct tool_session *s, pid_t tid)
{
	pid_t tgid;

	if (proc_tgid(tid, &tgid) < 0) {
		fprintf(stderr, "%s: no thread with TID %d\n", s->tool, (int)tid);
		return -1;
	}
	s->pids[0] = tgid;
	s->npids = 1;
	return 0;
}

/*
 * Compiling takes seconds: check the -p targets first, so a wrong PID is
 * reported at once, and drop the ones that cannot be profiled.
 */
static int precheck_pids(struct tool_session *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->npids; i++) {
		struct py_process *p = malloc(sizeof(*p));

		if (!p)
			return -1;
		/* a failure that may pass (threads that came and went while it
		 * was validated, no Python frame yet) is left to the registry,
		 * which retries it; with --children, any live process is the
		 * root of a tree */
		if (py_process_open(p, s->pids[i]) == 0 || registry_failure_may_pass(p) ||
		    (s->follow_children && proc_alive(s->pids[i])))
			s->pids[kept++] = s->pids[i];
		else {
			py_process_name_python_children(p, true);
			fprintf(stderr, "%s: PID %d%s%s%s: %s; skipped\n", s->tool, (int)s->pids[i],
				p->comm[0] ? " (" : "", TEXT_ESC(p->comm), p->comm[0] ? ")" : "",
				TEXT_ESC(p->err));
		}
		free(p);
	}
	s->npids = kept;
	if (!kept) {
		fprintf(stderr, "%s: none of the given processes can be profiled\n", s->tool);
		return -1;
	}
	return 0;
}

int session_compile(struct tool_session *s, const char *text, const char *const *cflags,
		    int ncflags)
{
	char err[768];
	const char *all[32];
	int n = 0;

	s->t_begin = monotonic_ns();
	if (bpfmod_environment_check(err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", s->tool, err);
		return -1;
	}
	/* a launched command is not even exec'd yet */
	if (s->npids && !s->launched && precheck_pids(s) < 0)
		return -1;
	s->t_checked = monotonic_ns();
	all[n++] = "-DPYB_BPF=1";
	if (s->npids)
		all[n++] = "-DPYB_ONLY_PIDS=1";
	if (s->follow_children)
		all[n++] = "-DPYB_FOLLOW_CHILDREN=1";
	if (s->no_native) /* no native walks: no 8 MiB of unwind rows either */
		all[n++] = "-DUNWIND_ROWS=1";
	if (loop_guard_available())
		all[n++] = "-DPYB_MAY_GOTO=1";
	if (phases_wanted())
		all[n++] = "-DPYB_PHASES=1";
	for (int i = 0; i < ncflags && n < 32; i++)
		all[n++] = cflags[i];
	/* libbcc prints to stdout on some failures; keep stdout for results */
	fflush(stdout);
	if (bpfmod_compile(&s->bpf, text, all, n) < 0) {
		fprintf(stderr, "%s: %s\n", s->tool, s->bpf.err);
		return -1;
	}
	s->t_compiled = monotonic_ns();
	if (s->verbose && s->bpf.cache_note[0])
		fprintf(stderr, "%s: %s\n", s->tool, s->bpf.cache_note);
	return 0;
}

/* -v: where the time before the first event went. */
static void print_startup(struct tool_session *s)
{
	uint64_t now = monotonic_ns();

	if (!s->t_begin || !s->t_discovered)
		return;
	fprintf(stderr,
		"%s: start-up %.2f s: checks %.2f s, BPF programs %.2f s (%s), verifier %.2f s "
		"(the sum over %d %s, checked in parallel with the rest; %s), %zu Python %s "
		"found in %.2f s\n",
		s->tool, (double)(now - s->t_begin) / 1e9,
		(double)(s->t_checked - s->t_begin) / 1e9,
		(double)(s->t_compiled - s->t_checked) / 1e9,
		s->bpf.from_cache ? "compiled earlier, from the cache" : "compiled",
		(double)s->bpf.load_ns / 1e9, s->bpf.nprogs, plural(s->bpf.nprogs, "program", "programs"),
		loop_guard_available() ? "loops bounded by the kernel's may_goto"
				       : "loops checked turn by turn",
		registry_count(&s->reg, TARGET_ACTIVE),
		plural(registry_count(&s->reg, TARGET_ACTIVE), "process", "processes"),
		(double)(s->t_discovered - s->t_discovery) / 1e9);
}

static void on_proc_event(void *ctx, void *data, int size)
{
	struct tool_session *s = ctx;
	struct pyb_exec_event ex = { 0 };

	if (size < (int)sizeof(ex.ev))
		return;
	memcpy(&ex, data, (size_t)size < sizeof(ex) ? (size_t)size : sizeof(ex));
	ex.comm[sizeof(ex.comm) - 1] = '\0';
	/* fork also fires for new threads: only new processes matter */
	if (ex.ev.kind == PYB_EVENT_FORK) {
		pid_t tgid;

		if (proc_tgid((pid_t)ex.ev.pid, &tgid) < 0 || tgid != (pid_t)ex.ev.pid)
			return;
		/* --children: BPF only announces the followed tree's */
		if (s->follow_children && registry_follow(&s->reg, (pid_t)ex.ev.pid) < 0)
			return;
	}
	registry_consider(&s->reg, (pid_t)ex.ev.pid, true, ex.comm);
}

/* A process about to be registered with BPF: what --async and the tool
 * keep beside it first. */
static void session_on_active(void *ctx, struct py_target *t)
{
	struct tool_session *s = ctx;

	if (s->tasks)
		async_tasks_on_active(s->tasks, t);
	if (s->on_active)
		s->on_active(s->on_active_ctx, t);
}

static void on_stack_event(void *ctx, void *data, int size)
{
	struct tool_session *s = ctx;
	struct pyb_proc_event ev;

	if (size < (int)sizeof(ev))
		return;
	memcpy(&ev, data, sizeof(ev));
	if (ev.kind == PYB_EVENT_NEW_MAPPING) {
		/* a library loaded or unloaded since: the trie and the names
		 * follow (a new generation of its mappings) */
		registry_native_refresh(&s->reg, (pid_t)ev.pid);
		return;
	}
	if (ev.kind == PYB_EVENT_NEW_TASK) {
		struct pyb_task_event tev;

		if (s->tasks && size >= (int)sizeof(tev)) {
			memcpy(&tev, data, sizeof(tev));
			async_tasks_on_event(s->tasks, &s->reg, &tev);
		}
		return;
	}
	if (s->running) {
		stack_collector_name_stack(&s->col, &s->reg, s->pystacks_fd, ev.key);
		/* a new stack may be a new thread's: its Python name while it lives */
		thread_names_refresh(&s->col.threads, &s->reg, (pid_t)ev.pid);
	}
	else
		s->hints_lost = true; /* not running yet: the first drain sees it */
}

static void on_lost_hints(void *ctx, uint64_t lost)
{
	(void)lost;
	((struct tool_session *)ctx)->hints_lost = true;
}

static void on_lost_events(void *ctx, uint64_t lost)
{
	((struct tool_session *)ctx)->lost_events += lost;
}

/* -p: BPF announces the execs of these PIDs only (and, with --children,
 * adds their children itself). */
static int fill_only_pids(struct tool_session *s, const pid_t *pids, size_t n)
{
	int fd = bpfmod_table_fd(&s->bpf, "only_pids");
	uint8_t one = 1;

	for (size_t i = 0; i < n; i++) {
		uint32_t key = (uint32_t)pids[i];

		if (bpf_update_elem(fd, &key, &one, BPF_ANY) < 0) {
			snprintf(s->bpf.err, sizeof(s->bpf.err), "cannot fill only_pids: %s",
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * --children: the descendants alive now join the set BPF keeps. BPF adds
 * the children of the processes in it from the moment they are in; a
 * process forked before its parent was added is found by the next pass.
 */
static int follow_descendants(struct tool_session *s)
{
	for (int pass = 0; pass < 3; pass++) {
		pid_t *found;
		size_t n, fresh = 0;

		if (proc_descendants(s->pids, s->npids, &found, &n) < 0) {
			snprintf(s->bpf.err, sizeof(s->bpf.err), "cannot list child processes");
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			if (registry_find(&s->reg, found[i]))
				continue;
			fresh++;
			if (fill_only_pids(s, &found[i], 1) < 0 ||
			    registry_follow(&s->reg, found[i]) < 0) {
				free(found);
				return -1;
			}
			registry_consider(&s->reg, found[i], false, NULL);
		}
		free(found);
		if (!fresh)
			break;
	}
	return 0;
}

int session_native_chain(struct tool_session *s, const char *fn, int prog_type)
{
	if (s->nchains >= (int)(sizeof(s->chains) / sizeof(s->chains[0])))
		return -1;
	/* verified in the background while the tool goes on */
	s->chains[s->nchains] = fn;
	s->chain_fds[s->nchains++] = bpfmod_load(&s->bpf, fn, prog_type);
	return 0;
}

/* The system calls that may change a process's code mappings
 * (bpf_c/maps_gen.bpf.h): without them, no native frames (a sample's
 * frames would be named after whatever is mapped at the report). */
static int attach_maps_gen(struct tool_session *s)
{
	static const char *const calls[] = { "mmap",   "munmap",	   "mremap", "mprotect",
					     "pkey_mprotect", "remap_file_pages", "shmat" };
	int exit_fd = bpfmod_load(&s->bpf, "tracepoint__syscalls__sys_exit_mmap",
				  BPF_PROG_TYPE_TRACEPOINT);
	char fn[96], ev[64];

	if (exit_fd < 0)
		return -1;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int fd;

		snprintf(fn, sizeof(fn), "tracepoint__syscalls__sys_enter_%s", calls[i]);
		fd = bpfmod_load(&s->bpf, fn, BPF_PROG_TYPE_TRACEPOINT);
		/* the end first: a call never begins counted without one */
		snprintf(ev, sizeof(ev), "sys_exit_%s", calls[i]);
		if (fd < 0 || bpfmod_attach_tracepoint(&s->bpf, exit_fd, "syscalls", ev) < 0)
			return -1;
		snprintf(ev, sizeof(ev), "sys_enter_%s", calls[i]);
		if (bpfmod_attach_tracepoint(&s->bpf, fd, "syscalls", ev) < 0)
			return -1;
	}
	return 0;
}

/* Puts each walk chain in its prog array: from then on BPF walks the
 * native stacks of the processes registered with PYB_PROC_NATIVE_STACKS. */
static void start_native(struct tool_session *s)
{
	char table[96];
	uint32_t zero = 0;

	if (!s->nchains)
		return;
	if (native_maps_init(&s->native, &s->bpf, s->tool) < 0)
		return; /* compiled without user stacks */
	s->native.verbose = s->verbose;
	for (int i = 0; i < s->nchains; i++) {
		int fd = s->chain_fds[i];

		snprintf(table, sizeof(table), "%s_tail", s->chains[i]);
		if (fd < 0 || bpfmod_wait_load(&s->bpf, fd) < 0 ||
		    bpf_update_elem(bpfmod_table_fd(&s->bpf, table), &zero, &fd, BPF_ANY) < 0) {
			fprintf(stderr, "%s: WARNING: native frames off: %s: %s\n", s->tool,
				s->chains[i], fd < 0 || !s->bpf.err[0] ? strerror(errno) : s->bpf.err);
			native_maps_free(&s->native);
			return;
		}
	}
	if (attach_maps_gen(s) < 0) {
		fprintf(stderr, "%s: WARNING: native frames off: cannot watch mapping changes: %s\n",
			s->tool, s->bpf.err[0] ? s->bpf.err : strerror(errno));
		native_maps_free(&s->native);
		return;
	}
	s->native_on = true;
}

static int attach_discovery(struct tool_session *s)
{
	int exec_fd = bpfmod_load(&s->bpf, "raw_tracepoint__sched_process_exec",
				      BPF_PROG_TYPE_RAW_TRACEPOINT);
	int fork_fd = bpfmod_load(&s->bpf, "tracepoint__sched__sched_process_fork",
				      BPF_PROG_TYPE_TRACEPOINT);
	int newtask_fd = -1, exit_fd = -1;

	if (s->follow_children) {
		newtask_fd = bpfmod_load(&s->bpf, "tracepoint__task__task_newtask",
					     BPF_PROG_TYPE_TRACEPOINT);
		exit_fd = bpfmod_load(&s->bpf, "tracepoint__sched__sched_process_exit",
					  BPF_PROG_TYPE_TRACEPOINT);
		if (newtask_fd < 0 || exit_fd < 0)
			return -1;
	}
	if (exec_fd < 0 || fork_fd < 0 || (s->npids && fill_only_pids(s, s->pids, s->npids) < 0))
		return -1;
	if (s->follow_children &&
	    (bpfmod_attach_tracepoint(&s->bpf, exit_fd, "sched", "sched_process_exit") < 0 ||
	     bpfmod_attach_tracepoint(&s->bpf, newtask_fd, "task", "task_newtask") < 0))
		return -1;
	if (bpfmod_attach_raw_tracepoint(&s->bpf, exec_fd, "sched_process_exec") < 0 ||
	    /* -p: children are not wanted, unless followed */
	    ((!s->npids || s->follow_children) &&
	     bpfmod_attach_tracepoint(&s->bpf, fork_fd, "sched", "sched_process_fork") < 0))
		return -1;
	return 0;
}

int session_start_discovery(struct tool_session *s)
{
	if (attach_discovery(s) < 0 ||
	    bpfmod_open_events(&s->bpf, "proc_events", on_proc_event, on_lost_events, s, 8) <
		    0 ||
	    bpfmod_open_events(&s->bpf, "stack_events", on_stack_event, on_lost_hints, s, 8) <
		    0) {
		fprintf(stderr, "%s: %s\n", s->tool, s->bpf.err);
		return -1;
	}
	s->t_discovery = monotonic_ns();
	start_native(s);
	/* a launched command is followed, not listed: it is no Python yet */
	registry_init(&s->reg, s->tool, bpfmod_table_fd(&s->bpf, "procs"),
		      bpfmod_table_fd(&s->bpf, "layouts"), s->npids ? s->pids : NULL,
		      s->launched ? 0 : s->npids);
	s->reg.native = s->native_on ? &s->native : NULL;
	s->reg.verbose = s->verbose;
	s->reg.gc_flag = s->gc_flag;
	s->reg.tstates_fd = bpfmod_table_fd(&s->bpf, "tstates");
	s->reg.named_fd = bpfmod_table_fd(&s->bpf, "named_codes");
	s->reg.on_active = session_on_active;
	s->reg.on_active_ctx = s;
	if (s->launched)
		return registry_follow(&s->reg, s->pids[0]);
	if (s->npids) {
		for (size_t i = 0; i < s->npids; i++)
			registry_consider(&s->reg, s->pids[i], false, NULL);
		if (s->follow_children && follow_descendants(s) < 0) {
			fprintf(stderr, "%s: %s\n", s->tool, s->bpf.err);
			return -1;
		}
		/* a failure that may pass is retried for a moment (registry.c) */
		while (!session_stop && !registry_count(&s->reg, TARGET_ACTIVE) &&
		       registry_count(&s->reg, TARGET_PENDING)) {
			usleep(FAST_TURN_MS * 1000);
			registry_tick(&s->reg);
		}
		/* a target that runs no Python code yet is waited for during the
		 * run; --children: Python may come later, in a process yet to fork */
		if (!registry_count(&s->reg, TARGET_ACTIVE) &&
		    !registry_count(&s->reg, TARGET_WAITING) && !s->follow_children) {
			fprintf(stderr, "%s: none of the given processes can be profiled\n", s->tool);
			return -1;
		}
	} else {
		registry_scan(&s->reg);
	}
	s->t_discovered = monotonic_ns();
	return 0;
}

int session_launch(struct tool_session *s, char *const argv[], const char *run_as)
{
	struct launch_creds creds;
	char err[256];

	if (launch_creds_resolve(run_as, &creds, err, sizeof(err)) < 0 ||
	    launch_prepare(&s->command, argv, &creds, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", s->tool, err);
		return -1;
	}
	s->launched = true;
	s->follow_children = true;
	s->pids[0] = s->command.pid;
	s->npids = 1;
	return 0;
}

int session_start_command(struct tool_session *s)
{
	char err[256];

	if (!s->launched)
		return 0;
	if (launch_release(&s->command, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", s->tool, err);
		return -1;
	}
	return 0;
}

int session_end_command(struct tool_session *s)
{
	if (!s->launched)
		return 0;
	launch_end(&s->command, session_stop ? 2000 : 0);
	return launch_exit_code(&s->command);
}

static bool all_targets_gone(struct tool_session *s)
{
	/* a launched command's end is seen on its pidfd */
	if (!s->npids || s->launched)
		return false;
	for (size_t i = 0; i < s->reg.n; i++)
		if (s->reg.v[i].state == TARGET_ACTIVE || s->reg.v[i].state == TARGET_PENDING ||
		    s->reg.v[i].state == TARGET_WAITING)
			return false;
	/* --children: a listed process that runs no Python may still fork one */
	for (size_t i = 0; s->follow_children && i < s->npids; i++)
		if (proc_alive(s->pids[i]))
			return false;
	return true;
}

/* The launched command's pidfd was polled with the others (last). */
static bool command_exited(struct tool_session *s, const struct pollfd *fd)
{
	if (!s->launched || s->command.reaped || !(fd->revents || s->command.pidfd < 0))
		return false;
	if (!launch_reap(&s->command, false))
		return false;
	fprintf(stderr, "%s: the command exited with status %d\n", s->tool,
		launch_exit_code(&s->command));
	return true;
}

/* Tells programs with a `run_end` array that the run ends now. */
static uint64_t end_run(struct tool_session *s)
{
	int fd = bpfmod_table_fd(&s->bpf, "run_end");
	uint64_t now = monotonic_ns();
	uint32_t zero = 0;

	if (fd >= 0)
		bpf_update_elem(fd, &zero, &now, BPF_ANY);
	return now;
}

void session_run(struct tool_session *s, int duration)
{
	/* a tool that did part of the run's work first says when it began */
	uint64_t now0 = monotonic_ns(), start = s->start_ns ? s->start_ns : now0;
	uint64_t last_scan = start;
	uint64_t end = duration > 0 ? start + (uint64_t)duration * 1000000000ull : UINT64_MAX;
	struct timespec wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	s->start_realtime_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec -
			       (now0 - start);
	s->interval_start_ns = start;
	s->interval_start_realtime_ns = s->start_realtime_ns;

	s->running = true;
	if (s->verbose)
		print_startup(s);
	while (!session_stop) {
		struct pollfd exit_fds[SESSION_MAX_EXIT_FDS];
		int nexit;
		uint64_t now = monotonic_ns();
		int turn_ms = s->on_tick ? (s->tick_ms ? s->tick_ms : FAST_TURN_MS)
					 : registry_turn_ms(&s->reg);

		if (!s->npids && turn_ms > SCAN_TURN_MS)
			turn_ms = SCAN_TURN_MS;

		/* wake up at the end of the run, not a turn later */
		if (end != UINT64_MAX && now < end && end - now < (uint64_t)turn_ms * 1000000ull)
			turn_ms = (int)((end - now + 999999) / 1000000);
		/* and at the end of each interval of periodic output */
		if (s->on_interval) {
			uint64_t next = s->interval_start_ns + s->interval_ns;

			if (next <= now)
				turn_ms = 0;
			else if (next - now < (uint64_t)turn_ms * 1000000ull)
				turn_ms = (int)((next - now + 999999) / 1000000);
		}
		nexit = registry_exit_fds(&s->reg, exit_fds, SESSION_MAX_EXIT_FDS - 2);
		exit_fds[nexit] = (struct pollfd){ .fd = s->launched ? s->command.pidfd : -1,
						   .events = POLLIN };
		/* the tool's own descriptor (--top: the keyboard) ends a turn too */
		exit_fds[nexit + 1] = (struct pollfd){ .fd = s->on_tick && s->wake_on_stdin ? 0 : -1,
						       .events = POLLIN };
		if (bpfmod_poll_events(&s->bpf, turn_ms, exit_fds, nexit + 2) > 0)
			registry_note_exits(&s->reg, exit_fds, nexit);
		if (command_exited(s, &exit_fds[nexit]))
			break;
		registry_tick(&s->reg);
		if (s->tasks)
			async_tasks_tick(s->tasks, &s->reg);
		if (s->on_tick)
			s->on_tick(s, s->tick_ctx);
		now = monotonic_ns();
		if (s->on_interval && now >= s->interval_start_ns + s->interval_ns && now < end)
			s->on_interval(s, s->interval_ctx);
		/* every new stack was named as its hint came, unless hints were
		 * lost: a full walk of the map (which costs a scan of all its
		 * buckets) only then */
		if (s->hints_lost) {
			s->hints_lost = false;
			stack_collector_drain(&s->col, &s->reg, s->pystacks_fd);
		}
		if (!s->npids && now - last_scan >= SCAN_EVERY_NS) {
			registry_scan(&s->reg);
			last_scan = now;
		}
		if (now >= end)
			break;
		if (all_targets_gone(s)) {
			/* a target that exec'd into something else has not exited */
			bool left = registry_count(&s->reg, TARGET_NOT_PYTHON) ||
				    registry_count(&s->reg, TARGET_REFUSED);

			fprintf(stderr, "%s: every target process has exited%s\n", s->tool,
				left ? " or no longer runs a Python we can read" : "");
			break;
		}
	}
	s->running = false;
	if (s->sample_hz && s->bpf.nperf) {
		uint64_t busy = cpu_time_busy_ns();

		s->sample_ns = monotonic_ns() - s->sample_start_ns;
		if (busy > s->sample_busy_start_ns && s->sample_busy_start_ns)
			s->sample_busy_ns = busy - s->sample_busy_start_ns;
	}
	/* the run ends now: programs that keep a run_end ignore what comes
	 * after (what is still open is charged up to s->end_ns), and every
	 * program is detached before the counts are read; then name what is
	 * left */
	s->end_ns = end_run(s);
	bpfmod_detach(&s->bpf);
	s->start_ns = start;
	s->duration_ns = s->end_ns - start;
	stack_collector_drain(&s->col, &s->reg, s->pystacks_fd);
	if (s->tasks)
		async_tasks_tick(s->tasks, &s->reg); /* the last tasks seen */
}

int session_attach_sampling(struct tool_session *s, int prog_fd, int *hz)
{
	int limit = PERF_CPU_CLOCK_MAX_HZ, kernel_max = perf_max_sample_rate();

	if (kernel_max > 0 && kernel_max < limit)
		limit = kernel_max;
	if (*hz > limit) {
		if (limit == kernel_max)
			fprintf(stderr,
				"%s: -F %d is above the kernel's limit "
				"(kernel.perf_event_max_sample_rate = %d): sampling at %d Hz\n",
				s->tool, *hz, kernel_max, limit);
		else
			fprintf(stderr,
				"%s: -F %d is more than a CPU clock timer can fire (every 10 us at "
				"most): sampling at %d Hz\n", s->tool, *hz, limit);
		*hz = limit;
	}
	if (bpfmod_attach_sampling(&s->bpf, prog_fd, *hz) < 0) {
		fprintf(stderr, "%s: %s\n", s->tool, s->bpf.err);
		return -1;
	}
	s->sample_hz = *hz;
	s->sample_cpus = s->bpf.nperf;
	s->sample_start_ns = monotonic_ns();
	s->sample_busy_start_ns = cpu_time_busy_ns();
	return 0;
}

/*
 * Samples per CPU-second where CPUs were busy: a CPU clock event fires in
 * idle on some kernels and not on others (even CPU by CPU), so idle
 * samples and idle time are both left out. Without /proc/stat, every CPU
 * counts as busy for the whole run.
 */
double session_sampled_hz(struct tool_session *s)
{
	uint64_t busy = session_stat(s, PYB_STAT_SAMPLES) + session_stat(s, PYB_STAT_OTHER);

	if (!s->sample_ns || !s->sample_cpus)
		return 0;
	if (s->sample_busy_ns >= 100000000ull) /* 0.1 s: /proc/stat counts in 10 ms ticks */
		return (double)busy / ((double)s->sample_busy_ns / 1e9);
	busy += session_stat(s, PYB_STAT_IDLE);
	return (double)busy / ((double)s->sample_ns / 1e9) / s->sample_cpus;
}

/* The kernel reached less than 90% of the rate asked. */
static bool sampling_fell_short(struct tool_session *s, double reached)
{
	return s->sample_hz && reached > 0 && reached < 0.9 * s->sample_hz;
}

uint64_t session_sample_period_ns(struct tool_session *s)
{
	double reached = session_sampled_hz(s);

	if (sampling_fell_short(s, reached))
		return (uint64_t)(1e9 / reached);
	return s->sample_hz ? 1000000000ull / (unsigned)s->sample_hz : 0;
}

uint64_t session_stat(struct tool_session *s, int which)
{
	/* per-CPU values come back as one slot per possible CPU, online or
	 * not (one that went offline keeps what it counted) */
	int ncpu = cpu_list_possible_count();
	uint64_t *vals = calloc((size_t)ncpu, sizeof(*vals)), sum = 0;

	if (vals && s->stats_fd >= 0 && bpf_lookup_elem(s->stats_fd, &which, vals) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

/* --function, --threads */
static int apply_views(struct tool_session *s, struct report *rep)
{
	if ((s->view_functions && report_view_functions(rep) < 0) ||
	    (s->view_threads && report_view_threads(rep) < 0))
		return -1;
	return 0;
}

int session_collect(struct tool_session *s, struct report *rep)
{
	struct stack_maps maps = { .counts_fd = s->counts_fd,
				   .pystacks_fd = s->pystacks_fd,
				   .stacks_fd = s->stacks_fd,
				   .native_stacks_fd = s->native_on ? s->native.stacks_fd : -1 };
	int rc;

	rep->start_realtime_ns = s->start_realtime_ns;
	rep->duration_ns = s->duration_ns;
	rc = stack_collector_collect(&s->col, &s->reg, &maps, &s->filter, rep);
	if (rc == 0)
		rc = apply_views(s, rep);
	if (!rep->target[0])
		session_describe_target(s, rep->target, sizeof(rep->target));
	return rc;
}

static int collect_interval(struct tool_session *s, struct report *rep, bool consume)
{
	struct stack_maps maps = { .counts_fd = s->counts_fd,
				   .pystacks_fd = s->pystacks_fd,
				   .stacks_fd = s->stacks_fd,
				   .native_stacks_fd = s->native_on ? s->native.stacks_fd : -1 };
	struct stack_filter f = s->filter;
	uint64_t now = s->running || !s->end_ns ? monotonic_ns() : s->end_ns;
	struct timespec wall;
	int rc;

	clock_gettime(CLOCK_REALTIME, &wall);
	rep->start_realtime_ns = s->interval_start_realtime_ns;
	rep->duration_ns = now - s->interval_start_ns;
	f.consume = consume;
	/* named as they came; a drain for hints that were lost */
	stack_collector_drain(&s->col, &s->reg, s->pystacks_fd);
	rc = stack_collector_collect(&s->col, &s->reg, &maps, &f, rep);
	if (rc == 0)
		rc = apply_views(s, rep);
	if (consume) /* (what is kept is known only from counts consumed) */
		stack_collector_prune(&s->col, &maps, bpfmod_table_max_entries(&s->bpf, "pystacks"),
				      bpfmod_table_max_entries(&s->bpf, "stack_traces"),
				      bpfmod_table_max_entries(&s->bpf, "native_stacks"));
	if (!rep->target[0])
		session_describe_target(s, rep->target, sizeof(rep->target));
	s->interval_start_ns = now;
	s->interval_start_realtime_ns =
		(uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec -
		(s->running ? 0 : monotonic_ns() - now);
	return rc;
}

int session_collect_interval(struct tool_session *s, struct report *rep)
{
	return collect_interval(s, rep, true);
}

int session_collect_standing(struct tool_session *s, struct report *rep)
{
	return collect_interval(s, rep, false);
}

void session_describe_target(struct tool_session *s, char *buf, size_t len)
{
	struct py_target *t = s->npids == 1 ? registry_find(&s->reg, s->pids[0]) : NULL;
	size_t used = 0;

	if (s->filter.only_tid)
		used = (size_t)snprintf(buf, len, "TID %d of ", (int)s->filter.only_tid);
	if (used >= len)
		return;
	if (!s->npids) {
		snprintf(buf + used, len - used, "all Python processes");
	} else if (s->npids == 1) {
		snprintf(buf + used, len - used, "PID %d%s%s%s", (int)s->pids[0],
			 t && t->proc.comm[0] ? " (" : "", TEXT_ESC(t ? t->proc.comm : ""),
			 t && t->proc.comm[0] ? ")" : "");
	} else {
		used += (size_t)snprintf(buf + used, len - used, "PIDs");
		for (size_t i = 0; i < s->npids && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : " ",
						 (int)s->pids[i]);
	}
}

/*
 * Python processes that were not profiled for no fault of theirs or ours:
 * ones that ended before they could be opened, ones that ran no Python
 * code (so their offsets could not be checked) for the whole run. One
 * line each kind; each process with -v (or -p: the user named them).
 */
static void print_unprofiled(struct tool_session *s)
{
	size_t waiting = 0;

	for (size_t i = 0; i < s->reg.n; i++) {
		const struct py_target *t = &s->reg.v[i];

		if (t->state != TARGET_WAITING)
			continue;
		waiting++;
		if (s->npids || s->verbose)
			fprintf(stderr,
				"%s: PID %d (%s): ran no Python code during the run, so its offsets "
				"could not be checked against a frame; not profiled\n",
				s->tool, (int)t->pid, t->proc.comm);
	}
	if (waiting && !s->npids)
		fprintf(stderr,
			"%s: %zu Python %s ran no Python code during the run, so %s "
			"could not be checked; not profiled%s\n",
			s->tool, waiting, plural(waiting, "process", "processes"),
			plural(waiting, "its offsets", "their offsets"),
			s->verbose ? "" : plural(waiting, " (-v names it)", " (-v names them)"));
	if (s->reg.ended_early)
		fprintf(stderr, "%s: %zu Python %s ended before %s could be profiled%s\n",
			s->tool, s->reg.ended_early, plural(s->reg.ended_early, "process", "processes"),
			plural(s->reg.ended_early, "it", "they"),
			s->verbose ? "" : plural(s->reg.ended_early, " (-v names it)", " (-v names them)"));
}

/* -p of a server whose workers do the work: say how to see them. */
static void print_children_hint(struct tool_session *s)
{
	pid_t *kids;
	size_t n;

	if (!s->npids || s->follow_children || s->filter.only_tid ||
	    proc_descendants(s->pids, s->npids, &kids, &n) < 0)
		return;
	if (n)
		fprintf(stderr, "%s: the given %s %zu descendant %s, not traced: "
				"--children traces %s too\n",
			s->tool, plural(s->npids, "process has", "processes have"), n,
			plural(n, "process", "processes"), plural(n, "it", "them"));
	free(kids);
}

/* Files of the targets read only in part, within the budget of
 * sys/elf_image.h and sys/unwind_table.h (hostile or absurd ones). */
static void print_files_cut(struct tool_session *s)
{
	struct native_symbols_stats st;

	native_symbols_stats(s->reg.nsyms, &st);
	if (s->native.files_cut)
		fprintf(stderr,
			"%s: unwind information of %zu %s read in part, within the tool's "
			"budget: native walks through %s may end early%s\n",
			s->tool, s->native.files_cut, plural(s->native.files_cut, "file", "files"),
			plural(s->native.files_cut, "it", "them"),
			s->verbose ? "" : plural(s->native.files_cut, " (-v names it)", " (-v names them)"));
	if (st.cut)
		fprintf(stderr,
			"%s: symbols of %zu %s read in part, within the tool's budget: "
			"native frames in %s may go unnamed\n",
			s->tool, st.cut, plural(st.cut, "file", "files"), plural(st.cut, "it", "them"));
}

/* Per process, how many native walks ended before the outermost frame,
 * and why (all of them with -v). */
static void print_native_ends(struct tool_session *s)
{
	struct native_ends *v;
	size_t n = native_maps_read_ends(&s->native, &v);

	for (size_t i = 0; i < n; i++) {
		struct py_target *t = registry_find(&s->reg, v[i].pid);
		uint64_t all = 0, early;
		char why[512];
		size_t used = 0;

		for (int k = 0; k < PYB_NATIVE_END_KINDS; k++)
			all += v[i].n[k];
		/* stopping at the outermost eval loop is not early: what is
		 * left out is what the report leaves out */
		early = all - v[i].n[PYB_NATIVE_COMPLETE] - v[i].n[PYB_NATIVE_PYTHON_ROOT];
		if (!all || (!early && !s->verbose))
			continue;
		why[0] = '\0';
		for (int k = 1; k < PYB_NATIVE_END_KINDS && used < sizeof(why); k++)
			if (v[i].n[k] && k != PYB_NATIVE_PYTHON_ROOT)
				used += (size_t)snprintf(why + used, sizeof(why) - used, "%s%llu %s",
							 used ? ", " : ": ",
							 (unsigned long long)v[i].n[k],
							 native_end_text(k));
		fprintf(stderr,
			"%s: native stacks of %s (PID %d): %llu of %llu %s early%s\n",
			s->tool, TEXT_ESC(t && t->proc.comm[0] ? t->proc.comm : "?"), (int)v[i].pid,
			(unsigned long long)early, (unsigned long long)all,
			plural(all, "walk ended", "walks ended"), why);
	}
	if (s->verbose)
		fprintf(stderr,
			"%s: native unwind tables: %zu %s (%zu KiB) of %zu %s, built in %.0f ms, "
			"loaded in %.0f ms; %zu %s without unwind information\n",
			s->tool, (size_t)s->native.rows_used, plural(s->native.rows_used, "row", "rows"),
			native_maps_table_bytes(&s->native) / 1024, s->native.nfiles,
			plural(s->native.nfiles, "file", "files"), (double)s->native.build_ns / 1e6,
			(double)s->native.load_ns / 1e6, s->native.files_failed,
			plural(s->native.files_failed, "file", "files"));
	if (s->verbose && target_file_no_openat2())
		fprintf(stderr, "%s: %s\n", s->tool, TARGET_FILE_NO_OPENAT2);
	free(v);
	print_files_cut(s);
}

/* Off-CPU intervals whose end the kernel did not report (pyoffcpu.bpf.c:
 * close_unseen). */
static void print_unseen_switches(struct tool_session *s)
{
	uint64_t ended = session_stat(s, PYB_STAT_SWITCH_IN_UNSEEN);
	uint64_t lost = session_stat(s, PYB_STAT_SWITCH_IN_LOST);

	if (!ended && !lost)
		return;
	fprintf(stderr,
		"%s: %llu %s to a CPU not reported by the kernel: %llu blocked %s "
		"at %s wake-up (the runnable time after it not counted), %llu "
		"%s not counted (preempted, or %s wake-up not seen either)\n",
		s->tool, (unsigned long long)(ended + lost), plural(ended + lost, "return", "returns"),
		(unsigned long long)ended, plural(ended, "interval ended", "intervals ended"),
		plural(ended, "its", "their"), (unsigned long long)lost,
		plural(lost, "interval", "intervals"), plural(lost, "its", "their"));
}

void session_print_unnamed(const struct tool_session *s, const struct report *rep,
			   const char *unit)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct native_unnamed u;

	if (!s->filter.user_stacks || !s->native_on || native_unnamed_count(rep, &u) < 0)
		return;
	native_unnamed_print(stderr, s->tool, &u, unit, urls && urls[0]);
	native_unnamed_free(&u);
}

/* The first two lines: what was sampled, and what of it was lost. */
static void print_sample_counts(struct tool_session *s, const char *one, const char *many)
{
	uint64_t samples = session_stat(s, PYB_STAT_SAMPLES);
	uint64_t no_ts = session_stat(s, PYB_STAT_NO_TSTATE);
	size_t gone = s->reg.exited;
	uint64_t truncated = session_stat(s, PYB_STAT_TRUNCATED);
	uint64_t not_counted = session_stat(s, PYB_STAT_COUNT_MAP_FULL);
	uint64_t stacks_full = session_stat(s, PYB_STAT_STACK_MAP_FULL);

	fprintf(stderr,
		"%s: %llu %s of %zu Python %s (%zu exited during the run); "
		"%llu with Python frames, %llu in threads without a Python thread state\n",
		s->tool, (unsigned long long)samples, plural(samples, one, many), s->reg.active_ever,
		plural(s->reg.active_ever, "process", "processes"), gone,
		(unsigned long long)(samples - no_ts), (unsigned long long)no_ts);
	fprintf(stderr,
		"%s: %llu %s truncated at %d Python frames, %llu with an unreadable frame, "
		"%llu %s not counted (maps full: %llu %s), %llu process %s lost\n",
		s->tool, (unsigned long long)truncated, plural(truncated, "stack", "stacks"),
		PYB_MAX_FRAMES, (unsigned long long)session_stat(s, PYB_STAT_READ_ERRORS),
		(unsigned long long)not_counted, plural(not_counted, one, many),
		(unsigned long long)stacks_full, plural(stacks_full, "stack", "stacks"),
		(unsigned long long)s->lost_events, plural(s->lost_events, "event", "events"));
}

/* -p, --children, a command: the samples of processes asked for that fell
 * before the tool could read them (a start-up's first moments, most often:
 * a process is read once it runs Python code). */
static void print_unregistered_samples(struct tool_session *s)
{
	uint64_t n = session_stat(s, PYB_STAT_UNREGISTERED);

	if (n)
		fprintf(stderr,
			"%s: %llu %s of the processes asked for fell before the tool could read "
			"them (starting up, no Python frame yet, or not Python): not counted\n",
			s->tool, (unsigned long long)n, plural(n, "sample", "samples"));
}

/* What the native walks could not show, and why. */
static void print_native_notes(struct tool_session *s)
{
	if (s->filter.user_stacks && s->reg.no_native)
		fprintf(stderr,
			"%s: native frames not shown for %zu %s: %s code could not be "
			"read (see -v)\n",
			s->tool, s->reg.no_native, plural(s->reg.no_native, "process", "processes"),
			plural(s->reg.no_native, "its", "their"));
	if (s->filter.user_stacks && s->native_on)
		print_native_ends(s);
	if (s->col.native_unplaced)
		fprintf(stderr,
			"%s: native walks ended before the interpreter's eval loop in %llu distinct "
			"%s: the native frames walked are kept on top of the innermost Python frame, "
			"after a frame [native walk ended: WHY] that says why the walk stopped\n",
			s->tool, (unsigned long long)s->col.native_unplaced,
			plural(s->col.native_unplaced, "stack", "stacks"));
	if (s->col.native_changed)
		fprintf(stderr,
			"%s: native frames left out of %llu distinct %s, marked %s: the "
			"process's mappings of code changed under them (a library unloaded, "
			"another loaded)\n",
			s->tool, (unsigned long long)s->col.native_changed,
			plural(s->col.native_changed, "stack", "stacks"), MAPPING_CHANGED_MARKER);
}

/* --async: how much of the report its tasks could root. */
static void print_async_notes(struct tool_session *s)
{
	const struct async_tasks *t = s->tasks;
	double all = s->col.all_value ? (double)s->col.all_value : 1.0;
	size_t groups = s->col.task_roots.n;
	bool by_coro = t->group == ASYNC_GROUP_COROUTINE;

	fprintf(stderr,
		"%s: --async: %llu asyncio %s named, in %zu %s by %s; %.1f%% of what is "
		"reported rooted in its task, %.1f%% in coroutines not matched to a task (it "
		"ended first, no task ran them, or its task could not be told from others) left "
		"as they were\n",
		s->tool, (unsigned long long)t->named, plural(t->named, "task", "tasks"), groups,
		plural(groups, "group", "groups"), by_coro ? "coroutine" : "name",
		100.0 * (double)s->col.task_value / all, 100.0 * (double)s->col.untasked_value / all);
	if (by_coro && t->coro_unknown)
		fprintf(stderr,
			"%s: --async: the coroutine of %llu %s could not be read: rooted in "
			"<task %s>\n",
			s->tool, (unsigned long long)t->coro_unknown,
			plural(t->coro_unknown, "task", "tasks"), ASYNC_UNKNOWN_COROUTINE);
	if (t->named_ended)
		fprintf(stderr,
			"%s: --async: %llu %s before %s could be read: %s %s samples "
			"read%s, without the tasks that awaited %s\n",
			s->tool, (unsigned long long)t->named_ended,
			plural(t->named_ended, "task ended", "tasks ended"),
			plural(t->named_ended, "it", "they"),
			by_coro ? "rooted in the coroutine" : "named as",
			plural(t->named_ended, "its", "their"),
			by_coro ? " (<task " ASYNC_UNKNOWN_COROUTINE "> where that frame could "
				  "not be named)"
				: plural(t->named_ended, " it", " them"),
			plural(t->named_ended, "it", "them"));
	if (t->read_errors)
		fprintf(stderr, "%s: --async: tasks could not be read %llu %s (last: %s)\n",
			s->tool, (unsigned long long)t->read_errors,
			plural(t->read_errors, "time", "times"), TEXT_ESC(t->last_error));
}

/* The rate reached, when -v asks or when the kernel throttled it. */
static void print_sampling_rate(struct tool_session *s)
{
	double reached = session_sampled_hz(s);

	if (s->verbose && s->sample_hz && !sampling_fell_short(s, reached))
		fprintf(stderr, "%s: sampled %.0f times per CPU-second (%d asked)\n", s->tool,
			reached, s->sample_hz);
	if (sampling_fell_short(s, reached))
		fprintf(stderr,
			"%s: sampled %.0f times per CPU-second, not the %d asked (the kernel "
			"throttled it): a sample stands for %.0f us in the report\n",
			s->tool, reached, s->sample_hz, 1e6 / reached);
}

void session_print_summary(struct tool_session *s, const char *one, const char *many)
{
	uint64_t missed = bpfmod_missed_runs(&s->bpf);

	print_sample_counts(s, one, many);
	print_unregistered_samples(s);
	print_unseen_switches(s);
	if (missed)
		fprintf(stderr,
			"%s: the kernel skipped %llu %s of the tool's BPF programs (another BPF "
			"program was running on that CPU): %s samples or events were not seen\n",
			s->tool, (unsigned long long)missed, plural(missed, "run", "runs"),
			plural(missed, "its", "their"));
	if (s->col.unknown_code)
		fprintf(stderr,
			"%s: %llu %s of code objects that could not be named (their "
			"process exited or freed them first)\n",
			s->tool, (unsigned long long)s->col.unknown_code,
			plural(s->col.unknown_code, "frame", "frames"));
	if (s->col.missed_kernel || s->col.missed_user)
		fprintf(stderr,
			"WARNING: %llu stack %s not be displayed. Consider increasing "
			"--stack-storage-size.\n",
			(unsigned long long)(s->col.missed_kernel + s->col.missed_user),
			plural(s->col.missed_kernel + s->col.missed_user, "trace could",
			       "traces could"));
	print_native_notes(s);
	if (s->tasks)
		print_async_notes(s);
	print_sampling_rate(s);
	if (s->reg.refused)
		fprintf(stderr, "%s: %zu Python %s could not be profiled (see above)\n",
			s->tool, s->reg.refused, plural(s->reg.refused, "process", "processes"));
	print_unprofiled(s);
	print_children_hint(s);
}

/* Every run counts, also the quick ones for other processes, so the time
 * per event is an upper bound. */
void session_print_bpf_stats(struct tool_session *s, int prog_fd, const char *prog_name,
			     uint64_t events, const char *event_noun)
{
	char path[64], line[128];
	unsigned long long run_ns = 0, runs = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", prog_fd);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "run_time_ns: %llu", &run_ns);
		sscanf(line, "run_cnt: %llu", &runs);
	}
	fclose(f);
	if (!runs) {
		fprintf(stderr, "%s: BPF run time not known: sysctl "
				"kernel.bpf_stats_enabled=1 to measure it\n", s->tool);
		return;
	}
	if (!event_noun) {
		fprintf(stderr, "%s: BPF %s program: %llu %s, %.0f ns per run\n", s->tool,
			prog_name, runs, plural(runs, "run", "runs"), (double)run_ns / (double)runs);
		return;
	}
	fprintf(stderr,
		"%s: BPF %s program: %llu %s, %.0f ns per run, at most %.0f ns per %s (%llu)\n",
		s->tool, prog_name, runs, plural(runs, "run", "runs"), (double)run_ns / (double)runs,
		events ? (double)run_ns / (double)events : 0.0, event_noun,
		(unsigned long long)events);
}

void session_close(struct tool_session *s)
{
	if (s->launched)
		launch_close(&s->command);
	stack_collector_free(&s->col);
	registry_free(&s->reg);
	native_maps_free(&s->native);
	bpfmod_close(&s->bpf);
}
