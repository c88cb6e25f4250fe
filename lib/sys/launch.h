/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Starting a command to trace: forked at once but held before its exec
 * until the tracer is ready (release), optionally under another user (the
 * one who ran sudo, by default), then waited for like a shell does.
 */
#ifndef PYBPF_SYS_LAUNCH_H
#define PYBPF_SYS_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LAUNCH_MAX_GROUPS 256

/* Who the command runs as. */
struct launch_creds {
	bool change; /* false: as the tracer itself */
	uid_t uid;
	gid_t gid;
	gid_t groups[LAUNCH_MAX_GROUPS]; /* supplementary groups */
	int ngroups;
	char name[64], home[256]; /* for USER, LOGNAME and HOME; "" unknown */
};

/*
 * Whom to run the command as: user (a name or a numeric uid) if given;
 * otherwise, when root runs us through sudo, the user who ran sudo
 * (SUDO_UID, SUDO_GID), with that user's supplementary groups; otherwise
 * ourselves. "root" or 0 keeps root. Returns 0, or -1 with the reason in err.
 */
int launch_creds_resolve(const char *user, struct launch_creds *c, char *err, size_t errlen);

struct launch {
	const char *name; /* argv[0] */
	pid_t pid;   /* 0: none */
	int go_fd;   /* written to release the child */
	int err_fd;  /* the child's exec errno, or EOF once it exec'd */
	int pidfd;   /* readable when the child has exited; -1: none */
	bool reaped;
	int status;  /* wait status once reaped */
};

/*
 * Forks a child that waits, then takes creds and execs argv (searched in
 * PATH). Returns 0, or -1 with the reason in err.
 */
int launch_prepare(struct launch *l, char *const argv[], const struct launch_creds *creds,
		   char *err, size_t errlen);

/* Lets the child exec. Returns 0 once it has, or -1 with the reason in err
 * (the child has then exited). */
int launch_release(struct launch *l, char *err, size_t errlen);

/* Reaps the child if it has exited (wait: block until it does). Returns
 * true once reaped. */
bool launch_reap(struct launch *l, bool wait);

/* Ends a child still running: waits wait_ms for it to exit by itself (it
 * may have had the terminal's Ctrl-C too), then sends SIGTERM, and SIGKILL
 * 2 s later. Returns when it is reaped. */
void launch_end(struct launch *l, int wait_ms);

/* The exit status a shell would give: the code, or 128 + the signal. */
int launch_exit_code(const struct launch *l);

void launch_close(struct launch *l);

#endif
