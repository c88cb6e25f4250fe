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
#include "sys/text_escape.h"
#include "sys/plural.h"

int native_maps_init(struct native_maps *nm, struct bpfmod *m, const char *tool)
{
	memset(nm, 0, sizeof(*nm));
	nm->tool = tool;
	nm->rows_fd = bpfmod_table_fd(m, "unwind_rows");
	nm->trie_fd = bpfmod_table_fd(m, "native_maps");
	nm->stacks_fd = bpfmod_table_fd(m, "native_stacks");
	nm->ends_fd = bpfmod_table_fd(m, "native_ends");
	nm->gen_fd = bpfmod_table_fd(m, "maps_gen");
	nm->sync_fd = bpfmod_table_fd(m, "maps_sync");
	nm->next_base = 1u << 20;
	nm->rows_cap = bpfmod_table_max_entries(m, "unwind_rows");
	if (nm->rows_fd < 0 || nm->trie_fd < 0 || nm->stacks_fd < 0 || nm->gen_fd < 0 ||
	    nm->sync_fd < 0 || nm->rows_cap <= 1)
		return -1;
	return 0;
}

void native_maps_free(struct native_maps *nm)
{
	for (size_t i = 0; i < nm->nprocs; i++)
		free(nm->procs[i].maps);
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
 * rows loaded once per run and file identity (a file rewritten in place
 * gets rows of its own); NULL if out of memory. A file that cannot be
 * read is remembered as such (ok false). */
static struct native_file *file_of(struct native_maps *nm, int fd, const char *shown,
				   const struct file_id *id, bool fp)
{
	struct native_file *f, *v;
	struct elf_image img;
	int img_fd;
	struct unwind_table t = { 0 };
	char err[256] = "";
	const char *base = strrchr(shown, '/');
	uint64_t t0;

	for (size_t i = 0; i < nm->nfiles; i++)
		if (file_id_equal(&nm->files[i].id, id))
			return &nm->files[i];
	v = realloc(nm->files, (nm->nfiles + 1) * sizeof(*v));
	if (!v)
		return NULL;
	nm->files = v;
	f = &v[nm->nfiles++];
	memset(f, 0, sizeof(*f));
	f->id = *id;
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
					"%s without unwind rows, %u %s refused\n",
					nm->tool, TEXT_ESC(shown), t.fdes_cut, t.fdes,
					plural(t.fdes, "function", "functions"), img.refused,
					plural(img.refused, "read", "reads"));
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
			fprintf(stderr, "%s: no native frames through %s: %s\n", nm->tool,
				TEXT_ESC(shown), TEXT_ESC(err[0] ? err : "no unwind information"));
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

/* The trie keys of [start, end) of pid: aligned power-of-two blocks, in
 * order; fn is called with each. */
static int for_each_key(struct native_maps *nm, pid_t pid, uint64_t start, uint64_t end,
			int (*fn)(struct native_maps *nm, const struct pyb_native_map_key *k,
				  const struct pyb_native_map *val),
			const struct pyb_native_map *val)
{
	/* at most 2 * 64 blocks: the loop is bounded by the address bits */
	while (start < end) {
		unsigned bits = start ? (unsigned)__builtin_ctzll(start) : 63;
		struct pyb_native_map_key k = { .pid = (uint32_t)pid };
		uint64_t be;

		while (bits > 0 && (bits >= 64 || start + (1ULL << bits) > end ||
				    start + (1ULL << bits) < start))
			bits--;
		k.prefixlen = 32 + 64 - bits;
		be = __builtin_bswap64(start);
		memcpy(k.addr, &be, sizeof(be));
		if (fn(nm, &k, val) < 0)
			return -1;
		start += 1ULL << bits;
	}
	return 0;
}

static int put_key(struct native_maps *nm, const struct pyb_native_map_key *k,
		   const struct pyb_native_map *val)
{
	return bpf_update_elem(nm->trie_fd, (void *)k, (void *)val, BPF_ANY);
}

static int drop_key(struct native_maps *nm, const struct pyb_native_map_key *k,
		    const struct pyb_native_map *val)
{
	(void)val;
	bpf_delete_elem(nm->trie_fd, (void *)k);
	return 0;
}

/* The mapping of em that is k unchanged, or NULL. */
static const struct exec_map *still_mapped(const struct exec_maps *em,
					   const struct native_known_map *k)
{
	const struct exec_map *m = exec_maps_find(em, k->start);

	return m && m->id_known && m->start == k->start && m->end == k->end &&
			       m->offset == k->offset && file_id_equal(&m->id, &k->id)
		       ? m
		       : NULL;
}

/* The trie's value for mapping m of pid, from its file (opened through
 * sys/target_file.h, and still the file m was read as); -1 if BPF cannot
 * unwind it. */
static int value_of(struct native_maps *nm, pid_t pid, const struct exec_map *m, bool fp,
		    struct pyb_native_map *val)
{
	struct proc_map pm = { .start = m->start, .end = m->end, .offset = m->offset,
			       .inode = m->inode, .dev_major = m->dev_major,
			       .dev_minor = m->dev_minor, .path = m->path };
	struct native_file *f;
	struct elf_image img;
	struct file_id id;
	struct stat st;
	uint64_t vaddr;
	int fd, rc;

	if (m->vdso) {
		struct vdso_ident v;

		fd = vdso_image_open(pid, m->start, m->end, &v);
		file_id_of_vdso(&v, &id);
	} else {
		fd = target_file_open_mapping(pid, &pm);
		if (fd >= 0 && fstat(fd, &st) == 0)
			file_id_of(&st, &id);
		else
			memset(&id, 0, sizeof(id));
	}
	if (fd < 0)
		return -1;
	if (!file_id_equal(&id, &m->id)) {
		close(fd); /* remapped since it was read */
		return -1;
	}
	/* a file without unwind information is in the trie all the same: a
	 * walk that meets its code ends there as code without unwind
	 * information (its leaf kept), not as code in no file */
	f = file_of(nm, fd, m->path, &m->id, fp);
	if (!f) {
		close(fd);
		return -1;
	}
	/* where the file's linked addresses are in this process */
	if (elf_image_open_fd(&img, fd) < 0) /* takes fd */
		return -1;
	rc = elf_image_vaddr_of_offset(&img, m->offset, &vaddr);
	elf_image_close(&img);
	if (rc < 0)
		return -1;
	memset(val, 0, sizeof(*val));
	val->bias = m->start - vaddr;
	val->first_row = f->first_row;
	val->nrows = f->nrows;
	val->flags = fp ? PYB_NMAP_FP : f->nrows ? 0 : PYB_NMAP_NO_TABLE;
	val->file = (uint32_t)(f - nm->files);
	val->start = m->start;
	val->end = m->end;
	return 0;
}

int native_maps_sync(struct native_maps *nm, const struct py_process *p,
		     const struct exec_maps *em)
{
	struct native_proc_keys *pk;
	int changed = 0;
	/* the interpreter's file, as it was read */
	const struct proc_map *interp = &p->interp_file;
	size_t kept = 0;
	bool *in_trie;

	pk = keys_of(nm, p->pid, true);
	in_trie = calloc(em->n ? em->n : 1, sizeof(*in_trie));
	if (!pk || !in_trie) {
		free(in_trie);
		return -1;
	}
	/* gone or changed first: a new mapping may take their place */
	for (size_t i = 0; i < pk->n; i++) {
		const struct exec_map *m = still_mapped(em, &pk->maps[i]);

		if (m) {
			in_trie[m - em->v] = true;
			pk->maps[kept++] = pk->maps[i];
			continue;
		}
		for_each_key(nm, p->pid, pk->maps[i].start, pk->maps[i].end, drop_key, NULL);
		changed++;
	}
	pk->n = kept;
	for (size_t i = 0; i < em->n; i++) {
		const struct exec_map *m = &em->v[i];
		struct pyb_native_map val;
		bool fp;

		if (!m->id_known || in_trie[i])
			continue;
		fp = p->frame_pointers && interp->inode && m->inode == interp->inode &&
		     m->dev_major == interp->dev_major && m->dev_minor == interp->dev_minor;
		if (value_of(nm, p->pid, m, fp, &val) < 0)
			continue;
		if (!grow((void **)&pk->maps, &pk->cap, pk->n, sizeof(*pk->maps)))
			break;
		pk->maps[pk->n++] = (struct native_known_map){ m->start, m->end, m->offset, m->id };
		if (for_each_key(nm, p->pid, m->start, m->end, put_key, &val) < 0) {
			/* the trie is full: what went in comes out again */
			for_each_key(nm, p->pid, m->start, m->end, drop_key, NULL);
			pk->n--;
			break;
		}
		changed++;
	}
	free(in_trie);
	return pk->n ? changed : -1;
}

void native_maps_watch(struct native_maps *nm, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	struct pyb_maps_gen g = { .gen = nm->next_base };

	/* 2^20 generations a registration: far more changes than a process
	 * makes before its pid could be registered again */
	nm->next_base += 1u << 20;
	bpf_delete_elem(nm->gen_fd, &key);
	bpf_delete_elem(nm->sync_fd, &key);
	bpf_update_elem(nm->gen_fd, &key, &g, BPF_ANY);
}

int native_maps_gen(const struct native_maps *nm, pid_t pid, uint32_t *gen)
{
	uint32_t key = (uint32_t)pid;
	struct pyb_maps_gen g;

	if (bpf_lookup_elem(nm->gen_fd, &key, &g) < 0 || g.busy)
		return -1;
	*gen = g.gen;
	return 0;
}

void native_maps_set_synced(struct native_maps *nm, pid_t pid, uint32_t gen)
{
	struct native_proc_keys *pk = keys_of(nm, pid, false);
	struct pyb_maps_sync *s = calloc(1, sizeof(*s));
	uint32_t key = (uint32_t)pid;

	if (!pk || !s) {
		free(s);
		return;
	}
	s->gen = gen;
	s->lo = UINT64_MAX;
	for (size_t i = 0; i < pk->n; i++) {
		if (pk->maps[i].start < s->lo)
			s->lo = pk->maps[i].start;
		if (pk->maps[i].end > s->hi)
			s->hi = pk->maps[i].end;
		if (i < PYB_SYNC_RANGES) {
			s->r[i].start = pk->maps[i].start;
			s->r[i].end = pk->maps[i].end;
		}
	}
	/* more than BPF checks one by one: their span */
	s->n = pk->n <= PYB_SYNC_RANGES ? (uint32_t)pk->n : 0;
	if (!pk->n)
		s->lo = 0;
	if (bpf_update_elem(nm->sync_fd, &key, s, BPF_ANY) == 0) {
		pk->synced = true;
		pk->synced_gen = gen;
	}
	free(s);
}

bool native_maps_gen_moved(const struct native_maps *nm, pid_t pid)
{
	uint32_t gen;

	for (size_t i = 0; i < nm->nprocs; i++)
		if (nm->procs[i].pid == pid)
			return !nm->procs[i].synced || native_maps_gen(nm, pid, &gen) < 0 ||
			       gen != nm->procs[i].synced_gen;
	return false;
}

void native_maps_forget(struct native_maps *nm, pid_t pid)
{
	struct native_proc_keys *pk = keys_of(nm, pid, false);
	uint32_t key = (uint32_t)pid;

	/* first: BPF walks no further than the leaf from here on */
	bpf_delete_elem(nm->sync_fd, &key);
	bpf_delete_elem(nm->gen_fd, &key);
	if (!pk)
		return;
	for (size_t i = 0; i < pk->n; i++)
		for_each_key(nm, pid, pk->maps[i].start, pk->maps[i].end, drop_key, NULL);
	pk->n = 0;
	pk->synced = false;
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
	case PYB_NATIVE_MAPS_CHANGED: return "met mappings changed since they were read (leaf only)";
	default: return "ended for an unknown reason";
	}
}

bool native_end_early(int why)
{
	return why != PYB_NATIVE_COMPLETE && why != PYB_NATIVE_PYTHON_ROOT &&
	       why != PYB_NATIVE_MAPS_CHANGED;
}

const char *native_end_marker(int why)
{
	switch (why) {
	case PYB_NATIVE_NO_MAPPING: return "[native walk ended: in no file's code]";
	case PYB_NATIVE_NO_INFO: return "[native walk ended: no unwind info]";
	case PYB_NATIVE_UNREADABLE: return "[native walk ended: unreadable stack]";
	case PYB_NATIVE_TOO_DEEP: return "[native walk ended: too deep]";
	case PYB_NATIVE_BAD_FRAME: return "[native walk ended: bad frame]";
	default: return "[native walk ended: before the eval loop]";
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
