/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one way to open a file that a target process names or maps (its
 * binaries, their debug files, a core's mapped files). A target may be
 * hostile: its paths are resolved inside its own root (openat2 with
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, so an absolute symlink in a
 * container names the container's file, never the host's), opened without
 * blocking (O_NONBLOCK | O_NOCTTY: a FIFO or a tty does not stall us), and
 * only a regular file of bounded size, and the very file expected where
 * the caller knows it (device and inode), is handed back.
 *
 * /proc/PID/map_files/ and /proc/PID/exe are the kernel's own handles on
 * what is mapped: they are opened as such, then checked the same way.
 */
#ifndef PYBPF_SYS_TARGET_FILE_H
#define PYBPF_SYS_TARGET_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map;

/* No binary or debug file we read is bigger (a sparse file may claim any
 * size). */
#define TARGET_FILE_MAX_SIZE (4ull << 30)

/* What the opened file must be; zero fields are not checked. */
struct target_file_want {
	uint64_t ino; /* 0: any (then the device is not checked either) */
	unsigned int dev_major, dev_minor;
	uint64_t max_size; /* 0: TARGET_FILE_MAX_SIZE */
};

/* The checks of an open file: a regular file, within the size cap, the
 * device and inode wanted (want may be NULL). Returns 0, or -EINVAL (not
 * a regular file), -EFBIG (too big), -ESTALE (another file). */
int target_file_check(int fd, const struct target_file_want *want);

/* Opens path inside the directory root_fd, as a process whose root that
 * is sees it, and checks it. Returns a descriptor (O_CLOEXEC) or a
 * negative errno; -ENOSYS where the kernel has no openat2 (before 5.6):
 * then nothing is opened, never a plain open that follows symlinks. */
int target_file_openat(int root_fd, const char *path, const struct target_file_want *want);

/* The same inside process pid's root (/proc/PID/root), or inside the root
 * a process image (a core file, sys/remote_mem.h) was given. */
int target_file_open(pid_t pid, const char *path, const struct target_file_want *want);

/* The file behind mapping m of process pid: the mapped file itself
 * (/proc/PID/map_files/, or the image's), else m's path inside the
 * process's root; either way its device and inode must be m's. Returns a
 * descriptor or a negative errno. */
int target_file_open_mapping(pid_t pid, const struct proc_map *m);

/* The same, read as an ELF image (sys/elf_image.h). Returns 0, or -1
 * with errno set. */
struct elf_image;
int target_file_elf_of_mapping(pid_t pid, const struct proc_map *m, struct elf_image *img);

/* The executable of process pid (/proc/PID/exe, or the image's), checked
 * as a regular file of bounded size. */
int target_file_open_exe(pid_t pid);

/* True once openat2 answered ENOSYS: files named by a target are then
 * opened only through the kernel's handles (-v says so once). */
bool target_file_no_openat2(void);
#define TARGET_FILE_NO_OPENAT2                                                          \
	"this kernel has no openat2 (Linux before 5.6): no file a process names was "   \
	"opened (debug files, paths in its root), only the files it maps, through "     \
	"/proc/PID/map_files (a core's files: none)"

/* A mapping's path as the process names it: /proc/PID/maps prints paths
 * from our root, so a chroot's directory comes in front; it goes (out
 * may be path). */
void target_file_path_in_root(pid_t pid, const char *path, char *out, size_t len);

#endif
