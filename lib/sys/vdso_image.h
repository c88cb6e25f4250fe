/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vDSO a process maps ([vdso]): the kernel's small ELF image of
 * clock_gettime, gettimeofday, getcpu and the like, with its own
 * .eh_frame and .dynsym. It is not a file, so it is read from the
 * process's memory (at most VDSO_IMAGE_MAX bytes) into an anonymous file
 * the ELF readers read like any other; it is known by its bytes (the same
 * image in every process of a kernel is one "file").
 */
#ifndef PYBPF_SYS_VDSO_IMAGE_H
#define PYBPF_SYS_VDSO_IMAGE_H

#include <stdint.h>
#include <sys/types.h>

/* The vDSO is two pages on x86-64 kernels (its data pages are [vvar]);
 * a [vdso] mapping larger than this is not read. */
#define VDSO_IMAGE_MAX (256u << 10)

/* The name mappings of the vDSO carry, as /proc/PID/maps prints it. */
#define VDSO_MAPPING_NAME "[vdso]"

/* What tells one vDSO image from another: its bytes' hash and count. */
struct vdso_ident {
	uint64_t hash, size;
};

/*
 * Reads [start, end) of pid, which maps its vDSO. Returns an anonymous
 * file holding those bytes (O_CLOEXEC, the caller's to close) and their
 * identity in *id, or a negative errno: -EFBIG past VDSO_IMAGE_MAX,
 * -ENOEXEC for bytes that are not an ELF image.
 */
int vdso_image_open(pid_t pid, uint64_t start, uint64_t end, struct vdso_ident *id);

/* Only the identity (the bytes read, then dropped); 0 or a negative errno. */
int vdso_image_ident(pid_t pid, uint64_t start, uint64_t end, struct vdso_ident *id);

#endif
