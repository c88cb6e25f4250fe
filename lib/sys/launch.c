/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define KILL_AFTER_TERM_MS 2000

static void creds_from_passwd(struct launch_creds *c, const struct passwd *pw)
{
	int n = LAUNCH_MAX_GROUPS;

	snprintf(c->name, sizeof(c->name), "%s", pw->pw_name);
	snprintf(c->home, sizeof(c->home), "%s", pw->pw_dir);
	if (getgrouplist(pw->pw_name, c->gid, c->groups, &n) < 0)
		n = LAUNCH_MAX_GROUPS; /* more than we keep: the first ones */
	c->ngroups = n;
}

static int parse_id(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || end == s || *end || *v > 0x7fffffff ? -1 : 0;
}

int launch_creds_resolve(const char *user, struct launch_creds *c, char *err, size_t errlen)
{
	const char *sudo_uid = getenv("SUDO_UID"), *sudo_gid = getenv("SUDO_GID");
	const struct passwd *pw;
	unsigned long uid, gid;

	memset(c, 0, sizeof(*c));
	if (user) {
		pw = parse_id(user, &uid) == 0 ? getpwuid((uid_t)uid) : getpwnam(user);
		if (!pw && parse_id(user, &uid) < 0) {
			snprintf(err, errlen, "no such user: %s", user);
			return -1;
		}
		c->uid = pw ? pw->pw_uid : (uid_t)uid;
		c->gid = pw ? pw->pw_gid : (gid_t)uid;
	} else {
		/* only root switches; sudo -E or a user's own run keep it */
		if (geteuid() != 0 || !sudo_uid || parse_id(sudo_uid, &uid) < 0)
			return 0;
		if (!sudo_gid || parse_id(sudo_gid, &gid) < 0) {
			snprintf(err, errlen, "SUDO_UID is set but SUDO_GID is not a number");
			return -1;
		}
		pw = getpwuid((uid_t)uid);
		c->uid = (uid_t)uid;
		c->gid = (gid_t)gid;
	}
	if (c->uid == 0 && geteuid() == 0)
		return 0; /* root stays root */
	c->change = true;
	if (pw)
		creds_from_passwd(c, pw);
	else
		c->groups[c->ngroups++] = c->gid; /* no account: its group only */
	return 0;
}

/* In the child. Returns 0, or -1 with errno set. */
static int become(const struct launch_creds *c)
{
	if (!c->change)
		return 0;
	if (setgroups((size_t)c->ngroups, c->groups) < 0 || setgid(c->gid) < 0 ||
	    setuid(c->uid) < 0)
		return -1;
	/* sudo set these for root */
	if (c->name[0]) {
		setenv("USER", c->name, 1);
		setenv("LOGNAME", c->name, 1);
	}
	if (c->home[0])
		setenv("HOME", c->home, 1);
	return 0;
}

static void child(int go_fd, int err_fd, char *const argv[], const struct launch_creds *c)
{
	char go = 0;
	int e;

	/* the tracer closing the pipe without a byte means: do not run */
	while (read(go_fd, &go, 1) < 0 && errno == EINTR)
		;
	if (go != 'g')
		_exit(127);
	close(go_fd);
	if (become(c) == 0)
		execvp(argv[0], argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126); /* as shells say it */
}

int launch_prepare(struct launch *l, char *const argv[], const struct launch_creds *creds,
		   char *err, size_t errlen)
{
	int go[2], ex[2];

	memset(l, 0, sizeof(*l));
	l->name = argv[0];
	l->go_fd = l->err_fd = l->pidfd = -1;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ex, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot make a pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	l->pid = fork();
	if (l->pid < 0) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		l->pid = 0;
		close(go[0]), close(go[1]), close(ex[0]), close(ex[1]);
		return -1;
	}
	if (l->pid == 0) {
		close(go[1]);
		close(ex[0]);
		child(go[0], ex[1], argv, creds);
	}
	close(go[0]);
	close(ex[1]);
	l->go_fd = go[1];
	l->err_fd = ex[0];
	l->pidfd = (int)syscall(SYS_pidfd_open, l->pid, 0);
	return 0;
}

int launch_release(struct launch *l, char *err, size_t errlen)
{
	ssize_t n;
	int e = 0;

	if (write(l->go_fd, "g", 1) != 1) {
		snprintf(err, errlen, "cannot start the command: %s", strerror(errno));
		return -1;
	}
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		snprintf(err, errlen, "cannot run %s: %s", l->name, strerror(e));
		launch_reap(l, true);
		return -1;
	}
	return 0;
}

bool launch_reap(struct launch *l, bool wait)
{
	pid_t r;

	if (!l->pid || l->reaped)
		return l->reaped;
	do
		r = waitpid(l->pid, &l->status, wait ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == l->pid || (r < 0 && errno == ECHILD))
		l->reaped = true;
	return l->reaped;
}

/* Waits up to ms for the child to exit (and reaps it). */
static bool wait_exit(struct launch *l, int ms)
{
	for (int left = ms; left > 0 && !launch_reap(l, false); left -= 20) {
		struct pollfd p = { .fd = l->pidfd, .events = POLLIN };

		if (l->pidfd < 0 || poll(&p, 1, left < 20 ? left : 20) < 0)
			usleep(20000);
	}
	return launch_reap(l, false);
}

void launch_end(struct launch *l, int wait_ms)
{
	if (!l->pid || l->reaped)
		return;
	if (l->go_fd >= 0) { /* never released: it must not run */
		close(l->go_fd);
		l->go_fd = -1;
	}
	if (wait_exit(l, wait_ms))
		return;
	kill(l->pid, SIGTERM);
	if (wait_exit(l, KILL_AFTER_TERM_MS))
		return;
	kill(l->pid, SIGKILL);
	launch_reap(l, true);
}

int launch_exit_code(const struct launch *l)
{
	if (!l->reaped)
		return 1;
	if (WIFEXITED(l->status))
		return WEXITSTATUS(l->status);
	if (WIFSIGNALED(l->status))
		return 128 + WTERMSIG(l->status);
	return 1;
}

void launch_close(struct launch *l)
{
	launch_end(l, 0);
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	if (l->pidfd >= 0)
		close(l->pidfd);
	l->go_fd = l->err_fd = l->pidfd = -1;
}
