/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/mapped_files.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/elf_image.h"

/*
 * /proc/PID/maps names files as the reader sees them: for a process in a
 * chroot that is the host path (/srv/root/usr/bin/python3). Say it as the
 * process does (a profile's mappings are read where the process ran).
 */
static void strip_root(pid_t pid, char *path)
{
	char link[32], root[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
	n = readlink(link, root, sizeof(root) - 1);
	if (n > 1 && strncmp(path, root, (size_t)n) == 0 && path[n] == '/')
		memmove(path, path + n, strlen(path + n) + 1);
}

int mapped_files_load(struct mapped_files *m, pid_t pid)
{
	struct proc_maps all;
	size_t kept = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	m->pid = pid;
	rc = proc_maps_read(pid, &all);
	if (rc < 0)
		return rc;
	/* executable mappings of files: where native frames can be */
	for (size_t i = 0; i < all.n; i++) {
		if (all.v[i].perms[2] == 'x' && all.v[i].path[0] == '/' && all.v[i].inode) {
			strip_root(pid, all.v[i].path);
			all.v[kept++] = all.v[i];
		} else {
			free(all.v[i].path);
		}
	}
	all.n = kept;
	m->build_ids = calloc(kept ? kept : 1, sizeof(*m->build_ids));
	if (!m->build_ids) {
		proc_maps_free(&all);
		return -ENOMEM;
	}
	for (size_t i = 0; i < kept; i++)
		strcpy(m->build_ids[i], "?");
	m->maps = all;
	m->loaded = true;
	return 0;
}

void mapped_files_free(struct mapped_files *m)
{
	proc_maps_free(&m->maps);
	free(m->build_ids);
	memset(m, 0, sizeof(*m));
}

/* The build-id of mapping i, read through map_files (the file the process
 * mapped, also when its path is in another mount namespace or deleted). */
static const char *build_id_of(struct mapped_files *m, size_t i)
{
	const struct proc_map *pm = &m->maps.v[i];
	char path[96];
	struct elf_image img;

	if (strcmp(m->build_ids[i], "?") != 0)
		return m->build_ids[i][0] ? m->build_ids[i] : NULL;
	m->build_ids[i][0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)m->pid,
		 (unsigned long long)pm->start, (unsigned long long)pm->end);
	if (elf_image_open(&img, path) == 0) {
		if (elf_image_build_id(&img, m->build_ids[i], sizeof(m->build_ids[i])) < 0)
			m->build_ids[i][0] = '\0';
		elf_image_close(&img);
	}
	/* the same file mapped again: same id */
	for (size_t k = i + 1; k < m->maps.n; k++)
		if (m->maps.v[k].inode == pm->inode && m->maps.v[k].dev_major == pm->dev_major &&
		    m->maps.v[k].dev_minor == pm->dev_minor)
			memcpy(m->build_ids[k], m->build_ids[i], sizeof(m->build_ids[k]));
	return m->build_ids[i][0] ? m->build_ids[i] : NULL;
}

int mapped_files_find(struct mapped_files *m, uint64_t addr, struct mapped_file_addr *out)
{
	for (size_t i = 0; i < m->maps.n; i++) {
		const struct proc_map *pm = &m->maps.v[i];

		if (addr < pm->start || addr >= pm->end)
			continue;
		out->path = pm->path;
		out->build_id = build_id_of(m, i);
		out->file_offset = addr - pm->start + pm->offset;
		out->start = pm->start;
		out->end = pm->end;
		out->offset = pm->offset;
		return 0;
	}
	return -1;
}
