/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/remote_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_IMAGES 16

static struct {
	bool used;
	struct remote_image img;
} images[MAX_IMAGES];

pid_t remote_image_attach(const struct remote_image *img)
{
	for (int i = 0; i < MAX_IMAGES; i++) {
		if (images[i].used)
			continue;
		images[i].used = true;
		images[i].img = *img;
		return (pid_t)(REMOTE_IMAGE_PID_BASE + i);
	}
	return -1;
}

void remote_image_detach(pid_t pid)
{
	long i = (long)pid - REMOTE_IMAGE_PID_BASE;

	if (i >= 0 && i < MAX_IMAGES)
		images[i].used = false;
}

const struct remote_image *remote_image_of(pid_t pid)
{
	long i = (long)pid - REMOTE_IMAGE_PID_BASE;

	if (i < 0 || i >= MAX_IMAGES || !images[i].used)
		return NULL;
	return &images[i].img;
}

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
	/* Never ask for the null page or non-canonical addresses. */
	if (addr < 4096 || addr + len < addr || addr + len > 0x800000000000ULL)
		return -EFAULT;
	if (pid >= REMOTE_IMAGE_PID_BASE) {
		const struct remote_image *img = remote_image_of(pid);

		return img ? img->read(img->ctx, addr, buf, len) : -ESRCH;
	}
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
