/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Uprobes on functions of the C library a process has mapped, for that
 * process alone (a per-process perf event: the breakpoints go into its
 * memory only; other processes sharing the file do not trap).
 *
 * The file is never found by a path the target controls: it is opened
 * through the kernel's handle on the mapping (/proc/PID/map_files/, via
 * sys/target_file.h, checked to be the mapped device and inode), its
 * symbols read from that descriptor, and the uprobe given the descriptor's
 * own path (/proc/self/fd/N): the kernel resolves it to the very file
 * opened, not to whatever a symlink in the target's root names.
 */
#ifndef PYBPF_BPF_LIBC_UPROBES_H
#define PYBPF_BPF_LIBC_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One probe: a function by its dynamic symbol, at entry or return. */
struct libc_uprobe {
	const char *symbol;
	bool ret;    /* a uretprobe */
	bool needed; /* if it cannot be attached, the process is not probed */
	int prog_fd; /* the loaded BPF program (BPF_PROG_TYPE_KPROBE) */
};

/* The perf events of the probes attached, closed together. */
struct libc_uprobes {
	int *fds;
	size_t n, cap;
	size_t functions_missing; /* optional functions the libc did not have */
};

/*
 * Attaches the n probes to process pid's libc (libc.so.6 or libc-*.so).
 * Functions at one address (aliases such as memalign and aligned_alloc)
 * are probed once, by the first. Returns the number attached, or -1 with
 * why in err (no libc mapped, the file cannot be opened or read, a needed
 * function missing, the kernel refused).
 */
int libc_uprobes_attach(struct libc_uprobes *u, pid_t pid, const struct libc_uprobe *probes,
			size_t n, char *err, size_t errlen);

void libc_uprobes_close(struct libc_uprobes *u);

#endif
