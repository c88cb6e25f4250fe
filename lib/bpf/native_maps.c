/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/native_maps.h"

#include <bcc/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/module.h"
#include "cpython/process.h"
#include "sys/clock.h"
#include "sys/elf_image.h"
#include "sys/proc_maps.h"
#include "sys/target_file.h"
#include "sys/unwind_table.h"

int native_maps_init(struct native_maps *nm, struct bpfmod *m, const char *tool)
{
	memset(nm, 0, sizeof(*nm));
	nm->tool = tool;
	nm->rows_fd = bpfmod_table_fd(m, "unwind_rows");
	nm->trie_fd = bpfmod_table_fd(m, "native_maps");
	nm->stacks_fd = bpfmod_table_fd(m, "native_stacks");
	nm->ends_fd = bpfmod_table_fd(m, "native_ends");
	nm->rows_cap = bpfmod_table_max_entries(m, "unwind_rows");
	if (nm->rows_fd < 0 || nm->trie_fd < 0 || nm->stacks_fd < 0 || nm->rows_cap <= 1)
		return -1;
	return 0;
}

void native_maps_free(struct native_maps *nm)
{
	for (size_t i = 0; i < nm->nprocs; i++) {
		free(nm->procs[i].keys);
		free(nm->procs[i].starts);
	}
	free(nm->procs);
	free(nm->files);
	nm->procs = NULL;
	nm->files = NULL;
	nm->nprocs = nm->nfiles = 0;
}

size_t native_maps_table_bytes(const struct native_maps *nm)
{
	return (size_t)nm->rows_used * sizeof(struct pyb_unwind_row);
}

/* Puts rows in unwind_rows from index first: in batches where the kernel
 * has them, else one by one. */
static int upload_rows(struct native_maps *nm, const struct pyb_unwind_row *rows, uint32_t n,
		       uint32_t first)
{
	uint32_t *keys = malloc((n ? n : 1) * sizeof(*keys));
	uint32_t count = n;
	int rc = 0;

	if (!keys)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		keys[i] = first + i;
	if (n && bpf_update_batch(nm->rows_fd, keys, (void *)rows, &count) < 0) {
		for (uint32_t i = 0; i < n && rc == 0; i++)
			if (bpf_update_elem(nm->rows_fd, &keys[i], (void *)&rows[i], BPF_ANY) < 0)
				rc = -1;
	}
	free(keys);
	return rc;
}

/* The file behind a mapping (open at fd, which stays the caller's), its
 * rows loaded once per run; NULL if out of memory. A file that cannot be
 * read is remembered as such (ok false). */
static struct native_file *file_of(struct native_maps *nm, int fd, const char *shown,
				   const struct stat *st, bool fp)
{
	struct native_file *f, *v;
	struct elf_image img;
	int img_fd;
	struct unwind_table t = { 0 };
	char err[256] = "";
	const char *base = strrchr(shown, '/');
	uint64_t t0;

	for (size_t i = 0; i < nm->nfiles; i++)
		if (nm->files[i].dev == (uint64_t)st->st_dev && nm->files[i].ino == (uint64_t)st->st_ino)
			return &nm->files[i];
	v = realloc(nm->files, (nm->nfiles + 1) * sizeof(*v));
	if (!v)
		return NULL;
	nm->files = v;
	f = &v[nm->nfiles++];
	memset(f, 0, sizeof(*f));
	f->dev = (uint64_t)st->st_dev;
	f->ino = (uint64_t)st->st_ino;
	snprintf(f->name, sizeof(f->name), "%.63s", base ? base + 1 : shown);
	t0 = monotonic_ns();
	img_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (img_fd < 0 || elf_image_open_fd(&img, img_fd) < 0) {
		snprintf(err, sizeof(err), "not an ELF file we can read");
	} else {
		if (unwind_table_build(&img, &t, err, sizeof(err)) < 0)
			t.n = 0;
		if (t.fdes_cut || img.refused) {
			nm->files_cut++;
			if (nm->verbose)
				fprintf(stderr,
					"%s: %s read in part, within the tool's budget: %zu of %zu "
					"functions without unwind rows, %u reads refused\n",
					nm->tool, shown, t.fdes_cut, t.fdes, img.refused);
		}
		elf_image_close(&img);
	}
	nm->build_ns += monotonic_ns() - t0;
	if (t.n > nm->rows_cap - nm->rows_used) {
		snprintf(err, sizeof(err), "no room for its %zu unwind rows", t.n);
		nm->rows_full++;
		t.n = 0;
	}
	if (t.n) {
		t0 = monotonic_ns();
		if (upload_rows(nm, t.rows, (uint32_t)t.n, nm->rows_used) == 0) {
			f->first_row = nm->rows_used;
			f->nrows = (uint32_t)t.n;
			nm->rows_used += (uint32_t)t.n;
		}
		nm->load_ns += monotonic_ns() - t0;
	}
	unwind_table_free(&t);
	f->ok = f->nrows > 0 || fp;
	if (!f->ok) {
		nm->files_failed++;
		if (nm->verbose)
			fprintf(stderr, "%s: no native frames through %s: %s\n", nm->tool, shown,
				err[0] ? err : "no unwind information");
	}
	return f;
}

