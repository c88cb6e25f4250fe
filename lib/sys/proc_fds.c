/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/proc_fds.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* TCP states as /proc/net/tcp numbers them (include/net/tcp_states.h). */
static const char *tcp_state(unsigned st)
{
	static const char *const names[] = {
		NULL, "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
		"TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING",
		"NEW_SYN_RECV",
	};

	return st < sizeof(names) / sizeof(names[0]) ? names[st] : NULL;
}

/* "0100007F:1F90" (v4) or 32 hex digits and a port (v6) -> "127.0.0.1:8080". */
static bool format_endpoint(const char *hex, char *buf, size_t len)
{
	const char *colon = strchr(hex, ':');
	size_t n = colon ? (size_t)(colon - hex) : 0;
	uint8_t bytes[16];
	char addr[INET6_ADDRSTRLEN];
	unsigned long port;
	char *end;

	if (n != 8 && n != 32)
		return false;
	for (size_t g = 0; g < n / 8; g++) {
		char word[9];
		uint32_t v;

		memcpy(word, hex + 8 * g, 8);
		word[8] = '\0';
		v = (uint32_t)strtoul(word, &end, 16);
		if (*end)
			return false;
		/* the kernel prints each 32-bit word as a number in host order */
		memcpy(bytes + 4 * g, &v, 4);
	}
	port = strtoul(colon + 1, &end, 16);
	if (end == colon + 1 || port > 65535)
		return false;
	if (!inet_ntop(n == 8 ? AF_INET : AF_INET6, bytes, addr, sizeof(addr)))
		return false;
	snprintf(buf, len, n == 8 ? "%s:%lu" : "[%s]:%lu", addr, port);
	return true;
}

int proc_net_inet_line(const char *line, const char *proto, uint64_t inode, char *buf,
		       size_t len)
{
	char local[80], remote[80], lbuf[64], rbuf[64];
	unsigned st;
	uint64_t ino;
	int n = 0;

	/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
	if (sscanf(line, " %*[^:]: %79s %79s %x %*s %*s %*s %*s %*s %" SCNu64 "%n", local, remote,
		   &st, &ino, &n) < 4 || !n)
		return -1;
	if (ino != inode)
		return 0;
	if (!format_endpoint(local, lbuf, sizeof(lbuf)) || !format_endpoint(remote, rbuf, sizeof(rbuf)))
		return -1;
	if (st == 10) /* LISTEN */
		snprintf(buf, len, "%s listening on %s", proto, lbuf);
	else if (st == 1 || !tcp_state(st) || strcmp(proto, "TCP") != 0)
		snprintf(buf, len, "%s %s -> %s", proto, lbuf, rbuf);
	else
		snprintf(buf, len, "%s %s -> %s (%s)", proto, lbuf, rbuf, tcp_state(st));
	return 1;
}

int proc_net_unix_line(const char *line, uint64_t inode, char *buf, size_t len)
{
	uint64_t ino;
	unsigned type, st;
	int n = 0;
	const char *path;

	/* Num RefCount Protocol Flags Type St Inode [Path] */
	if (sscanf(line, " %*[^:]: %*x %*x %*x %x %x %" SCNu64 "%n", &type, &st, &ino, &n) < 3 || !n)
		return -1;
	if (ino != inode)
		return 0;
	path = line + n;
	while (*path == ' ')
		path++;
	snprintf(buf, len, "UNIX%s %.*s", type == 2 ? " datagram" : "",
		 (int)strcspn(path, "\n"), *path && *path != '\n' ? path : "(unnamed)");
	return 1;
}

/* Looks the socket's inode up in the process's own network namespace. */
static int describe_socket(pid_t pid, uint64_t inode, char *buf, size_t len)
{
	static const struct {
		const char *file, *proto;
	} tables[] = {
		{ "tcp", "TCP" }, { "tcp6", "TCP" }, { "udp", "UDP" }, { "udp6", "UDP" },
		{ "unix", NULL },
	};
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]) && found <= 0; t++) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, tables[t].file);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (found <= 0 && getline(&line, &cap, f) > 0)
			found = tables[t].proto
					? proc_net_inet_line(line, tables[t].proto, inode, buf, len)
					: proc_net_unix_line(line, inode, buf, len);
		fclose(f);
	}
	free(line);
	if (found <= 0)
		snprintf(buf, len, "socket");
	return 0;
}

int proc_fd_describe(pid_t pid, int fd, char *buf, size_t len)
{
	char path[64], target[512];
	uint64_t inode;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (sscanf(target, "socket:[%" SCNu64 "]", &inode) == 1)
		return describe_socket(pid, inode, buf, len);
	if (strncmp(target, "pipe:", 5) == 0)
		snprintf(buf, len, "pipe");
	else if (strncmp(target, "anon_inode:", 11) == 0)
		snprintf(buf, len, "%s", target + 11 + (target[11] == '['));
	else
		snprintf(buf, len, "%s", target);
	/* "anon_inode:[eventpoll]" -> "eventpoll" */
	if (buf[0] && buf[strlen(buf) - 1] == ']' && strncmp(target, "anon_inode:[", 12) == 0)
		buf[strlen(buf) - 1] = '\0';
	return 0;
}

int proc_epoll_count(pid_t pid, int epfd)
{
	char path[64], line[256];
	int count = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, epfd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "tfd:", 4) == 0)
			count++;
	fclose(f);
	return count;
}
