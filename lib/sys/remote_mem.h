/* SPDX-License-Identifier: Apache-2.0 */
/* Reading another process's memory without stopping or ptrace-attaching it. */
#ifndef PYBPF_REMOTE_MEM_H
#define PYBPF_REMOTE_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Copies len bytes at addr in process pid into buf. Returns 0, or a
 * negative errno: -ESRCH when the process is gone, -EFAULT when the range
 * is not fully mapped (a short read counts as a failure).
 */
int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);

int remote_read_u64(pid_t pid, uint64_t addr, uint64_t *out);
int remote_read_i32(pid_t pid, uint64_t addr, int32_t *out);

#endif