static struct native_proc_keys *keys_of(struct native_maps *nm, pid_t pid, bool create)
{
	struct native_proc_keys *v;

	for (size_t i = 0; i < nm->nprocs; i++)
		if (nm->procs[i].pid == pid)
			return &nm->procs[i];
	if (!create)
		return NULL;
	v = realloc(nm->procs, (nm->nprocs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	nm->procs = v;
	v = &v[nm->nprocs++];
	memset(v, 0, sizeof(*v));
	v->pid = pid;
	return v;
}

static bool grow(void **v, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 64;
	void *g;

	if (n < *cap)
		return true;
	while (c <= n)
		c *= 2;
	g = realloc(*v, c * elem);
	if (!g)
		return false;
	*v = g;
	*cap = c;
	return true;
}

/* Splits [start, end) into aligned power-of-two blocks, each a trie key
 * of pid with the value. */
static int insert_range(struct native_maps *nm, struct native_proc_keys *pk, uint64_t start,
			uint64_t end, const struct pyb_native_map *val)
{
	while (start < end) {
		unsigned bits = start ? (unsigned)__builtin_ctzll(start) : 63;
		struct pyb_native_map_key k = { .pid = (uint32_t)pk->pid };
		uint64_t be;

		while (bits > 0 && (bits >= 64 || start + (1ULL << bits) > end ||
				    start + (1ULL << bits) < start))
			bits--;
		k.prefixlen = 32 + 64 - bits;
		be = __builtin_bswap64(start);
		memcpy(k.addr, &be, sizeof(be));
		if (bpf_update_elem(nm->trie_fd, &k, (void *)val, BPF_ANY) < 0)
			return -1;
		if (!grow((void **)&pk->keys, &pk->cap, pk->n, sizeof(*pk->keys)))
			return -1;
		pk->keys[pk->n++] = k;
		start += 1ULL << bits;
	}
	return 0;
}

static bool known_start(const struct native_proc_keys *pk, uint64_t start)
{
	for (size_t i = 0; i < pk->nstarts; i++)
		if (pk->starts[i] == start)
			return true;
	return false;
}

int native_maps_add(struct native_maps *nm, const struct py_process *p)
{
	struct proc_maps maps;
	struct native_proc_keys *pk;
	int added = 0;
	/* the interpreter's file, as it was read */
	const struct proc_map *interp = &p->interp_file;

	if (proc_maps_read(p->pid, &maps) < 0)
		return -1;
	pk = keys_of(nm, p->pid, true);
	if (!pk) {
		proc_maps_free(&maps);
		return -1;
	}
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.v[i];
		struct stat st;
		int fd;
		struct native_file *f;
		struct elf_image img;
		uint64_t vaddr;
		struct pyb_native_map val = { 0 };
		bool fp;

		if (m->perms[2] != 'x' || m->path[0] != '/' || known_start(pk, m->start))
			continue;
		fd = target_file_open_mapping(p->pid, m);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0) {
			close(fd);
			continue;
		}
		fp = p->frame_pointers && interp->inode && m->inode == interp->inode &&
		     m->dev_major == interp->dev_major && m->dev_minor == interp->dev_minor;
		f = file_of(nm, fd, m->path, &st, fp);
		if (!f || !f->ok) {
			close(fd);
			continue;
		}
		/* where the file's linked addresses are in this process */
		if (elf_image_open_fd(&img, fd) < 0) /* takes fd */
			continue;
		if (elf_image_vaddr_of_offset(&img, m->offset, &vaddr) < 0) {
			elf_image_close(&img);
			continue;
		}
		elf_image_close(&img);
		val.bias = m->start - vaddr;
		val.first_row = f->first_row;
		val.nrows = f->nrows;
		val.flags = fp ? PYB_NMAP_FP : 0;
		val.file = (uint32_t)(f - nm->files);
		if (insert_range(nm, pk, m->start, m->end, &val) < 0)
			break;
		if (grow((void **)&pk->starts, &pk->cap_starts, pk->nstarts, sizeof(*pk->starts)))
			pk->starts[pk->nstarts++] = m->start;
		added++;
	}
	proc_maps_free(&maps);
	return added;
}

