/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/remote_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

/* Fallback for kernels or sandboxes without process_vm_readv. */
static int read_proc_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	if (n < 0)
		return errno == EIO ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (len == 0)
		return 0;
	/* Never ask the kernel for the null page or non-canonical addresses. */
	if (addr < 4096 || addr + len < addr || addr + len > 0x800000000000ULL)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0) {
		if (errno == ENOSYS || errno == EPERM)
			return read_proc_mem(pid, addr, buf, len);
		return -errno;
	}
	return (size_t)n == len ? 0 : -EFAULT;
}

int remote_read_u64(pid_t pid, uint64_t addr, uint64_t *out)
{
	return remote_read(pid, addr, out, sizeof(*out));
}

int remote_read_i32(pid_t pid, uint64_t addr, int32_t *out)
{
	return remote_read(pid, addr, out, sizeof(*out));
}
