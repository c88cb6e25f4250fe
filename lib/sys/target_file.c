/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/target_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sys/elf_image.h"
#include "sys/proc_maps.h"
#include "sys/remote_mem.h"

/* O_NONBLOCK: a FIFO opens at once (and a device does not wait for a
 * carrier); O_NOCTTY: a tty never becomes ours. */
#define TARGET_OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

static bool no_openat2;

bool target_file_no_openat2(void)
{
	return no_openat2;
}

int target_file_check(int fd, const struct target_file_want *want)
{
	uint64_t cap = want && want->max_size ? want->max_size : TARGET_FILE_MAX_SIZE;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size < 0 || (uint64_t)st.st_size > cap)
		return -EFBIG;
	if (want && want->ino &&
	    ((uint64_t)st.st_ino != want->ino || major(st.st_dev) != want->dev_major ||
	     minor(st.st_dev) != want->dev_minor))
		return -ESTALE;
	return 0;
}

/* Hands back fd if it passes the checks, else closes it. */
static int checked(int fd, const struct target_file_want *want)
{
	int rc;

	if (fd < 0)
		return -errno;
	rc = target_file_check(fd, want);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int target_file_openat(int root_fd, const char *path, const struct target_file_want *want)
{
	struct open_how how = { .flags = TARGET_OPEN_FLAGS,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd = -1;

	if (root_fd < 0 || !path || !path[0])
		return -EINVAL;
	if (no_openat2)
		return -ENOSYS;
	/* EAGAIN: a rename raced the walk; the kernel asks for a retry */
	for (int tries = 0; tries < 3; tries++) {
		fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	if (fd < 0 && errno == ENOSYS) {
		no_openat2 = true; /* Linux before 5.6: no safe way to resolve */
		return -ENOSYS;
	}
	return checked(fd, want);
}

int target_file_open(pid_t pid, const char *path, const struct target_file_want *want)
{
	const struct remote_image *img = remote_image_of(pid);
	char root[64];
	int dir, fd;

	if (img)
		return img->root_fd >= 0 ? target_file_openat(img->root_fd, path, want) : -ENOENT;
	if (pid >= REMOTE_IMAGE_PID_BASE)
		return -ESRCH;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	fd = target_file_openat(dir, path, want);
	close(dir);
	return fd;
}

int target_file_open_mapping(pid_t pid, const struct proc_map *m)
{
	const struct remote_image *img = remote_image_of(pid);
	struct target_file_want want = { .ino = m->inode, .dev_major = m->dev_major,
					 .dev_minor = m->dev_minor };
	char path[PATH_MAX];
	size_t len;
	int fd;

	if (img) {
		fd = img->open_mapped ? img->open_mapped(img->ctx, m->start) : -ENOENT;
		return fd < 0 ? fd : checked(fd, &want);
	}
	/* map_files: the mapped file itself, also deleted or replaced since
	 * (it needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE) */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = checked(open(path, TARGET_OPEN_FLAGS), &want);
	if (fd >= 0 || fd == -ESTALE)
		return fd; /* -ESTALE: remapped since maps was read */
	/* a deleted file's path names another file or none */
	len = strlen(m->path);
	if (m->path[0] != '/' || (len > 10 && strcmp(m->path + len - 10, " (deleted)") == 0))
		return -ENOENT;
	target_file_path_in_root(pid, m->path, path, sizeof(path));
	return target_file_open(pid, path, &want);
}

int target_file_elf_of_mapping(pid_t pid, const struct proc_map *m, struct elf_image *img)
{
	int fd = target_file_open_mapping(pid, m);

	if (fd < 0) {
		memset(img, 0, sizeof(*img));
		img->fd = -1;
		errno = -fd; /* for the caller's message */
		return -1;
	}
	return elf_image_open_fd(img, fd); /* takes fd */
}

int target_file_open_exe(pid_t pid)
{
	const struct remote_image *img = remote_image_of(pid);
	char path[64];
	int fd;

	if (img) {
		fd = img->open_exe ? img->open_exe(img->ctx) : -ENOENT;
		return fd < 0 ? fd : checked(fd, NULL);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	return checked(open(path, TARGET_OPEN_FLAGS), NULL);
}

void target_file_path_in_root(pid_t pid, const char *path, char *out, size_t len)
{
	char link[32], root[PATH_MAX];
	const char *from = path;
	ssize_t n = -1;
	size_t l;

	if (!len)
		return;
	if (!remote_image_of(pid)) {
		snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
		n = readlink(link, root, sizeof(root) - 1);
	}
	/* a container's root outside ours reads as "/": its paths are
	 * already the process's */
	if (n > 1 && n < (ssize_t)sizeof(root) - 1 && strncmp(path, root, (size_t)n) == 0 &&
	    path[n] == '/')
		from = path + n;
	l = strlen(from);
	if (l >= len)
		l = len - 1;
	memmove(out, from, l); /* out may be path itself */
	out[l] = '\0';
}
