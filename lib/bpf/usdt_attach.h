/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A USDT probe of one process, attached as a uprobe on its call site
 * with the kernel raising the probe's semaphore (the uprobe's
 * ref_ctr_offset) in that process only, for as long as it is attached.
 * Unlike writing the semaphore through /proc/PID/mem, as bcc does, this
 * works whatever root or mount namespace the process runs in: the file is
 * named by the process's own mapping of it (/proc/PID/map_files), never
 * by a path resolved on the host.
 */
#ifndef PYBPF_USDT_ATTACH_H
#define PYBPF_USDT_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

#include "sys/proc_maps.h"
#include "sys/stapsdt.h"

/*
 * Attaches prog_fd to probe p of the file the process pid maps at m.
 * Returns the perf event's descriptor (closing it detaches the probe and
 * lowers the semaphore), or -1 with the reason in err.
 */
int usdt_attach(int prog_fd, pid_t pid, const struct proc_map *m,
		const struct stapsdt_probe *p, char *err, size_t len);

#endif
