/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ELF core format as Linux writes it (fs/binfmt_elf.c) and gdb copies
 * it: PT_LOAD segments for the memory that was dumped (p_filesz 0 for what
 * was left out) and one PT_NOTE segment with NT_PRPSINFO, NT_SIGINFO,
 * NT_AUXV, NT_FILE (the mapped files) and one NT_PRSTATUS per thread, the
 * thread that dumped first. Everything in the file is untrusted: sizes are
 * checked before every access and a note that does not fit ends the walk.
 */
#include "sys/core_file.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sys/elf_image.h"
#include "sys/proc_maps.h"
#include "sys/remote_mem.h"
#include "sys/target_file.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif
#ifndef NT_SIGINFO
#define NT_SIGINFO 0x53494749
#endif

#define MAX_THREADS 65536
#define MAX_FILES 65536

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * struct elf_prstatus (x86-64): signal info, pending/held masks, pids,
 * four timevals, then user_regs_struct (27 longs) at 112.
 */
#define PRSTATUS_SIZE 336
#define PRSTATUS_CURSIG 12
#define PRSTATUS_PID 32
#define PRSTATUS_UTIME 48
#define PRSTATUS_STIME 64
#define PRSTATUS_REGS 112

/* A struct timeval in microseconds; 0 for one no process could have used
 * (more than a century). */
static uint64_t timeval_us(const uint8_t *p)
{
	uint64_t sec = u64_at(p), usec = u64_at(p + 8);

	return sec < (1ULL << 32) && usec < 1000000 ? sec * 1000000 + usec : 0;
}

/* user_regs_struct slots, in the order the kernel stores them. */
enum {
	U_R15, U_R14, U_R13, U_R12, U_RBP, U_RBX, U_R11, U_R10, U_R9, U_R8, U_RAX, U_RCX,
	U_RDX, U_RSI, U_RDI, U_ORIG_RAX, U_RIP, U_CS, U_EFLAGS, U_RSP, U_SS, U_FS_BASE,
	U_GS_BASE, U_COUNT
};

static void parse_prstatus(struct core_thread *t, const uint8_t *d)
{
	static const struct {
		int slot;
		enum xreg reg;
	} map[] = {
		{ U_RAX, XREG_RAX }, { U_RDX, XREG_RDX }, { U_RCX, XREG_RCX }, { U_RBX, XREG_RBX },
		{ U_RSI, XREG_RSI }, { U_RDI, XREG_RDI }, { U_RBP, XREG_RBP }, { U_RSP, XREG_RSP },
		{ U_R8, XREG_R8 },   { U_R9, XREG_R9 },   { U_R10, XREG_R10 }, { U_R11, XREG_R11 },
		{ U_R12, XREG_R12 }, { U_R13, XREG_R13 }, { U_R14, XREG_R14 }, { U_R15, XREG_R15 },
		{ U_RIP, XREG_RIP },
	};
	const uint8_t *regs = d + PRSTATUS_REGS;
	int64_t orig_rax;

	memset(t, 0, sizeof(*t));
	t->cursig = (int16_t)(d[PRSTATUS_CURSIG] | d[PRSTATUS_CURSIG + 1] << 8);
	t->tid = (pid_t)u32_at(d + PRSTATUS_PID);
	t->utime_us = timeval_us(d + PRSTATUS_UTIME);
	t->stime_us = timeval_us(d + PRSTATUS_STIME);
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		proc_regs_set(&t->regs, map[i].reg, u64_at(regs + 8 * map[i].slot));
	t->regs.fs_base = u64_at(regs + 8 * U_FS_BASE);
	/* A thread stopped inside a system call keeps its number in orig_rax. */
	orig_rax = (int64_t)u64_at(regs + 8 * U_ORIG_RAX);
	t->regs.syscall_nr = orig_rax >= 0 && orig_rax < 4096 ? orig_rax : -1;
	if (t->regs.syscall_nr >= 0) {
		const int args[6] = { U_RDI, U_RSI, U_RDX, U_R10, U_R8, U_R9 };

		for (int i = 0; i < 6; i++)
			t->regs.args[i] = u64_at(regs + 8 * args[i]);
	}
}

