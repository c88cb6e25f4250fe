/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/mapped_files.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/elf_image.h"
#include "sys/target_file.h"

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
			/* as the process names it (a profile's mappings are
			 * read where the process ran) */
			char *path = all.v[i].path;

			target_file_path_in_root(pid, path, path, strlen(path) + 1);
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
	struct elf_image img;
	int fd;

	if (strcmp(m->build_ids[i], "?") != 0)
		return m->build_ids[i][0] ? m->build_ids[i] : NULL;
	m->build_ids[i][0] = '\0';
	fd = target_file_open_mapping(m->pid, pm);
	if (fd >= 0 && elf_image_open_fd(&img, fd) == 0) {
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