void native_maps_forget(struct native_maps *nm, pid_t pid)
{
	struct native_proc_keys *pk = keys_of(nm, pid, false);

	if (!pk)
		return;
	for (size_t i = 0; i < pk->n; i++)
		bpf_delete_elem(nm->trie_fd, &pk->keys[i]);
	pk->n = 0;
	pk->nstarts = 0;
}

_Static_assert(PYB_MAX_NATIVE == 127, "native_end_text says 127");

const char *native_end_text(int why)
{
	switch (why) {
	case PYB_NATIVE_COMPLETE: return "reached the outermost frame";
	case PYB_NATIVE_NO_MAPPING: return "met code in no mapped file (JIT or anonymous memory)";
	case PYB_NATIVE_NO_INFO: return "met code without unwind information";
	case PYB_NATIVE_UNREADABLE: return "could not read stack memory";
	case PYB_NATIVE_TOO_DEEP: return "went deeper than the deepest stack kept (127 frames)";
	case PYB_NATIVE_BAD_FRAME: return "found a caller's frame below its callee's";
	case PYB_NATIVE_NO_REGS: return "had no user registers";
	case PYB_NATIVE_PYTHON_ROOT: return "stopped at the outermost eval loop";
	default: return "ended for an unknown reason";
	}
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct native_ends *)a)->pid, y = ((const struct native_ends *)b)->pid;

	return x < y ? -1 : x > y;
}

size_t native_maps_read_ends(const struct native_maps *nm, struct native_ends **out)
{
	uint64_t key = 0, next, count;
	struct native_ends *v = NULL;
	size_t n = 0;
	bool first = true;

	*out = NULL;
	if (nm->ends_fd < 0)
		return 0;
	while (bpf_get_next_key(nm->ends_fd, first ? NULL : &key, &next) == 0) {
		pid_t pid = (pid_t)(next >> 32);
		uint32_t why = (uint32_t)next;
		size_t i;

		first = false;
		key = next;
		if (why >= PYB_NATIVE_END_KINDS || bpf_lookup_elem(nm->ends_fd, &key, &count) < 0)
			continue;
		for (i = 0; i < n && v[i].pid != pid; i++)
			;
		if (i == n) {
			struct native_ends *g = realloc(v, (n + 1) * sizeof(*g));

			if (!g)
				break;
			v = g;
			memset(&v[n], 0, sizeof(v[n]));
			v[n++].pid = pid;
		}
		v[i].n[why] += count;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_pid);
	*out = v;
	return n;
}
