/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a file descriptor of another process is, in words: a file path, a
 * pipe, or a socket with its addresses, found through /proc/PID/fd and the
 * socket tables of the process's own network namespace (/proc/PID/net/).
 */
#ifndef PYBPF_SYS_PROC_FDS_H
#define PYBPF_SYS_PROC_FDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Describes fd of pid into buf: "TCP 127.0.0.1:43210 -> 127.0.0.1:5432",
 * "TCP listening on 0.0.0.0:8080", "UDP ...", "UNIX /run/x.sock", "pipe",
 * "epoll", or the path of a file. Returns 0, or a negative errno (-ENOENT:
 * no such fd).
 */
int proc_fd_describe(pid_t pid, int fd, char *buf, size_t len);

/* Number of fds an epoll fd of pid watches, or a negative errno. */
int proc_epoll_count(pid_t pid, int epfd);

/*
 * Parses one line of /proc/net/{tcp,tcp6,udp,udp6} and, if its inode is
 * INODE, writes "PROTO local -> remote" (or "PROTO listening on local")
 * into buf and returns 1; 0 for another inode, -1 for a line that is not
 * one of the table's.
 */
int proc_net_inet_line(const char *line, const char *proto, uint64_t inode, char *buf,
		       size_t len);

/* The same for /proc/net/unix ("UNIX path" or "UNIX (unnamed)"). */
int proc_net_unix_line(const char *line, uint64_t inode, char *buf, size_t len);

#endif
