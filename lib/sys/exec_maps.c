/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/exec_maps.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/proc_maps.h"

void file_id_of(const struct stat *st, struct file_id *out)
{
	out->dev = (uint64_t)st->st_dev;
	out->ino = (uint64_t)st->st_ino;
	out->size = (int64_t)st->st_size;
	out->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	out->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

void file_id_of_vdso(const struct vdso_ident *v, struct file_id *out)
{
	memset(out, 0, sizeof(*out));
	out->ino = v->hash;
	out->size = (int64_t)v->size;
}

bool file_id_equal(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

void exec_maps_free(struct exec_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

int exec_maps_read(pid_t pid, struct exec_maps *out)
{
	char link[64], root[PATH_MAX];
	struct proc_maps maps;
	ssize_t rootlen;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = proc_maps_read(pid, &maps);
	if (rc < 0)
		return rc;
	/* The kernel prints a mapping's path as seen from our root: for a
	 * process in a chroot, with the chroot's directory in front. What
	 * the process names it is what follows that (a container's root
	 * outside ours reads as "/", its paths are already the process's). */
	snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
	rootlen = readlink(link, root, sizeof(root) - 1);
	if (rootlen <= 1 || (size_t)rootlen >= sizeof(root) - 1)
		rootlen = 0;
	root[rootlen] = '\0';
	out->v = calloc(maps.n ? maps.n : 1, sizeof(*out->v));
	for (size_t i = 0; out->v && i < maps.n; i++) {
		const struct proc_map *pm = &maps.v[i];
		struct exec_map *m = &out->v[out->n];
		const char *name = pm->path;
		char mf[96];
		struct stat st;

		if (pm->perms[2] != 'x')
			continue;
		if (strcmp(name, VDSO_MAPPING_NAME) == 0) {
			struct vdso_ident v;

			/* known by its bytes; one that cannot be read is left out */
			if (out->n == EXEC_MAPS_MAX || vdso_image_ident(pid, pm->start, pm->end, &v) < 0 ||
			    !(m->path = strdup(name)))
				continue;
			file_id_of_vdso(&v, &m->id);
			m->start = pm->start;
			m->end = pm->end;
			m->vdso = m->id_known = true;
			out->n++;
			continue;
		}
		if (name[0] != '/')
			continue;
		if (out->n == EXEC_MAPS_MAX) {
			out->capped = true;
			break;
		}
		if (rootlen && strncmp(name, root, (size_t)rootlen) == 0 && name[rootlen] == '/')
			name += rootlen;
		m->path = strdup(name);
		if (!m->path)
			continue;
		m->start = pm->start;
		m->end = pm->end;
		m->offset = pm->offset;
		m->inode = pm->inode;
		m->dev_major = pm->dev_major;
		m->dev_minor = pm->dev_minor;
		/* the file mapped there, even deleted or replaced since */
		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)pm->start, (unsigned long long)pm->end);
		if (stat(mf, &st) == 0) {
			file_id_of(&st, &m->id);
			m->id_known = true;
		}
		out->n++;
	}
	proc_maps_free(&maps);
	return out->v ? 0 : -ENOMEM;
}

const struct exec_map *exec_maps_find(const struct exec_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) { /* /proc/PID/maps lists mappings by address */
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}
