/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/native_symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/eh_frame.h"
#include "sys/elf_image.h"
#include "sys/elf_plt.h"
#include "sys/elf_symbols.h"
#include "sys/exec_maps.h"
#include "sys/proc_maps.h"
#include "sys/target_file.h"

#define FILE_BUCKETS 256
#define EH_FRAME_MAX (64u << 20)
#define PROC_BUCKETS 256
/* Per process: sets of mappings kept (stacks of older ones are marked),
 * generations each set was read at, and mappings in all: a process that
 * keeps changing its mappings costs a bounded amount of memory. */
#define NS_ERAS 16
#define NS_ERA_GENS 1024
#define NS_MAPS_KEPT 16384
#define BUILD_ID_HEX 129 /* a build-id of up to 64 bytes, as hex, + NUL */
/* How far a zero-size symbol that is last in its table reaches (as
 * elf_symtab_find has it); others reach the next symbol. */
#define ZERO_SIZE_REACH 4096
/* How many symbols below an address are looked at for one whose size
 * covers it: aliases at one address (glibc has up to ~6 per function, in
 * both tables) and zero-size labels inside a function sort in between. */
#define COVER_WINDOW 32

struct ns_sym {
	uint64_t start, size;
	const char *name;
	unsigned int rank; /* 0: a .symtab (the file's or its debug file's), 1: .dynsym */
};

/* One file, by what was opened (not by name): shared by every process
 * that maps it, in any root. */
struct ns_file {
	struct ns_file *next;
	struct file_id id; /* rewritten in place is another file */
	bool failed;
	char build_id[BUILD_ID_HEX]; /* hex, "" none */
	struct elf_symtab own;   /* the file's .symtab, else its .dynsym */
	struct elf_symtab debug; /* the separate debug file's .symtab */
	struct ns_sym *syms;     /* both, by address */
	struct elf_plt plt;      /* code sections, PLT stubs by their targets */
	size_t n;
	/* the functions .eh_frame describes, named or not (by start) */
	struct eh_fde *fdes;
	size_t nfdes;
};

struct ns_map {
	uint64_t start, end, offset, inode, bias;
	unsigned int dev_major, dev_minor;
	struct file_id id; /* the file mapped (id_known), checked when opened */
	bool id_known;
	bool vdso;  /* read from the process's memory (sys/vdso_image.h) */
	char *path; /* as the process names it */
	struct ns_file *file; /* NULL before resolved, or when unreadable */
	bool resolved;
};

/* Mappings as read at one or more generations (sealed: gens are valid;
 * the same mappings read again at a later generation add it here), by
 * address. */
struct ns_era {
	uint32_t *gens;
	size_t ngens;
	bool sealed;
	struct ns_map *maps;
	size_t n;
};

struct ns_proc {
	struct ns_proc *next;
	pid_t pid;
	struct ns_era eras[NS_ERAS]; /* oldest first; the last is the latest */
	size_t neras;
};

/* A build-id asked of debuginfod and its answer (NULL: none). */
struct ns_asked {
	struct ns_asked *next;
	char id[BUILD_ID_HEX];
	char *path;
};

/* libdebuginfod's API, declared here: it is loaded only when wanted. */
typedef struct debuginfod_client debuginfod_client;
typedef debuginfod_client *(*dbgi_begin_fn)(void);
typedef int (*dbgi_find_fn)(debuginfod_client *, const unsigned char *, int, char **);
typedef void (*dbgi_end_fn)(debuginfod_client *);

struct native_symbols {
	struct ns_file *files[FILE_BUCKETS];
	struct ns_proc *procs[PROC_BUCKETS];
	struct native_symbols_stats stats;
	struct {
		bool tried;
		debuginfod_client *client;
		dbgi_find_fn find;
		dbgi_end_fn end;
		struct ns_asked *asked;
	} dbgi;
};

struct native_symbols *native_symbols_new(void)
{
	return calloc(1, sizeof(struct native_symbols));
}

static void era_free(struct ns_era *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->maps[i].path);
	free(e->maps);
	free(e->gens);
	memset(e, 0, sizeof(*e));
}

static void era_drop(struct ns_proc *p, size_t i)
{
	era_free(&p->eras[i]);
	memmove(&p->eras[i], &p->eras[i + 1], (p->neras - i - 1) * sizeof(p->eras[0]));
	p->neras--;
}