/* NT_FILE: count, page size, count x {start, end, page offset}, names. */
static int parse_nt_file(struct core_file *c, const uint8_t *d, size_t len)
{
	uint64_t count, page;
	const char *name, *end = (const char *)d + len;

	if (len < 16 || c->files)
		return -1;
	count = u64_at(d);
	page = u64_at(d + 8);
	if (count > MAX_FILES || count * 24 > len - 16 || page == 0 || page > (1u << 30))
		return -1;
	c->files = calloc(count ? count : 1, sizeof(*c->files));
	if (!c->files)
		return -1;
	name = (const char *)d + 16 + count * 24;
	for (uint64_t i = 0; i < count; i++) {
		const uint8_t *e = d + 16 + 24 * i;
		const char *nul = memchr(name, '\0', (size_t)(end - name));
		struct core_mapping *m = &c->files[c->nfiles];

		if (!nul)
			break;
		m->start = u64_at(e);
		m->end = u64_at(e + 8);
		m->offset = u64_at(e + 16) * page;
		m->fd = -1;
		m->path = strdup(name);
		name = nul + 1;
		if (!m->path)
			return -1;
		if (m->end <= m->start) {
			free(m->path);
			continue;
		}
		c->nfiles++;
	}
	return 0;
}

static void parse_auxv(struct core_file *c, const uint8_t *d, size_t len)
{
	for (size_t i = 0; i + 16 <= len; i += 16)
		if (u64_at(d + i) == AT_ENTRY)
			c->entry = u64_at(d + i + 8);
}

static int add_thread(struct core_file *c, const uint8_t *d)
{
	if (c->nthreads >= MAX_THREADS)
		return 0;
	if ((c->nthreads & (c->nthreads - 1)) == 0) { /* 0, 1, 2, 4, ...: grow */
		size_t cap = c->nthreads ? 2 * c->nthreads : 1;
		struct core_thread *v = realloc(c->threads, cap * sizeof(*v));

		if (!v)
			return -1;
		c->threads = v;
	}
	parse_prstatus(&c->threads[c->nthreads++], d);
	return 0;
}

static int parse_notes(struct core_file *c, const uint8_t *d, size_t len)
{
	size_t at = 0;

	while (len - at >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		size_t name_len, desc_len;
		const uint8_t *desc;

		memcpy(&nh, d + at, sizeof(nh));
		at += sizeof(nh);
		name_len = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
		desc_len = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
		if (name_len > len - at || desc_len > len - at - name_len)
			break;
		desc = d + at + name_len;
		at += name_len + desc_len;
		switch (nh.n_type) {
		case NT_PRSTATUS:
			if (nh.n_descsz >= PRSTATUS_SIZE && add_thread(c, desc) < 0)
				return -1;
			break;
		case NT_PRPSINFO:
			if (nh.n_descsz >= 136) {
				c->pid = (pid_t)u32_at(desc + 24);
				memcpy(c->fname, desc + 40, 16);
				memcpy(c->psargs, desc + 56, 80);
			}
			break;
		case NT_SIGINFO:
			if (nh.n_descsz >= 24) {
				c->signo = (int)u32_at(desc);
				c->si_code = (int)u32_at(desc + 8);
				/* the kernel's own signals carry the fault address,
				 * sent ones (si_code <= 0) the sender's pid */
				if (c->si_code > 0)
					c->fault_addr = u64_at(desc + 16);
				else
					c->sender = (pid_t)u32_at(desc + 16);
			}
			break;
		case NT_AUXV:
			parse_auxv(c, desc, nh.n_descsz);
			break;
		case NT_FILE:
			if (parse_nt_file(c, desc, nh.n_descsz) < 0 && !c->files)
				return -1;
			break;
		}
	}
	return 0;
}

