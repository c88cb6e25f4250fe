/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/vdso_image.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sys/remote_mem.h"

/* The image's bytes (malloc'ed) and identity; their count, or -errno. */
static ssize_t read_image(pid_t pid, uint64_t start, uint64_t end, uint8_t **out,
			  struct vdso_ident *id)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t len;
	uint8_t *buf;
	int rc;

	*out = NULL;
	if (end <= start || end - start > VDSO_IMAGE_MAX)
		return -EFBIG;
	len = (size_t)(end - start);
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	rc = remote_read(pid, start, buf, len);
	if (rc == 0 && (len < sizeof(Elf64_Ehdr) || memcmp(buf, ELFMAG, SELFMAG) != 0))
		rc = -ENOEXEC;
	if (rc < 0) {
		free(buf);
		return rc;
	}
	for (size_t i = 0; i < len; i++)
		h = (h ^ buf[i]) * 0x100000001b3ULL;
	id->hash = h;
	id->size = len;
	*out = buf;
	return (ssize_t)len;
}

int vdso_image_ident(pid_t pid, uint64_t start, uint64_t end, struct vdso_ident *id)
{
	uint8_t *buf;
	ssize_t n = read_image(pid, start, end, &buf, id);

	free(buf);
	return n < 0 ? (int)n : 0;
}

int vdso_image_open(pid_t pid, uint64_t start, uint64_t end, struct vdso_ident *id)
{
	uint8_t *buf;
	ssize_t n = read_image(pid, start, end, &buf, id);
	int fd, err;

	if (n < 0)
		return (int)n;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
		err = errno ? -errno : -EIO;
		if (fd >= 0)
			close(fd);
		free(buf);
		return err;
	}
	free(buf);
	return fd;
}
