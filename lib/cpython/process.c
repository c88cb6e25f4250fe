/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/process.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cpython/interp_cache.h"
#include "cpython/offsets_debug.h"
#include "cpython/offsets_dwarf.h"
#include "sys/elf_image.h"
#include "sys/proc_maps.h"
#include "sys/proc_tree.h"
#include "sys/remote_mem.h"
#include "sys/target_file.h"

const char *py_failure_name(enum py_failure f)
{
	switch (f) {
	case PY_FAIL_NONE:
		return "none";
	case PY_FAIL_GONE:
		return "gone";
	case PY_FAIL_NOT_PYTHON:
		return "not Python";
	case PY_FAIL_UNSUPPORTED:
		return "unsupported";
	case PY_FAIL_TRANSIENT:
		return "transient";
	case PY_FAIL_VALIDATION:
		return "validation failed";
	case PY_FAIL_NO_FRAMES:
		return "no Python frames";
	}
	return "?";
}

int py_process_fail(struct py_process *p, enum py_failure why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	p->fail = why;
	return -1;
}

int py_process_read_failed(struct py_process *p, int rc, const char *what)
{
	if (rc == -ESRCH)
		return py_process_fail(p, PY_FAIL_GONE, "no such process (it exited while being read)");
	/* EACCES (/proc) or EPERM (process_vm_readv): told as the BPF tools
	 * tell a user who is not root (bpf/module.c) */
	if (rc == -EPERM || rc == -EACCES)
		return py_process_fail(p, PY_FAIL_TRANSIENT,
				       "cannot read %s: Permission denied: must be run as root "
				       "(reading another user's process needs CAP_SYS_PTRACE over "
				       "it). Fix: sudo <the same command>",
				       what);
	return py_process_fail(p, PY_FAIL_TRANSIENT, "cannot read %s: %s", what, strerror(-rc));
}

void py_process_note(struct py_process *p, const char *fmt, ...)
{
	size_t used = strlen(p->notes);
	va_list ap;

	if (used + 3 >= sizeof(p->notes))
		return;
	if (used)
		strcpy(p->notes + used, "; "), used += 2;
	va_start(ap, fmt);
	vsnprintf(p->notes + used, sizeof(p->notes) - used, fmt, ap);
	va_end(ap);
}

/*
 * Opens the file behind a mapping the way the process mapped it
 * (sys/target_file.h: the mapped file itself, else its path inside the
 * process's root, never a path followed out of it; device and inode must
 * be the mapping's). opened says through what, for -v.
 */
