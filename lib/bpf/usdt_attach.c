// SPDX-License-Identifier: Apache-2.0
#include "bpf/usdt_attach.h"

#include <bcc/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int usdt_attach(int prog_fd, pid_t pid, const struct proc_map *m,
		const struct stapsdt_probe *p, char *err, size_t len)
{
	char path[96], ev[64];
	int fd;

	if (p->sem_offset > UINT32_MAX) {
		snprintf(err, len, "its semaphore is beyond 4 GiB in the file");
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 m->start, m->end);
	snprintf(ev, sizeof(ev), "pybpf_%d_%" PRIx64, (int)pid, p->pc_offset);
	errno = 0;
	fd = bpf_attach_uprobe(prog_fd, BPF_PROBE_ENTRY, ev, path, p->pc_offset, pid,
			       (uint32_t)p->sem_offset);
	if (fd < 0)
		snprintf(err, len, "cannot attach a uprobe at file offset 0x%" PRIx64 ": %s",
			 p->pc_offset, errno ? strerror(errno) : "refused");
	return fd;
}