static void proc_free(struct ns_proc *p)
{
	while (p->neras)
		era_drop(p, p->neras - 1);
	free(p);
}

void native_symbols_free(struct native_symbols *ns)
{
	if (!ns)
		return;
	for (size_t b = 0; b < PROC_BUCKETS; b++) {
		while (ns->procs[b]) {
			struct ns_proc *p = ns->procs[b];

			ns->procs[b] = p->next;
			proc_free(p);
		}
	}
	for (size_t b = 0; b < FILE_BUCKETS; b++) {
		while (ns->files[b]) {
			struct ns_file *f = ns->files[b];

			ns->files[b] = f->next;
			elf_symtab_free(&f->own);
			elf_symtab_free(&f->debug);
			elf_plt_free(&f->plt);
			free(f->syms);
			free(f->fdes);
			free(f);
		}
	}
	while (ns->dbgi.asked) {
		struct ns_asked *a = ns->dbgi.asked;

		ns->dbgi.asked = a->next;
		free(a->path);
		free(a);
	}
	/* libdebuginfod stays loaded: the libcurl and TLS libraries it pulls
	 * in set up globals that do not unload cleanly */
	if (ns->dbgi.client)
		ns->dbgi.end(ns->dbgi.client);
	free(ns);
}

void native_symbols_stats(const struct native_symbols *ns, struct native_symbols_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (ns)
		*out = ns->stats;
}

/* ------------------------------------------------------------ opening -- */

/* The file behind a mapping, as mapped (sys/target_file.h): map_files,
 * else the path in the process's root if it still names the device and
 * inode that were mapped (on overlayfs with xino inode numbers differ: no
 * name then, rather than a wrong one). */
static int open_mapping(pid_t pid, const struct ns_map *m)
{
	struct proc_map pm = { .start = m->start, .end = m->end, .inode = m->inode,
			       .dev_major = m->dev_major, .dev_minor = m->dev_minor,
			       .path = m->path };

	return target_file_open_mapping(pid, &pm);
}

static bool has_symtab(struct elf_image *img)
{
	for (size_t i = 1; i < elf_image_section_count(img); i++) {
		const Elf64_Shdr *sh = elf_image_section_header(img, i);

		if (sh->sh_type == SHT_SYMTAB && sh->sh_size)
			return true;
	}
	return false;
}

/* A debug file fits the binary img: it has a .symtab and the binary's
 * build-id; a binary without one only a debug file without one whose
 * .text lies where the binary's does, with its size (what is left to
 * check: a .symtab of another file would name every frame wrong). */
static bool debug_fits(struct elf_image *dbg, struct elf_image *img, const char *want_id)
{
	uint64_t a1, s1, a2, s2;
	char id[BUILD_ID_HEX];
	bool has_id;

	if (!has_symtab(dbg))
		return false;
	has_id = elf_image_build_id(dbg, id, sizeof(id)) == 0;
	if (want_id)
		return has_id && strcmp(id, want_id) == 0;
	return !has_id && img && elf_image_section(img, ".text", &a1, &s1) == 0 &&
	       elf_image_section(dbg, ".text", &a2, &s2) == 0 && a1 == a2 && s1 == s2;
}

/* The debug file open at fd (taken, closed on failure) as out, if it fits
 * img (or, without one, carries build-id want_id). */
static int open_fitting_debug(struct elf_image *out, int fd, struct elf_image *img,
			      const char *want_id)
{
	if (elf_image_open_fd(out, fd) < 0)
		return -1;
	if (debug_fits(out, img, want_id))
		return 0;
	elf_image_close(out);
	return -1;
}

/* Opens a debug file at path in the process's root, never in ours on its
 * behalf (a process in our root finds ours there). */
static int open_debug(pid_t pid, const char *path, struct elf_image *img, const char *want_id,
		      const struct stat *main_st, struct elf_image *out)
{
	struct stat st;
	int fd = target_file_open(pid, path, NULL);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || (st.st_dev == main_st->st_dev && st.st_ino == main_st->st_ino)) {
		close(fd);
		return -1;
	}
	return open_fitting_debug(out, fd, img, want_id);
}