int core_file_parse(struct core_file *c, const uint8_t *data, size_t size, char *err,
		    size_t errlen)
{
	Elf64_Ehdr eh;

	memset(c, 0, sizeof(*c));
	c->root_fd = c->exe_fd = -1;
	c->data = data;
	c->size = size;
	if (size < sizeof(eh) || memcmp(data, ELFMAG, SELFMAG) != 0)
		return fail(err, errlen, "not an ELF file");
	memcpy(&eh, data, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return fail(err, errlen, "not an x86-64 ELF file");
	if (eh.e_type != ET_CORE)
		return fail(err, errlen, "an ELF file, but not a core dump");
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
	    (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > size - eh.e_phoff)
		return fail(err, errlen, "program headers out of the file (truncated core?)");
	c->segs = calloc(eh.e_phnum ? eh.e_phnum : 1, sizeof(*c->segs));
	if (!c->segs)
		return fail(err, errlen, "out of memory");
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, data + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_NOTE) {
			/* a note segment cut by truncation: read what is there */
			uint64_t n = ph.p_offset < size ? size - ph.p_offset : 0;

			if (n > ph.p_filesz)
				n = ph.p_filesz;
			if (n && parse_notes(c, data + ph.p_offset, n) < 0)
				return fail(err, errlen, "out of memory");
		} else if (ph.p_type == PT_LOAD && ph.p_memsz) {
			struct core_segment *s = &c->segs[c->nsegs++];

			s->vaddr = ph.p_vaddr;
			s->memsz = ph.p_memsz;
			s->offset = ph.p_offset;
			s->flags = ph.p_flags;
			/* what the (possibly truncated) file really holds */
			s->filesz = ph.p_offset < size ? size - ph.p_offset : 0;
			if (s->filesz > ph.p_filesz)
				s->filesz = ph.p_filesz;
			if (s->filesz > s->memsz)
				s->filesz = s->memsz;
		}
	}
	if (!c->nthreads)
		return fail(err, errlen, "no thread in the core (no NT_PRSTATUS note)");
	return 0;
}

const struct core_mapping *core_file_mapping_at(const struct core_file *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (addr >= c->files[i].start && addr < c->files[i].end)
			return &c->files[i];
	return NULL;
}

/* The recorded name of the executable: the file mapped where AT_ENTRY is. */
static const struct core_mapping *exe_mapping(const struct core_file *c)
{
	return c->entry ? core_file_mapping_at(c, c->entry) : NULL;
}

/* A recorded path as it is inside the root: gcore of a process in a
 * chroot records the paths the host sees, with the root in front. */
static const char *in_root(const struct core_file *c, const char *path)
{
	size_t rl = strlen(c->root);

	if (rl && strncmp(path, c->root, rl) == 0 && path[rl] == '/')
		return path + rl;
	return path;
}

/* Opens a mapping's file: --exe for the executable (the user's own
 * file), else the recorded path inside the root, never following a
 * symlink out of it; once found, it must stay the file it was. */
