// SPDX-License-Identifier: Apache-2.0
#include "bpf/libc_uprobes.h"

#include <bcc/libbpf.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/elf_image.h"
#include "sys/proc_maps.h"
#include "sys/target_file.h"
#include "sys/grow.h"

#define LIBC_UPROBES_MAX 32 /* probes of one call */

/* glibc's file names: libc.so.6 (2.34+), libc-2.NN.so before. */
static bool is_libc(const char *base)
{
	size_t len = strlen(base);

	return strcmp(base, "libc.so.6") == 0 ||
	       (strncmp(base, "libc-", 5) == 0 && len > 8 && strcmp(base + len - 3, ".so") == 0);
}

/*
 * Where in a function to put its probe: past leading instructions that
 * only set flags (endbr64; test or cmp of an argument register; cmpb of a
 * global), which the kernel would single-step (a second trap: ~14 us on a
 * VM against ~0.5 us for an instruction it emulates, such as the push or
 * the conditional jump that follows). They change no register but the
 * flags and not the stack, so the probe there sees the arguments and the
 * return address as at the entry, and every call passes it. Exact byte
 * patterns only; anything else stays probed at the entry.
 */
static uint64_t skip_flag_only_prefix(struct elf_image *img, uint64_t vaddr)
{
	static const struct {
		uint8_t len, n;
		uint8_t bytes[4];
	} prefixes[] = {
		{ 4, 4, { 0xf3, 0x0f, 0x1e, 0xfa } }, /* endbr64 */
		{ 3, 3, { 0x48, 0x85, 0xff } },	      /* test %rdi,%rdi */
		{ 3, 3, { 0x48, 0x85, 0xf6 } },	      /* test %rsi,%rsi */
		{ 2, 2, { 0x85, 0xff } },	      /* test %edi,%edi */
		{ 7, 2, { 0x80, 0x3d } },	      /* cmpb $imm8,disp32(%rip) */
	};
	uint64_t at = vaddr;

	for (int round = 0; round < 3; round++) {
		uint8_t code[8];
		bool skipped = false;

		if (elf_image_read_vaddr(img, at, code, sizeof(code)) < 0)
			break;
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !skipped; i++) {
			if (memcmp(code, prefixes[i].bytes, prefixes[i].n) == 0) {
				at += prefixes[i].len;
				skipped = true;
			}
		}
		if (!skipped)
			break;
	}
	return at;
}

/* The file offset of linked address vaddr, by the PT_LOAD that holds it. */
static int file_offset_of(const struct elf_image *img, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < img->nphdrs; i++) {
		const Elf64_Phdr *ph = &img->phdrs[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr < ph->p_filesz) {
			*off = ph->p_offset + (vaddr - ph->p_vaddr);
			return 0;
		}
	}
	return -1;
}

static int keep_fd(struct libc_uprobes *u, int fd)
{
	int *v = grow_room(u->fds, u->n, &u->cap, 32, sizeof(*v));

	if (!v)
		return -1;
	u->fds = v;
	u->fds[u->n++] = fd;
	return 0;
}

/* The offsets of the probes' functions in img; 0 for an optional one
 * missing (counted). Returns 0, or -1 with err set. */
static int resolve(struct libc_uprobes *u, struct elf_image *img, const struct libc_uprobe *p,
		   size_t n, uint64_t *offs, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t value, size;

		offs[i] = 0;
		if (elf_image_symbol(img, p[i].symbol, &value, &size) == 0 && value &&
		    file_offset_of(img, skip_flag_only_prefix(img, value), &offs[i]) == 0)
			continue;
		offs[i] = 0;
		if (p[i].needed) {
			snprintf(err, errlen, "its C library has no function %s", p[i].symbol);
			return -1;
		}
		u->functions_missing++;
	}
	return 0;
}

/* Whether an earlier probe of the same kind is at the same place. */
static bool probed_before(const struct libc_uprobe *p, const uint64_t *offs, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (offs[j] == offs[i] && p[j].ret == p[i].ret)
			return true;
	return false;
}

static int attach_all(struct libc_uprobes *u, pid_t pid, int file_fd,
		      const struct libc_uprobe *p, size_t n, const uint64_t *offs, char *err,
		      size_t errlen)
{
	char path[64], ev[64];
	int attached = 0;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", file_fd);
	for (size_t i = 0; i < n; i++) {
		int fd;

		if (!offs[i] || probed_before(p, offs, i))
			continue;
		snprintf(ev, sizeof(ev), "pybpf_%d_%llx_%d", (int)pid, (unsigned long long)offs[i],
			 (int)p[i].ret);
		fd = bpf_attach_uprobe(p[i].prog_fd, p[i].ret ? BPF_PROBE_RETURN : BPF_PROBE_ENTRY,
				       ev, path, offs[i], pid, 0);
		if (fd < 0 || keep_fd(u, fd) < 0) {
			if (fd >= 0)
				close(fd);
			snprintf(err, errlen, "the kernel refused a uprobe on %s%s", p[i].symbol,
				 p[i].ret ? " (return)" : "");
			return -1;
		}
		attached++;
	}
	return attached;
}

/* Process pid's libc mapping (its first, executable or not). */
static const struct proc_map *find_libc(const struct proc_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		if (maps->v[i].inode && is_libc(proc_map_basename(&maps->v[i])))
			return &maps->v[i];
	return NULL;
}

int libc_uprobes_attach(struct libc_uprobes *u, pid_t pid, const struct libc_uprobe *probes,
			size_t n, char *err, size_t errlen)
{
	struct proc_maps maps = { 0 };
	struct elf_image img;
	uint64_t offs[LIBC_UPROBES_MAX];
	const struct proc_map *m;
	int rc = -1, fd, probe_fd;

	if (n > LIBC_UPROBES_MAX) {
		snprintf(err, errlen, "too many probes");
		return -1;
	}
	if (proc_maps_read(pid, &maps) < 0) {
		snprintf(err, errlen, "its mappings cannot be read (it exited?)");
		return -1;
	}
	m = find_libc(&maps);
	if (!m) {
		snprintf(err, errlen, "no glibc C library (libc.so.6) is mapped in it");
		goto out;
	}
	fd = target_file_open_mapping(pid, m);
	if (fd < 0) {
		snprintf(err, errlen, "its C library cannot be opened: %s", strerror(-fd));
		goto out;
	}
	/* the probes get their own descriptor: the image's is closed with it */
	probe_fd = dup(fd);

	if (elf_image_open_fd(&img, fd) < 0) {
		snprintf(err, errlen, "its C library is not an ELF file that can be read");
		if (probe_fd >= 0)
			close(probe_fd);
		goto out;
	}
	if (probe_fd < 0)
		snprintf(err, errlen, "out of file descriptors");
	else if (resolve(u, &img, probes, n, offs, err, errlen) == 0)
		rc = attach_all(u, pid, probe_fd, probes, n, offs, err, errlen);
	if (probe_fd >= 0)
		close(probe_fd); /* the uprobes hold the file's inode */
	elf_image_close(&img);
out:
	proc_maps_free(&maps);
	return rc;
}

void libc_uprobes_close(struct libc_uprobes *u)
{
	for (size_t i = 0; i < u->n; i++)
		close(u->fds[i]);
	free(u->fds);
	memset(u, 0, sizeof(*u));
}