/* ---------------------------------------------------------- debuginfod -- */

/* Loads libdebuginfod, once, and only when DEBUGINFOD_URLS asks for it:
 * no network traffic a user did not configure. */
static bool debuginfod_ready(struct native_symbols *ns)
{
	const char *urls;
	dbgi_begin_fn begin;
	void *lib;

	if (ns->dbgi.tried)
		return ns->dbgi.client != NULL;
	ns->dbgi.tried = true;
	urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !urls[0])
		return false;
	lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return false;
	begin = (dbgi_begin_fn)dlsym(lib, "debuginfod_begin");
	ns->dbgi.find = (dbgi_find_fn)dlsym(lib, "debuginfod_find_debuginfo");
	ns->dbgi.end = (dbgi_end_fn)dlsym(lib, "debuginfod_end");
	if (begin && ns->dbgi.find && ns->dbgi.end)
		ns->dbgi.client = begin();
	return ns->dbgi.client != NULL;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The debug file of build-id id from debuginfod; each id is asked once. */
static int debuginfod_open(struct native_symbols *ns, const char *id, struct elf_image *out)
{
	unsigned char bin[BUILD_ID_HEX / 2];
	size_t len = strlen(id) / 2;
	struct ns_asked *a;
	int fd;

	for (a = ns->dbgi.asked; a; a = a->next)
		if (strcmp(a->id, id) == 0)
			break;
	if (!a) {
		char *path = NULL;

		if (!debuginfod_ready(ns) || len == 0 || len > sizeof(bin) || !(a = calloc(1, sizeof(*a))))
			return -1;
		snprintf(a->id, sizeof(a->id), "%s", id);
		a->next = ns->dbgi.asked;
		ns->dbgi.asked = a;
		for (size_t i = 0; i < len; i++) {
			int hi = hex_digit(id[2 * i]), lo = hex_digit(id[2 * i + 1]);

			if (hi < 0 || lo < 0)
				return -1;
			bin[i] = (unsigned char)(hi << 4 | lo);
		}
		fd = ns->dbgi.find(ns->dbgi.client, bin, (int)len, &path);
		if (fd < 0)
			return -1;
		a->path = path; /* in the client's cache: asked again, read from there */
	} else {
		if (!a->path)
			return -1;
		/* debuginfod's cache, on the host: trusted, still checked */
		fd = open(a->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return -1;
	}
	if (target_file_check(fd, NULL) < 0) {
		close(fd);
		return -1;
	}
	return open_fitting_debug(out, fd, NULL, id);
}

/* ------------------------------------------------------------ symbols -- */

static size_t leading_underscores(const char *s)
{
	return strspn(s, "_");
}

/* Which of two symbols at one address names it: the .symtab's; one with a
 * size; then the public spelling of aliases (getpid over __getpid, malloc
 * over __libc_malloc), shorter, then by bytes for a fixed answer. */
static int better(const struct ns_sym *a, const struct ns_sym *b)
{
	size_t ua, ub, la, lb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (!a->size != !b->size)
		return a->size ? -1 : 1;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* By address, the best name of an address first. */
static int by_start(const void *pa, const void *pb)
{
	const struct ns_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return better(a, b);
}

static int build_table(struct ns_file *f, bool own_is_symtab)
{
	size_t n = 0;

	f->syms = calloc(f->own.n + f->debug.n + 1, sizeof(*f->syms));
	if (!f->syms)
		return -1;
	for (size_t i = 0; i < f->own.n; i++)
		f->syms[n++] = (struct ns_sym){ f->own.v[i].start, f->own.v[i].size, f->own.v[i].name,
						own_is_symtab ? 0 : 1 };
	for (size_t i = 0; i < f->debug.n; i++)
		f->syms[n++] = (struct ns_sym){ f->debug.v[i].start, f->debug.v[i].size,
						f->debug.v[i].name, 0 };
	qsort(f->syms, n, sizeof(*f->syms), by_start);
	f->n = n;
	return 0;
}

/*
 * The symbol holding vaddr. A symbol with a size holds its bytes: of
 * several, the .symtab's first (a debug file's names over the .dynsym's),
 * then the innermost. Only where none does, a zero-size symbol holds what
 * lies up to the next symbol, if no symbol at its address has a size,
 * and within its own code section (_init, of no size, does not hold the
 * .plt after .init) where the file's sections are known.
 */
static const struct ns_sym *table_find(const struct ns_file *f, uint64_t vaddr)
{
	const struct ns_sym *best = NULL;
	size_t lo = 0, hi = f->n, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	for (size_t j = lo; j-- > 0 && lo - j <= COVER_WINDOW;) {
		const struct ns_sym *s = &f->syms[j];

		if (!s->size || vaddr - s->start >= s->size)
			continue;
		/* walking down: a later find is further out, or an alias
		 * sorted before (better than) the one we have */
		if (!best || s->rank < best->rank || (s->rank == best->rank && s->start == best->start))
			best = s;
	}
	if (best)
		return best;
	first = lo - 1;
	while (first > 0 && f->syms[first - 1].start == f->syms[lo - 1].start)
		first--;
	for (size_t j = first; j < lo; j++)
		if (f->syms[j].size)
			return NULL; /* its size says where it ends, before vaddr */
	if (!elf_plt_same_section(&f->plt, vaddr, f->syms[first].start))
		return NULL;
	if (lo < f->n || vaddr - f->syms[first].start < ZERO_SIZE_REACH)
		return &f->syms[first];
	return NULL;
}

/* ------------------------------------------------------------ files -- */

static size_t file_bucket(const struct file_id *id)
{
	return (size_t)((id->ino * 31u + id->dev) % FILE_BUCKETS);
}

static struct ns_file *file_find(struct native_symbols *ns, const struct file_id *id)
{
	for (struct ns_file *f = ns->files[file_bucket(id)]; f; f = f->next)
		if (file_id_equal(&f->id, id))
			return f;
	return NULL;
}

static struct ns_file *file_add(struct native_symbols *ns, const struct file_id *id)
{
	struct ns_file *f = calloc(1, sizeof(*f));
	size_t b = file_bucket(id);

	if (!f)
		return NULL;
	f->id = *id;
	f->next = ns->files[b];
	ns->files[b] = f;
	return f;
}

/* The separate debug file of a file without .symtab, GDB's way: by
 * build-id, then by .gnu_debuglink beside the file, in .debug/ there, and
 * under /usr/lib/debug; then debuginfod. */
static void load_debug(struct native_symbols *ns, pid_t pid, const char *path, struct elf_image *img,
		       const struct stat *st, struct ns_file *f)
{
	static const char *const link_at[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
	char id[BUILD_ID_HEX], link[NAME_MAX + 1], dir[PATH_MAX], cand[PATH_MAX + NAME_MAX + 32];
	bool has_id = elf_image_build_id(img, id, sizeof(id)) == 0 && strlen(id) > 2;
	struct elf_image dbg;

	if (has_id) {
		snprintf(cand, sizeof(cand), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
		if (open_debug(pid, cand, img, id, st, &dbg) == 0)
			goto found;
	}
	if (elf_image_debuglink(img, link, sizeof(link)) == 0 && strlen(path) < sizeof(dir)) {
		/* DIR: the file's directory as the process names it ("" for /) */
		char *slash;

		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < sizeof(link_at) / sizeof(link_at[0]); i++) {
			snprintf(cand, sizeof(cand), link_at[i], dir, link);
			if (open_debug(pid, cand, img, has_id ? id : NULL, st, &dbg) == 0)
				goto found;
		}
	}
	if (has_id && debuginfod_open(ns, id, &dbg) == 0) {
		ns->stats.from_debuginfod++;
		elf_symtab_load(&f->debug, &dbg);
		elf_image_close(&dbg);
	}
	return;
found:
	ns->stats.with_debug_file++;
	elf_symtab_load(&f->debug, &dbg);
	elf_image_close(&dbg);
}

/* Where the file's functions are by its unwind information: what tells
 * functions apart where no symbol names them (stripped static ones). */
static void load_fdes(struct ns_file *f, struct elf_image *img)
{
	uint64_t addr, size;
	uint8_t *eh;

	if (elf_image_section(img, ".eh_frame", &addr, &size) != 0 || !size || size > EH_FRAME_MAX)
		return;
	eh = malloc(size);
	if (eh && elf_image_read_vaddr(img, addr, eh, size) == 0)
		f->fdes = eh_frame_fdes(eh, size, addr, &f->nfdes);
	free(eh);
}

/* Symbols of a file just opened: its own, its debug file's. */
static void file_load(struct native_symbols *ns, pid_t pid, const char *path, struct elf_image *img,
		      const struct stat *st, struct ns_file *f)
{
	bool symtab = has_symtab(img);

	if (elf_image_build_id(img, f->build_id, sizeof(f->build_id)) < 0)
		f->build_id[0] = '\0';
	load_fdes(f, img);
	elf_plt_load(&f->plt, img); /* none: symbols alone name the code */
	elf_symtab_load(&f->own, img); /* none: still a file, without names */
	if (symtab)
		ns->stats.with_symtab++;
	else if (path) /* not the vDSO, whose debug file no one has */
		load_debug(ns, pid, path, img, st, f);
	if (build_table(f, symtab) < 0) {
		elf_symtab_free(&f->own);
		elf_symtab_free(&f->debug);
	}
	ns->stats.files++;
}

/* The file of a mapping and the mapping's load bias. */
static void resolve_map(struct native_symbols *ns, pid_t pid, struct ns_map *m)
{
	struct elf_image img;
	struct ns_file *f;
	struct stat st;
	struct file_id id;
	struct vdso_ident v;
	uint64_t vaddr;
	int fd;

	m->resolved = true;
	fd = m->vdso ? vdso_image_open(pid, m->start, m->end, &v) : open_mapping(pid, m);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		ns->stats.failed++;
		return;
	}
	if (m->vdso)
		file_id_of_vdso(&v, &id);
	else
		file_id_of(&st, &id);
	if (m->id_known && !file_id_equal(&id, &m->id)) {
		close(fd); /* not the file that was mapped: the range maps another since */
		ns->stats.failed++;
		return;
	}
	f = file_find(ns, &id);
	if (f && f->failed) {
		close(fd);
		return;
	}
	if (elf_image_open_fd(&img, fd) < 0) { /* takes fd */
		if (!f && (f = file_add(ns, &id))) {
			f->failed = true;
			ns->stats.failed++;
		}
		return;
	}
	/* the mapping's file offset is at this linked address; no PT_LOAD
	 * maps it: not the file that was mapped there (or garbage) */
	if (elf_image_vaddr_of_offset(&img, m->offset, &vaddr) < 0) {
		elf_image_close(&img);
		return;
	}
	m->bias = img.is_dyn ? m->start - vaddr : 0;
	if (!f && (f = file_add(ns, &id))) {
		file_load(ns, pid, m->vdso ? NULL : m->path, &img, &st, f);
		ns->stats.cut += img.refused > 0;
	}
	elf_image_close(&img);
	m->file = f;
}

/* ---------------------------------------------------------- processes -- */

/* An era from em (whose paths it takes). */
static int era_from(struct ns_era *e, struct exec_maps *em)
{
	memset(e, 0, sizeof(*e));
	e->maps = calloc(em->n ? em->n : 1, sizeof(*e->maps));
	if (!e->maps)
		return -1;
	for (size_t i = 0; i < em->n; i++) {
		struct ns_map *m = &e->maps[e->n++];
		const struct exec_map *x = &em->v[i];

		m->start = x->start;
		m->end = x->end;
		m->offset = x->offset;
		m->inode = x->inode;
		m->dev_major = x->dev_major;
		m->dev_minor = x->dev_minor;
		m->id = x->id;
		m->id_known = x->id_known;
		m->vdso = x->vdso;
		m->path = x->path;
		em->v[i].path = NULL;
	}
	return 0;
}

static struct ns_proc **proc_slot(struct native_symbols *ns, pid_t pid)
{
	struct ns_proc **pp = &ns->procs[(size_t)(unsigned int)pid % PROC_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* What e's mappings that are the same in prev (same place, same bytes of
 * the same file) already know of their files. */
static void era_inherit(struct ns_era *e, const struct ns_era *prev)
{
	size_t j = 0;

	for (size_t i = 0; i < e->n; i++) {
		struct ns_map *m = &e->maps[i];
		const struct ns_map *o;

		while (j < prev->n && prev->maps[j].start < m->start)
			j++;
		if (j == prev->n)
			break;
		o = &prev->maps[j];
		if (o->resolved && o->start == m->start && o->end == m->end &&
		    o->offset == m->offset && o->id_known && m->id_known &&
		    file_id_equal(&o->id, &m->id)) {
			m->file = o->file;
			m->bias = o->bias;
			m->resolved = true;
		}
	}
}

static bool era_has_gen(const struct ns_era *e, uint32_t gen)
{
	for (size_t i = e->ngens; e->sealed && i-- > 0;)
		if (e->gens[i] == gen)
			return true;
	return false;
}

/* Adds gen to e's generations (the oldest goes beyond NS_ERA_GENS). */
static void era_add_gen(struct ns_era *e, uint32_t gen)
{
	if (!e->gens && !(e->gens = calloc(NS_ERA_GENS, sizeof(*e->gens))))
		return;
	if (e->ngens == NS_ERA_GENS)
		memmove(e->gens, e->gens + 1, --e->ngens * sizeof(*e->gens));
	e->gens[e->ngens++] = gen;
	e->sealed = true;
}

/* Whether e holds just the mappings of em, each of the same file. */
static bool era_same(const struct ns_era *e, const struct exec_maps *em)
{
	if (e->n != em->n)
		return false;
	for (size_t i = 0; i < e->n; i++) {
		const struct ns_map *m = &e->maps[i];
		const struct exec_map *x = &em->v[i];

		if (m->start != x->start || m->end != x->end || m->offset != x->offset ||
		    !m->id_known || !x->id_known || !file_id_equal(&m->id, &x->id))
			return false;
	}
	return true;
}

/* Adds em as p's latest mappings, read at generation gen (< 0: none, a
 * read that could not be vouched for). Read again at a generation that
 * has mappings already, the new read holds what that one did and what was
 * mapped since (within a generation mappings are only added): it takes
 * the generation over. The same mappings as the latest's add their
 * generation there. An unsealed latest read goes; the oldest beyond
 * NS_ERAS or NS_MAPS_KEPT mappings. */
static void proc_add_era(struct ns_proc *p, struct exec_maps *em, int64_t gen)
{
	struct ns_era e;
	size_t kept = 0;

	/* what is known of the files first, before any era goes */
	if (era_from(&e, em) < 0)
		return;
	for (size_t i = p->neras; i-- > 0;)
		era_inherit(&e, &p->eras[i]);
	if (p->neras && !p->eras[p->neras - 1].sealed)
		era_drop(p, p->neras - 1);
	for (size_t i = 0; gen >= 0 && i < p->neras; i++) {
		struct ns_era *o = &p->eras[i];

		if (!era_has_gen(o, (uint32_t)gen))
			continue;
		for (size_t k = 0; k < o->ngens; k++)
			if (o->gens[k] == (uint32_t)gen)
				memmove(&o->gens[k], &o->gens[k + 1], (--o->ngens - k) * sizeof(*o->gens));
		if (!o->ngens)
			era_drop(p, i);
		break;
	}
	if (gen >= 0 && p->neras && p->eras[p->neras - 1].sealed &&
	    era_same(&p->eras[p->neras - 1], em)) {
		era_add_gen(&p->eras[p->neras - 1], (uint32_t)gen);
		era_free(&e);
		return;
	}
	if (gen >= 0)
		era_add_gen(&e, (uint32_t)gen);
	if (p->neras == NS_ERAS)
		era_drop(p, 0);
	p->eras[p->neras++] = e;
	for (size_t i = 0; i < p->neras; i++)
		kept += p->eras[i].n;
	while (p->neras > 1 && kept > NS_MAPS_KEPT) {
		kept -= p->eras[0].n;
		era_drop(p, 0);
	}
}

static struct ns_proc *proc_get(struct native_symbols *ns, pid_t pid)
{
	struct ns_proc **pp = proc_slot(ns, pid), *p = *pp;
	struct exec_maps em;

	if (p)
		return p;
	/* a process that cannot be read stays without mappings until
	 * forgotten: names are asked for by the thousand */
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (exec_maps_read(pid, &em) == 0 && em.n)
		proc_add_era(p, &em, -1);
	exec_maps_free(&em);
	*pp = p;
	return p;
}

/* The era of generation gen (NATIVE_GEN_LATEST: the latest), or NULL. */
static struct ns_era *era_of(struct ns_proc *p, int64_t gen)
{
	if (!p || !p->neras)
		return NULL;
	if (gen == NATIVE_GEN_LATEST)
		return &p->eras[p->neras - 1];
	for (size_t i = p->neras; i-- > 0;)
		if (era_has_gen(&p->eras[i], (uint32_t)gen))
			return &p->eras[i];
	return NULL;
}

static void resolve_all(struct native_symbols *ns, pid_t pid, struct ns_era *e)
{
	for (size_t i = 0; e && i < e->n; i++)
		if (!e->maps[i].resolved)
			resolve_map(ns, pid, &e->maps[i]);
}

void native_symbols_set_maps(struct native_symbols *ns, pid_t pid, struct exec_maps *em,
			     int64_t gen)
{
	struct ns_proc *p;

	if (ns && em->n && (p = proc_get(ns, pid)))
		proc_add_era(p, em, gen);
	exec_maps_free(em);
}

void native_symbols_forget(struct native_symbols *ns, pid_t pid)
{
	struct ns_proc **pp, *p;

	if (!ns || !(p = *(pp = proc_slot(ns, pid))))
		return;
	*pp = p->next;
	proc_free(p);
}

bool native_symbols_has_gen(struct native_symbols *ns, pid_t pid, int64_t gen)
{
	return ns && era_of(proc_get(ns, pid), gen) != NULL;
}

/* The mapping of pid in generation gen that holds addr, its file
 * resolved; NULL if none. */
static struct ns_map *map_of(struct native_symbols *ns, pid_t pid, int64_t gen, uint64_t addr)
{
	struct ns_era *e = ns ? era_of(proc_get(ns, pid), gen) : NULL;
	size_t lo = 0, hi = e ? e->n : 0;

	while (lo < hi) { /* /proc/PID/maps lists mappings by address */
		size_t mid = lo + (hi - lo) / 2;

		if (addr < e->maps[mid].start) {
			hi = mid;
		} else if (addr >= e->maps[mid].end) {
			lo = mid + 1;
		} else {
			if (!e->maps[mid].resolved)
				resolve_map(ns, pid, &e->maps[mid]);
			return &e->maps[mid];
		}
	}
	return NULL;
}

const char *native_symbols_name(struct native_symbols *ns, pid_t pid, int64_t gen, uint64_t addr,
				uint64_t *sym_offset)
{
	struct ns_map *m = map_of(ns, pid, gen, addr);
	const struct ns_sym *s;
	const char *stub;

	if (!m || !m->file || m->file->failed)
		return NULL;
	/* a PLT stub by its target, never by the symbol before the section */
	stub = elf_plt_name(&m->file->plt, addr - m->bias, sym_offset);
	if (stub)
		return stub;
	if (!(s = table_find(m->file, addr - m->bias)))
		return NULL;
	if (sym_offset)
		*sym_offset = addr - m->bias - s->start;
	return s->name;
}

int native_symbols_function(struct native_symbols *ns, pid_t pid, int64_t gen, uint64_t addr,
			    uint64_t *start, const char **path)
{
	struct ns_map *m = map_of(ns, pid, gen, addr);
	const struct eh_fde *fde;

	if (!m || !m->file || m->file->failed)
		return -1;
	fde = eh_frame_fde_covering(m->file->fdes, m->file->nfdes, addr - m->bias);
	if (!fde)
		return -1;
	*start = fde->start;
	*path = m->path;
	return 0;
}

int native_symbols_where(struct native_symbols *ns, pid_t pid, int64_t gen, uint64_t addr,
			 struct native_where *out)
{
	struct ns_map *m = map_of(ns, pid, gen, addr);

	if (!m)
		return -1;
	out->path = m->path;
	out->build_id = m->file && !m->file->failed && m->file->build_id[0] ? m->file->build_id
									  : NULL;
	out->file_offset = addr - m->start + m->offset;
	out->start = m->start;
	out->end = m->end;
	out->offset = m->offset;
	return 0;
}

void native_symbols_preload(struct native_symbols *ns, pid_t pid)
{
	if (ns)
		resolve_all(ns, pid, era_of(proc_get(ns, pid), NATIVE_GEN_LATEST));
}