static int open_mapped_file(const struct core_file *c, const struct core_mapping *m)
{
	const struct core_mapping *em = exe_mapping(c);
	struct target_file_want want = { .ino = m->inode, .dev_major = m->dev_major,
					 .dev_minor = m->dev_minor };
	int fd;

	if (c->exe_fd >= 0 && em && strcmp(m->path, em->path) == 0) {
		fd = fcntl(c->exe_fd, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	return target_file_openat(c->root_fd, in_root(c, m->path), m->inode ? &want : NULL);
}

/* Reads [addr, addr+len) of one mapped file, as the process saw it. */
static int read_mapped_file(const struct core_file *c, struct core_mapping *m, uint64_t addr,
			    void *buf, size_t len)
{
	ssize_t n;

	if (!m->host_path)
		return -EFAULT;
	if (m->fd < 0)
		m->fd = open_mapped_file(c, m);
	if (m->fd < 0)
		return -EFAULT;
	n = pread(m->fd, buf, len, (off_t)(m->offset + (addr - m->start)));
	return n == (ssize_t)len ? 0 : -EFAULT;
}

int core_file_read(struct core_file *c, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;

	while (len) {
		size_t chunk = 0;
		bool found = false;

		for (size_t i = 0; i < c->nsegs && !found; i++) {
			const struct core_segment *s = &c->segs[i];
			uint64_t rel = addr - s->vaddr;

			if (addr < s->vaddr || rel >= s->filesz)
				continue;
			chunk = s->filesz - rel < len ? (size_t)(s->filesz - rel) : len;
			memcpy(out, c->data + s->offset + rel, chunk);
			found = true;
		}
		for (size_t i = 0; i < c->nfiles && !found; i++) {
			struct core_mapping *m = &c->files[i];

			if (addr < m->start || addr >= m->end)
				continue;
			chunk = m->end - addr < len ? (size_t)(m->end - addr) : len;
			/* what the core holds of it wins: only holes come from the file */
			for (size_t k = 0; k < c->nsegs; k++) {
				const struct core_segment *s = &c->segs[k];

				if (s->filesz && s->vaddr > addr && s->vaddr - addr < chunk)
					chunk = (size_t)(s->vaddr - addr);
			}
			if (read_mapped_file(c, m, addr, out, chunk) < 0)
				return -EFAULT;
			found = true;
		}
		if (!found)
			return -EFAULT;
		out += chunk;
		addr += chunk;
		len -= chunk;
	}
	return 0;
}

/* The core's segment holding addr, or NULL. */
static const struct core_segment *segment_at(const struct core_file *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nsegs; i++)
		if (addr >= c->segs[i].vaddr && addr - c->segs[i].vaddr < c->segs[i].memsz)
			return &c->segs[i];
	return NULL;
}

/* The flags of the segment of the ELF file open at fd (the caller's) that
 * a mapping at offset maps; 0 if it is not one we can read. */
static uint32_t file_flags_at(int fd, uint64_t offset)
{
	struct elf_image img;
	uint32_t flags = 0;
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	if (dup < 0 || elf_image_open_fd(&img, dup) < 0) /* takes dup */
		return 0;
	if (elf_image_flags_of_offset(&img, offset, &flags) < 0)
		flags = 0;
	elf_image_close(&img);
	return flags;
}

/* Which recorded files this machine has, and what they are (device and
 * inode: a later open must find the same file). host_path names them for
 * people; they are opened only through open_mapped_file. */
static void find_files(struct core_file *c, const char *exe)
{
	const struct core_mapping *em = exe_mapping(c);

	for (size_t i = 0; i < c->nfiles; i++) {
		struct core_mapping *m = &c->files[i];
		char buf[PATH_MAX * 2];
		struct stat st;
		int fd = open_mapped_file(c, m);

		if (fd < 0)
			continue;
		if (!segment_at(c, m->start))
			m->file_flags = file_flags_at(fd, m->offset);
		if (fstat(fd, &st) == 0) {
			m->inode = (uint64_t)st.st_ino;
			m->dev_major = major(st.st_dev);
			m->dev_minor = minor(st.st_dev);
			if (c->exe_fd >= 0 && em && strcmp(m->path, em->path) == 0)
				snprintf(buf, sizeof(buf), "%s", exe);
			else
				snprintf(buf, sizeof(buf), "%s%s", c->root, in_root(c, m->path));
			m->host_path = strdup(buf);
		}
		close(fd);
	}
	if (em) {
		for (size_t i = 0; i < c->nfiles; i++)
			if (strcmp(c->files[i].path, em->path) == 0 && c->files[i].host_path) {
				snprintf(c->exe, sizeof(c->exe), "%s", c->files[i].host_path);
				break;
			}
	} else if (exe) {
		snprintf(c->exe, sizeof(c->exe), "%s", exe);
	}
}

/*
 * The tid each thread has in its own PID namespace: glibc's struct pthread
 * (at the thread pointer, fs_base) holds it, where libc's own descriptor
 * for debuggers (_thread_db_pthread_tid: bits, count, offset) says. gcore
 * records the tids the host sees; a process in a container knows others.
 */
static void find_ns_tids(struct core_file *c)
{
	uint32_t offset = 0x2d0; /* x86-64 glibc, when libc says nothing */

	for (size_t i = 0; i < c->nfiles; i++) {
		const char *base = strrchr(c->files[i].path, '/');
		struct elf_image libc;
		uint64_t sym, size;
		uint32_t desc[3];
		int fd;

		base = base ? base + 1 : c->files[i].path;
		if ((strncmp(base, "libc.so", 7) != 0 && strncmp(base, "libc-2.", 7) != 0) ||
		    !c->files[i].host_path)
			continue;
		fd = open_mapped_file(c, &c->files[i]);
		if (fd < 0 || elf_image_open_fd(&libc, fd) < 0)
			continue;
		if (elf_image_symbol(&libc, "_thread_db_pthread_tid", &sym, &size) == 0 &&
		    elf_image_read_vaddr(&libc, sym, desc, sizeof(desc)) == 0 && desc[0] == 32 &&
		    desc[2] < 4096)
			offset = desc[2];
		elf_image_close(&libc);
		break;
	}
	for (size_t i = 0; i < c->nthreads; i++) {
		struct core_thread *t = &c->threads[i];
		int32_t tid = 0;

		t->ns_tid = t->tid;
		if (t->regs.fs_base && core_file_read(c, t->regs.fs_base + offset, &tid, 4) == 0 &&
		    tid > 0)
			t->ns_tid = tid;
	}
}

/* --exe /srv/ct/usr/bin/python3 for a core naming /usr/bin/python3: root /srv/ct. */
static void root_from_exe(struct core_file *c, const char *exe)
{
	const struct core_mapping *em = exe_mapping(c);
	size_t el, pl;

	if (!em || !exe)
		return;
	el = strlen(exe);
	pl = strlen(em->path);
	if (el > pl && strcmp(exe + el - pl, em->path) == 0 && el - pl < sizeof(c->root))
		snprintf(c->root, sizeof(c->root), "%.*s", (int)(el - pl), exe);
}

int core_file_open(struct core_file *c, const char *path, const char *root, const char *exe,
		   char *err, size_t errlen)
{
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(c, 0, sizeof(*c));
	c->root_fd = c->exe_fd = -1;
	if (fd < 0)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return fail(err, errlen, "%s: not a regular, non-empty file", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (core_file_parse(c, map, (size_t)st.st_size, err, errlen) < 0) {
		c->mapped = true;
		core_file_close(c);
		return -1;
	}
	c->mapped = true;
	if (root && root[0])
		snprintf(c->root, sizeof(c->root), "%s", root);
	else
		root_from_exe(c, exe);
	/* "/" as a root is no root: paths are joined by concatenation */
	if (strcmp(c->root, "/") == 0)
		c->root[0] = '\0';
	/* the root and --exe are the user's: opened as named */
	c->root_fd = open(c->root[0] ? c->root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->root_fd < 0) {
		fail(err, errlen, "%s: %s", c->root, strerror(errno));
		core_file_close(c);
		return -1;
	}
	if (exe) {
		c->exe_fd = open(exe, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (c->exe_fd < 0 || target_file_check(c->exe_fd, NULL) < 0) {
			fail(err, errlen, "%s: not a readable regular file", exe);
			core_file_close(c);
			return -1;
		}
	}
	find_files(c, exe);
	find_ns_tids(c);
	return 0;
}

void core_file_close(struct core_file *c)
{
	for (size_t i = 0; i < c->nfiles; i++) {
		free(c->files[i].path);
		free(c->files[i].host_path);
		if (c->files[i].fd >= 0)
			close(c->files[i].fd);
	}
	free(c->files);
	free(c->segs);
	if (c->root_fd >= 0)
		close(c->root_fd);
	if (c->exe_fd >= 0)
		close(c->exe_fd);
	free(c->threads);
	if (c->mapped)
		munmap((void *)c->data, c->size);
	memset(c, 0, sizeof(*c));
}

/* ---- the core as a process (sys/remote_mem.h hooks) --------------------- */

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return core_file_read(ctx, addr, buf, len);
}

/* A mapping's permissions: its segment's, else (gcore writes no segment
 * for code it can read back from the file) its file's, else read-only. */
static char perms_at(const struct core_file *c, const struct core_mapping *f, uint32_t flag,
		     char yes)
{
	const struct core_segment *s = segment_at(c, f->start);

	if (s)
		return (s->flags & flag) ? yes : '-';
	if (f->file_flags)
		return (f->file_flags & flag) ? yes : '-';
	return flag == PF_R ? 'r' : '-';
}

static int image_maps(void *ctx, struct proc_maps *out)
{
	struct core_file *c = ctx;

	out->n = 0;
	out->v = calloc(c->nfiles + c->nsegs + 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < c->nfiles; i++) {
		const struct core_mapping *f = &c->files[i];
		struct proc_map *m = &out->v[out->n];

		m->start = f->start;
		m->end = f->end;
		m->offset = f->offset;
		m->inode = f->inode;
		m->dev_major = f->dev_major;
		m->dev_minor = f->dev_minor;
		m->perms[0] = perms_at(c, f, PF_R, 'r');
		m->perms[1] = perms_at(c, f, PF_W, 'w');
		m->perms[2] = perms_at(c, f, PF_X, 'x');
		m->perms[3] = 'p';
		/* the path this machine can open, so the readers find the file */
		m->path = strdup(f->host_path ? f->host_path : f->path);
		if (!m->path)
			break;
		out->n++;
	}
	for (size_t i = 0; i < c->nsegs; i++) {
		const struct core_segment *s = &c->segs[i];
		struct proc_map *m = &out->v[out->n];

		if (core_file_mapping_at(c, s->vaddr))
			continue;
		m->start = s->vaddr;
		m->end = s->vaddr + s->memsz;
		m->perms[0] = (s->flags & PF_R) ? 'r' : '-';
		m->perms[1] = (s->flags & PF_W) ? 'w' : '-';
		m->perms[2] = (s->flags & PF_X) ? 'x' : '-';
		m->perms[3] = 'p';
		m->path = strdup("");
		if (!m->path)
			break;
		out->n++;
	}
	if (!out->n) {
		proc_maps_free(out); /* nothing mapped: as a gone process */
		return -ESRCH;
	}
	return 0;
}

static int image_threads(void *ctx, struct proc_thread_id *out, size_t max)
{
	struct core_file *c = ctx;
	size_t n = 0;

	for (; n < c->nthreads && n < max; n++) {
		out[n].host_tid = c->threads[n].tid;
		out[n].ns_tid = c->threads[n].ns_tid ? c->threads[n].ns_tid : c->threads[n].tid;
	}
	return (int)n;
}

static int image_comm(void *ctx, pid_t tid, char *buf, size_t len)
{
	struct core_file *c = ctx;

	(void)tid; /* cores keep the process's name only */
	snprintf(buf, len, "%s", c->fname);
	return 0;
}

static int image_exe(void *ctx, char *path, size_t len)
{
	struct core_file *c = ctx;

	if (!c->exe[0])
		return -ENOENT;
	snprintf(path, len, "%s", c->exe);
	return 0;
}

static int image_open_mapped(void *ctx, uint64_t start)
{
	struct core_file *c = ctx;

	for (size_t i = 0; i < c->nfiles; i++)
		if (c->files[i].start == start)
			return c->files[i].host_path ? open_mapped_file(c, &c->files[i]) : -ENOENT;
	return -ENOENT;
}

static int image_open_exe(void *ctx)
{
	const struct core_mapping *em = exe_mapping(ctx);

	return em ? image_open_mapped(ctx, em->start) : -ENOENT;
}

static int image_regs(void *ctx, pid_t tid, struct proc_regs *out)
{
	struct core_file *c = ctx;

	for (size_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].tid == tid) {
			*out = c->threads[i].regs;
			return 0;
		}
	return -ESRCH;
}

static int image_times(void *ctx, pid_t tid, int64_t *user_ns, int64_t *system_ns)
{
	struct core_file *c = ctx;

	for (size_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].tid == tid) {
			*user_ns = (int64_t)c->threads[i].utime_us * 1000;
			*system_ns = (int64_t)c->threads[i].stime_us * 1000;
			return 0;
		}
	return -ESRCH;
}

pid_t core_file_attach(struct core_file *c)
{
	struct remote_image img = {
		.ctx = c, .pid = c->pid, .read = image_read, .maps = image_maps,
		.threads = image_threads, .comm = image_comm, .exe = image_exe,
		.regs = image_regs, .times = image_times, .open_mapped = image_open_mapped,
		.open_exe = image_open_exe, .root_fd = c->root_fd,
	};

	return remote_image_attach(&img);
}