static int open_mapped_file(pid_t pid, const struct proc_map *m, struct elf_image *img,
			    char *opened, size_t len)
{
	if (target_file_elf_of_mapping(pid, m, img) < 0)
		return -1;
	if (remote_image_of(pid))
		snprintf(opened, len, "%s", m->path);
	else
		snprintf(opened, len, "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
	return 0;
}

/* Remembers which mapped file holds the interpreter, to open it again. */
static void keep_interp_file(struct py_process *p, const struct proc_map *m)
{
	p->interp_file = *m;
	p->interp_file.path = NULL; /* p may be copied: interp_path stands in */
}

int py_process_open_interp(const struct py_process *p, struct elf_image *img)
{
	struct proc_map m = p->interp_file;

	m.path = (char *)p->interp_path;
	return target_file_elf_of_mapping(p->pid, &m, img);
}

/* The lowest mapping of the same file as m (same inode and device). */
static const struct proc_map *lowest_mapping(const struct proc_maps *maps, const struct proc_map *m)
{
	const struct proc_map *best = m;

	for (size_t i = 0; i < maps->n; i++) {
		const struct proc_map *x = &maps->v[i];

		if (x->inode == m->inode && x->dev_major == m->dev_major &&
		    x->dev_minor == m->dev_minor && x->start < best->start)
			best = x;
	}
	return best;
}

static bool looks_like_python(struct elf_image *img)
{
	uint64_t v, s;

	return elf_image_symbol(img, "Py_GetVersion", &v, &s) == 0 ||
	       elf_image_symbol(img, "_PyRuntime", &v, &s) == 0 ||
	       elf_image_section(img, ".PyRuntime", &v, &s) == 0;
}

/*
 * Finds the ELF that holds the interpreter: the executable itself (static
 * python) or a mapped libpython (python linked shared, or embedded).
 */
static int find_interpreter(struct py_process *p, const struct proc_maps *maps,
			    struct elf_image *img)
{
	char exe_path[PATH_MAX];
	const struct proc_map *exe_map = NULL, *lib_map = NULL;
	struct stat st;
	/* /proc/PID/exe, or the executable of a core file */
	int fd = target_file_open_exe(p->pid);

	if (fd >= 0 && fstat(fd, &st) == 0) {
		for (size_t i = 0; i < maps->n && !exe_map; i++)
			if (maps->v[i].inode == (uint64_t)st.st_ino &&
			    maps->v[i].dev_major == major(st.st_dev) &&
			    maps->v[i].dev_minor == minor(st.st_dev) && maps->v[i].path[0])
				exe_map = lowest_mapping(maps, &maps->v[i]);
	}
	if (!exe_map && fd >= 0)
		close(fd);
	if (exe_map && elf_image_open_fd(img, fd) == 0) {
		if (looks_like_python(img)) {
			if (proc_exe_path(p->pid, exe_path, sizeof(exe_path)) < 0)
				snprintf(exe_path, sizeof(exe_path), "%s", exe_map->path);
			snprintf(p->interp_open, sizeof(p->interp_open), "%s", exe_path);
			target_file_path_in_root(p->pid, exe_map->path, p->interp_path,
						 sizeof(p->interp_path));
			keep_interp_file(p, exe_map);
			p->load_bias = elf_image_load_bias(img, exe_map->start, exe_map->offset);
			return 0;
		}
		elf_image_close(img);
	}
	for (size_t i = 0; i < maps->n && !lib_map; i++)
		if (strncmp(proc_map_basename(&maps->v[i]), "libpython", 9) == 0)
			lib_map = lowest_mapping(maps, &maps->v[i]);
	if (!lib_map)
		return py_process_fail(p, PY_FAIL_NOT_PYTHON, "no _PyRuntime: is this a Python process?");
	if (open_mapped_file(p->pid, lib_map, img, p->interp_open, sizeof(p->interp_open)) < 0)
		return py_process_fail(p, PY_FAIL_TRANSIENT, "cannot read %s: %s", lib_map->path,
				       strerror(errno));
	if (!looks_like_python(img)) {
		elf_image_close(img);
		return py_process_fail(p, PY_FAIL_NOT_PYTHON, "no _PyRuntime: is this a Python process?");
	}
	p->interp_is_library = true;
	target_file_path_in_root(p->pid, lib_map->path, p->interp_path, sizeof(p->interp_path));
	keep_interp_file(p, lib_map);
	p->load_bias = elf_image_load_bias(img, lib_map->start, lib_map->offset);
	return 0;
}

/* Whether pid runs a Python interpreter (its executable or a libpython),
 * by the test py_process_inspect starts with. */
static bool runs_python(pid_t pid)
{
	struct py_process *q = calloc(1, sizeof(*q));
	struct proc_maps maps;
	struct elf_image img;
	bool yes = false;

	if (!q)
		return false;
	q->pid = pid;
	if (proc_maps_read(pid, &maps) == 0) {
		yes = find_interpreter(q, &maps, &img) == 0;
		if (yes)
			elf_image_close(&img);
		proc_maps_free(&maps);
	}
	free(q);
	return yes;
}

/* How many Python children a message names (PY_ERR_LEN holds them). */
#define PYTHON_CHILDREN_NAMED 4
/* How many direct children are looked at. */
#define CHILDREN_LOOKED_AT 32

void py_process_name_python_children(struct py_process *p, bool children_option)
{
	pid_t kids[CHILDREN_LOOKED_AT], py[PYTHON_CHILDREN_NAMED];
	char comm[PYTHON_CHILDREN_NAMED][32], names[160] = "", pids[64] = "";
	size_t nkids, npy = 0, used = 0, pused = 0;
	bool more = false;

	if (p->fail != PY_FAIL_NOT_PYTHON || remote_image_of(p->pid))
		return;
	nkids = proc_children(p->pid, kids, CHILDREN_LOOKED_AT);
	for (size_t i = 0; i < nkids; i++) {
		if (!runs_python(kids[i]))
			continue;
		if (npy == PYTHON_CHILDREN_NAMED) {
			more = true;
			break;
		}
		if (proc_comm(kids[i], 0, comm[npy], sizeof(comm[npy])) < 0)
			comm[npy][0] = '\0';
		py[npy++] = kids[i];
	}
	if (!npy)
		return;
	for (size_t i = 0; i < npy; i++) {
		int w = snprintf(names + used, sizeof(names) - used, "%sPID %d%s%s%s",
				 i ? ", " : "", (int)py[i], comm[i][0] ? " (" : "", comm[i],
				 comm[i][0] ? ")" : "");
		int pw = snprintf(pids + pused, sizeof(pids) - pused, "%s%d", i ? "," : "",
				  (int)py[i]);

		used += w > 0 && (size_t)w < sizeof(names) - used ? (size_t)w : 0;
		pused += pw > 0 && (size_t)pw < sizeof(pids) - pused ? (size_t)pw : 0;
	}
	py_process_fail(p, PY_FAIL_NOT_PYTHON, "%s runs no Python; its %s %s%s %s: use -p %s%s",
			p->comm[0] ? p->comm : "it", npy > 1 ? "children" : "child", names, more ? " and more" : "",
			npy > 1 ? "do" : "does", pids, children_option ? " or --children" : "");
}

struct version_scan {
	int want_minor; /* -1: any */
	struct py_version found;
	int matches;
	bool ambiguous;
};

static void scan_add(struct version_scan *scan, const struct py_version *v)
{
	if (scan->want_minor >= 0 && v->minor != scan->want_minor)
		return;
	if (scan->matches && (v->major != scan->found.major || v->minor != scan->found.minor))
		scan->ambiguous = true;
	if (!scan->matches++)
		scan->found = *v;
}

/* PY_VERSION as a string of its own in .rodata ("3.9.2"), when the
 * compiler kept it as one. */
static int scan_version_string(const char *s, size_t len, void *arg)
{
	struct py_version v;

	if (len < 5 || len > 12 || (s[0] != '3' && s[0] != '2') || s[1] != '.')
		return 0;
	if (py_version_parse(s, len, &v) == 0)
		scan_add(arg, &v);
	return 0;
}

/*
 * Py_GetVersion() formats "3.9.18 (main, ...) [GCC ...]" into a static
 * buffer in .bss when sys starts up: read it from the live process.
 */
#define BSS_SCAN_MAX (4u << 20)
static void scan_live_bss(struct py_process *p, struct elf_image *img, struct version_scan *scan)
{
	uint64_t addr, size;
	char *buf;

	if (elf_image_section(img, ".bss", &addr, &size) != 0 || size == 0 || size > BSS_SCAN_MAX)
		return;
	buf = malloc(size);
	if (!buf)
		return;
	if (remote_read(p->pid, p->load_bias + addr, buf, size) == 0) {
		for (size_t i = 0; i + 8 < size; i++) {
			struct py_version v;
			size_t n = 0;

			if ((buf[i] != '3' && buf[i] != '2') || buf[i + 1] != '.' ||
			    (i > 0 && buf[i - 1] != '\0'))
				continue;
			while (i + n < size && n < 16 && buf[i + n] != ' ' && buf[i + n])
				n++;
			if (i + n + 1 < size && buf[i + n] == ' ' && buf[i + n + 1] == '(' &&
			    py_version_parse(buf + i, n, &v) == 0)
				scan_add(scan, &v);
		}
	}
	free(buf);
}

static int detect_version(struct py_process *p, struct elf_image *img)
{
	const char *base = strrchr(p->interp_path, '/');
	int hint_major = -1, hint_minor = -1;
	bool ft_hint = false;
	uint64_t sym, size;
	uint32_t hex;

	base = base ? base + 1 : p->interp_path;
	if (py_version_from_filename(base, &hint_major, &hint_minor, &ft_hint) < 0)
		hint_minor = -1;
	p->free_threaded = ft_hint;

	/* 3.11+ export Py_Version = PY_VERSION_HEX. */
	if (elf_image_symbol(img, "Py_Version", &sym, &size) == 0 &&
	    (remote_read(p->pid, p->load_bias + sym, &hex, sizeof(hex)) == 0 ||
	     elf_image_read_vaddr(img, sym, &hex, sizeof(hex)) == 0)) {
		py_version_from_hex(hex, &p->version);
		if (p->version.major != 3 || p->version.minor < 11)
			return py_process_fail(p, PY_FAIL_UNSUPPORTED, "Py_Version says 0x%08x: not a CPython 3 version", hex);
	} else {
		struct version_scan scan = { .want_minor = hint_minor };

		scan_live_bss(p, img, &scan);
		if (!scan.matches)
			elf_image_each_string(img, ".rodata", scan_version_string, &scan);
		if (scan.ambiguous)
			return py_process_fail(p, PY_FAIL_UNSUPPORTED, "ambiguous Python version strings in %s", p->interp_path);
		if (scan.matches) {
			p->version = scan.found;
		} else if (hint_minor >= 0) {
			/* Offsets depend on major.minor only; the micro stays unknown. */
			memset(&p->version, 0, sizeof(p->version));
			p->version.major = hint_major;
			p->version.minor = hint_minor;
			p->version.micro = -1;
			p->version.level = 0xf;
		} else {
			/* the Py_GetVersion() buffer is written as it starts up */
			return py_process_fail(p, PY_FAIL_TRANSIENT,
					       "cannot determine the Python version of %s",
					       p->interp_path);
		}
	}
	py_version_format(&p->version, p->version_str, sizeof(p->version_str));
	if (hint_minor >= 0 && (hint_major != p->version.major || hint_minor != p->version.minor))
		return py_process_fail(p, PY_FAIL_UNSUPPORTED, "%s contains Python %s: file name and contents disagree",
			    p->interp_path, p->version_str);
	if (!py_version_supported(&p->version)) {
		if (p->version.major == 3 && p->version.minor > PY_MINOR_LAST_SUPPORTED)
			return py_process_fail(p, PY_FAIL_UNSUPPORTED, "unsupported Python %d.%d: newer than this pybpf-tools knows",
				    p->version.major, p->version.minor);
		return py_process_fail(p, PY_FAIL_UNSUPPORTED, "unsupported Python %d.%d", p->version.major, p->version.minor);
	}
	p->rules = py_rules_for(p->version.minor, p->free_threaded);
	if (!p->rules)
		return py_process_fail(p, PY_FAIL_UNSUPPORTED, "unsupported Python %s%s", p->version_str,
				       p->free_threaded ? " (free-threaded)" : "");
	return 0;
}

/*
 * Where the eval loop is (all of its code: see eval_fragments.h), and
 * whether the interpreter keeps frame pointers, so that a frame-pointer
 * walk of its native stacks can be trusted.
 */
static void find_eval_loop(struct py_process *p, struct elf_image *img)
{
	uint64_t value, size;

	if (elf_image_symbol(img, "_PyEval_EvalFrameDefault", &value, &size) != 0 || !size)
		return;
	p->eval_ranges = eval_fragments(img, value, size, p->eval_code, PY_EVAL_RANGES,
					&p->frame_pointers);
	for (int i = 0; i < p->eval_ranges; i++) {
		p->eval_code[i].start += p->load_bias;
		p->eval_code[i].end += p->load_bias;
	}
}

bool py_process_in_eval(const struct py_process *p, uint64_t ip)
{
	for (int i = 0; i < p->eval_ranges; i++)
		if (ip >= p->eval_code[i].start && ip < p->eval_code[i].end)
			return true;
	return false;
}

static int find_runtime(struct py_process *p, struct elf_image *img)
{
	uint64_t value, size;

	if (elf_image_symbol(img, "_PyRuntime", &value, &size) != 0 &&
	    elf_image_section(img, ".PyRuntime", &value, &size) != 0)
		return py_process_fail(p, PY_FAIL_NOT_PYTHON, "no _PyRuntime: is this a Python process?");
	p->runtime_addr = p->load_bias + value;

	static const struct {
		const char *name;
		size_t field;
	} types[] = {
		{ "PyCode_Type", offsetof(struct py_process, code_type) },
		{ "PyUnicode_Type", offsetof(struct py_process, unicode_type) },
		{ "PyBytes_Type", offsetof(struct py_process, bytes_type) },
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (elf_image_symbol(img, types[i].name, &value, &size) != 0)
			return py_process_fail(p, PY_FAIL_UNSUPPORTED, "no %s symbol in %s", types[i].name, p->interp_path);
		*(uint64_t *)((char *)p + types[i].field) = p->load_bias + value;
	}
	/* optional: only to check the offsets of a frame's function (3.11) */
	if (elf_image_symbol(img, "PyFunction_Type", &value, &size) == 0)
		p->function_type = p->load_bias + value;
	find_eval_loop(p, img);
	return 0;
}

/*
 * 3.13+: the interpreter's own table at &_PyRuntime. Its layout is known
 * per minor (offsets_debug.c); a pre-release older than the first one with
 * that layout (rules: debug_offsets_since) has another and is refused.
 */
static int offsets_from_debug(struct py_process *p, struct py_offsets *o)
{
	uint8_t raw[DEBUG_OFFSETS_MAX_BYTES];
	size_t need = debug_offsets_size(p->version.minor);
	uint64_t hex;
	bool ft;
	char err[160], since[24];
	struct py_version dv, first;
	int rc;

	if (!need)
		return py_process_fail(p, PY_FAIL_UNSUPPORTED,
				       "unsupported Python %s: no _Py_DebugOffsets layout known for 3.%d",
				       p->version_str, p->version.minor);
	rc = remote_read(p->pid, p->runtime_addr, raw, need);
	if (rc < 0)
		return py_process_read_failed(p, rc, "_Py_DebugOffsets");
	if (debug_offsets_decode(raw, need, p->version.minor, o, &hex, &ft, err, sizeof(err)) < 0)
		return py_process_fail(p, PY_FAIL_UNSUPPORTED, "no offsets for Python %s (%s)",
				       p->version_str, err);
	py_version_from_hex(hex, &dv);
	if (p->version.micro >= 0 && (uint32_t)hex != py_version_hex(&p->version))
		return py_process_fail(p, PY_FAIL_UNSUPPORTED,
				       "_Py_DebugOffsets is from 0x%08llx, Py_Version says %s",
				       (unsigned long long)hex, p->version_str);
	p->version = dv;
	py_version_format(&p->version, p->version_str, sizeof(p->version_str));
	p->free_threaded = ft;
	p->rules = py_rules_for(p->version.minor, ft);
	if (!p->rules)
		return py_process_fail(p, PY_FAIL_UNSUPPORTED, "unsupported Python %s%s",
				       p->version_str, ft ? " (free-threaded)" : "");
	if (!py_rules_debug_layout_valid(p->rules, (uint32_t)hex)) {
		py_version_from_hex(p->rules->debug_offsets_since, &first);
		py_version_format(&first, since, sizeof(since));
		return py_process_fail(p, PY_FAIL_UNSUPPORTED,
				       "unsupported Python %s: pre-releases of 3.%d before %s have "
				       "another _Py_DebugOffsets layout than the one this "
				       "pybpf-tools knows",
				       p->version_str, p->version.minor, since);
	}
	return 0;
}

/* A debug file of the interpreter at path in the process's root (never
 * in ours on its behalf) that carries DWARF: its descriptor, or -1. */
static int open_dwarf_file(pid_t pid, const char *path)
{
	struct elf_image img;
	int fd = target_file_open(pid, path, NULL), dup_fd;
	bool ok;

	if (fd < 0)
		return -1;
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0 || elf_image_open_fd(&img, dup_fd) < 0) {
		close(fd);
		return -1;
	}
	ok = elf_image_has_dwarf(&img);
	elf_image_close(&img);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Finds DWARF for the interpreter: in the file, by build id, by
 * debuglink. Returns a descriptor of the file (out names it), or -1. */
static int find_dwarf_file(struct py_process *p, struct elf_image *img, char *out, size_t len)
{
	char build_id[128], link[256], dir[PATH_MAX];
	const char *fmts[] = { "/usr/lib/debug%s/%s", "%s/%s", "%s/.debug/%s" };
	char *slash;
	int fd;

	if (elf_image_has_dwarf(img)) {
		snprintf(out, len, "%s", p->interp_open);
		return fcntl(img->fd, F_DUPFD_CLOEXEC, 0);
	}
	snprintf(dir, sizeof(dir), "%s", p->interp_path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (elf_image_build_id(img, build_id, sizeof(build_id)) == 0 && strlen(build_id) > 2) {
		snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id, build_id + 2);
		if ((fd = open_dwarf_file(p->pid, out)) >= 0)
			return fd;
	}
	if (elf_image_debuglink(img, link, sizeof(link)) == 0) {
		for (size_t i = 0; i < 3; i++) {
			snprintf(out, len, fmts[i], dir, link);
			if ((fd = open_dwarf_file(p->pid, out)) >= 0)
				return fd;
		}
	}
	return -1;
}

static int offsets_from_dwarf(struct py_process *p, struct elf_image *img, struct py_offsets *o,
			      char *path, size_t len)
{
	const char *missing;
	int n, fd;

	if (p->rules->has_debug_offsets)
		return -1; /* they publish their own offsets */
	fd = find_dwarf_file(p, img, path, len);
	if (fd < 0)
		return -1;
	py_offsets_clear(o);
	n = dwarf_offsets_resolve_fd(fd, p->version.minor, o);
	close(fd);
	if (n <= 0) {
		py_process_note(p, "DWARF in %s is unreadable", path);
		return -1;
	}
	missing = py_offsets_missing(o, p->version.minor);
	if (missing) {
		py_process_note(p, "DWARF in %s lacks %s", path, missing);
		return -1;
	}
	return 0;
}

/* 3.8-3.10 store pthread_self(); the kernel tid lives inside glibc's struct
 * pthread, at an offset glibc itself publishes for debuggers. */
static void find_pthread_tid_offset(struct py_process *p, const struct proc_maps *maps)
{
	p->pthread_tid_offset = 0x2d0; /* glibc x86_64; validated later */
	for (size_t i = 0; i < maps->n; i++) {
		const char *base = proc_map_basename(&maps->v[i]);
		struct elf_image libc;
		char opened[PATH_MAX];
		uint64_t sym, size;
		uint32_t desc[3];

		if (strncmp(base, "libc.so", 7) != 0 && strncmp(base, "libc-2.", 7) != 0)
			continue;
		if (open_mapped_file(p->pid, lowest_mapping(maps, &maps->v[i]), &libc, opened,
				     sizeof(opened)) < 0)
			continue;
		if (elf_image_symbol(&libc, "_thread_db_pthread_tid", &sym, &size) == 0 &&
		    elf_image_read_vaddr(&libc, sym, desc, sizeof(desc)) == 0 && desc[0] == 32 &&
		    desc[2] < 4096)
			p->pthread_tid_offset = (int32_t)desc[2];
		elf_image_close(&libc);
		return;
	}
}

/*
 * DWARF describes this very binary, the table the headers of its version:
 * where both name a field they must agree. When they do not, one of them
 * does not fit this build, and validation would not catch every field
 * (a wrong co_firstlineno shifts every line number and nothing else).
 */
static int cross_check(struct py_process *p, const struct py_offsets *dwarf,
		       const struct py_offsets *table, const char *dwarf_path)
{
	int32_t dv, tv;
	const char *field = py_offsets_disagreement(dwarf, table, &dv, &tv);

	if (!field)
		return 0;
	return py_process_fail(p, PY_FAIL_UNSUPPORTED,
			       "its DWARF and the built-in 3.%d table disagree on %s (%d against "
			       "%d): this build cannot be read safely (DWARF from %s)",
			       p->version.minor, field, (int)dv, (int)tv, dwarf_path);
}

/* The offset sets worth validating, best first: those of the process's
 * memory, else those of the file (known already when known is given). */
static int candidate_offsets(struct py_process *p, struct elf_image *img,
			     const struct interp_facts *known, struct py_offsets_candidates *c)
{
	char dwarf_path[PATH_MAX + 128];

	c->n = 0;
	if (p->rules->has_debug_offsets) {
		if (offsets_from_debug(p, &c->v[c->n].off) < 0)
			return -1;
		c->v[c->n++].src = PY_OFFSETS_DEBUG;
		return 0;
	}
	if (known) {
		/* checked against each other when they were read */
		for (int i = 0; i < known->noffsets; i++) {
			c->v[c->n].src = known->offsets_src[i];
			c->v[c->n++].off = known->offsets[i];
		}
		return 0;
	}
	if (offsets_from_dwarf(p, img, &c->v[c->n].off, dwarf_path, sizeof(dwarf_path)) == 0)
		c->v[c->n++].src = PY_OFFSETS_DWARF;
	if (py_offsets_builtin_table(p->version.minor, &c->v[c->n].off) == 0) {
		c->v[c->n].src = PY_OFFSETS_TABLE;
		if (c->n && cross_check(p, &c->v[0].off, &c->v[c->n].off, dwarf_path) < 0)
			return -1;
		c->n++;
	}
	if (!c->n)
		return py_process_fail(p, PY_FAIL_UNSUPPORTED, "no offsets for Python %s (%s)",
				       p->version_str, p->notes);
	return 0;
}

/* The file's facts, kept for the next process of the same binary
 * (cpython/interp_cache.h): as linked, and the offsets of the file. */
static void remember_file(const struct py_process *p, struct elf_image *img,
			  const struct py_offsets_candidates *c)
{
	struct interp_facts *f = calloc(1, sizeof(*f));

	_Static_assert(INTERP_EVAL_RANGES == PY_EVAL_RANGES, "eval ranges of a file and a process");
	if (!f)
		return;
	f->version = p->version;
	memcpy(f->version_str, p->version_str, sizeof(f->version_str));
	f->free_threaded = p->free_threaded;
	f->rules = p->rules;
	f->runtime = p->runtime_addr - p->load_bias;
	f->code_type = p->code_type - p->load_bias;
	f->unicode_type = p->unicode_type - p->load_bias;
	f->bytes_type = p->bytes_type - p->load_bias;
	f->function_type = p->function_type ? p->function_type - p->load_bias : 0;
	for (int i = 0; i < p->eval_ranges && i < INTERP_EVAL_RANGES; i++) {
		f->eval_code[i].start = p->eval_code[i].start - p->load_bias;
		f->eval_code[i].end = p->eval_code[i].end - p->load_bias;
		f->eval_ranges++;
	}
	f->frame_pointers = p->frame_pointers;
	/* _Py_DebugOffsets are read from each process's memory, not kept */
	for (int i = 0; !p->rules->has_debug_offsets && i < c->n && i < INTERP_FILE_OFFSETS; i++) {
		f->offsets_src[i] = c->v[i].src;
		f->offsets[i] = c->v[i].off;
		f->noffsets++;
	}
	memcpy(f->notes, p->notes, sizeof(f->notes));
	interp_cache_add(img, f);
	free(f);
}

/* What the file says, from an earlier process of the same binary. */
static void apply_known_file(struct py_process *p, const struct interp_facts *f)
{
	p->version = f->version;
	memcpy(p->version_str, f->version_str, sizeof(p->version_str));
	p->free_threaded = f->free_threaded;
	p->rules = f->rules;
	p->runtime_addr = p->load_bias + f->runtime;
	p->code_type = p->load_bias + f->code_type;
	p->unicode_type = p->load_bias + f->unicode_type;
	p->bytes_type = p->load_bias + f->bytes_type;
	p->function_type = f->function_type ? p->load_bias + f->function_type : 0;
	p->eval_ranges = f->eval_ranges;
	for (int i = 0; i < f->eval_ranges; i++) {
		p->eval_code[i].start = p->load_bias + f->eval_code[i].start;
		p->eval_code[i].end = p->load_bias + f->eval_code[i].end;
	}
	p->frame_pointers = f->frame_pointers;
	memcpy(p->notes, f->notes, sizeof(p->notes));
}

int py_process_inspect(struct py_process *p, pid_t pid, struct py_offsets_candidates *c)
{
	struct proc_maps maps;
	struct elf_image img;
	int rc;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	py_offsets_clear(&p->off);
	if (pid <= 0 || !proc_exists(pid))
		return py_process_fail(p, PY_FAIL_GONE, "no such process");
	rc = proc_maps_read(pid, &maps);
	if (rc == -ESRCH && proc_is_kernel_thread(pid))
		return py_process_fail(p, PY_FAIL_NOT_PYTHON, "a kernel thread, not a Python process");
	if (rc == -ESRCH)
		return py_process_fail(p, PY_FAIL_GONE, "no such process");
	if (rc < 0) {
		char what[48];

		snprintf(what, sizeof(what), "/proc/%d/maps", (int)pid);
		return py_process_read_failed(p, rc, what);
	}
	if (proc_ns_pid(pid, &p->ns_pid) < 0)
		p->ns_pid = pid;
	proc_comm(pid, 0, p->comm, sizeof(p->comm));
	rc = find_interpreter(p, &maps, &img);
	if (rc == 0) {
		/* a binary read before: what its file says is known */
		const struct interp_facts *known = interp_cache_find(&img);

		if (known) {
			apply_known_file(p, known);
		} else {
			rc = detect_version(p, &img);
			if (rc == 0)
				rc = find_runtime(p, &img);
		}
		if (rc == 0) {
			if (p->rules->thread_id == PY_TID_FROM_PTHREAD)
				find_pthread_tid_offset(p, &maps);
			rc = candidate_offsets(p, &img, known, c);
		}
		if (rc == 0 && !known)
			remember_file(p, &img, c);
		elf_image_close(&img);
	}
	proc_maps_free(&maps);
	if (rc < 0 && !proc_exists(pid))
		return py_process_fail(p, PY_FAIL_GONE, "no such process (it exited while being read)");
	return rc;
}
