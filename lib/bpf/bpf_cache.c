/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/bpf_cache.h"

#include <bcc/libbpf.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_DIR "/var/cache/pybpf-tools/bpf"
#define MAX_ENTRY_BYTES (64u << 20)
#define KEY_HEADER "pybpf-tools BPF image key 1\n"

/* ---- the key ---------------------------------------------------------- */

struct buf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void add(struct buf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		char *v;

		while (cap < b->len + n + 1)
			cap *= 2;
		v = realloc(b->p, cap);
		if (!v) {
			b->failed = true;
			return;
		}
		b->p = v;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(struct buf *b, const char *fmt, ...)
{
	char line[640];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	add(b, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* A file's identity: what changes when a package replaces it. */
static void add_file_id(struct buf *b, const char *what, const char *path)
{
	struct stat st;

	if (path && stat(path, &st) == 0)
		addf(b, "%s: %s %llu:%llu %lld %lld.%09ld\n", what, path,
		     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		     (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	else
		addf(b, "%s: none\n", what);
}

static void add_file_text(struct buf *b, const char *what, const char *path)
{
	char text[256] = "";
	FILE *f = fopen(path, "re");

	if (f) {
		size_t n = fread(text, 1, sizeof(text) - 1, f);

		text[n] = '\0';
		fclose(f);
	}
	text[strcspn(text, "\n")] = '\0';
	addf(b, "%s: %s\n", what, text);
}

/* The kernel headers libbcc compiles against (as bpfmod_environment_check
 * finds them). */
static void add_headers(struct buf *b, const char *release)
{
	const char *env = getenv("BCC_KERNEL_SOURCE");
	char path[512];
	const char *dirs[] = { "build", "source" };

	if (env && *env) {
		snprintf(path, sizeof(path), "%s/include/linux/kconfig.h", env);
		add_file_id(b, "headers", path);
		return;
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/lib/modules/%s/%s/include/linux/kconfig.h", release,
			 dirs[i]);
		if (access(path, F_OK) == 0) {
			add_file_id(b, "headers", path);
			return;
		}
	}
	add_file_id(b, "headers", "/sys/kernel/kheaders.tar.xz");
}

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
	return h;
}

int bpf_cache_key(struct bpf_cache_key *k, const char *text, const char *const *cflags,
		  int ncflags)
{
	struct buf b = { 0 };
	struct utsname u;
	Dl_info dl;

	memset(k, 0, sizeof(*k));
	uname(&u);
	add(&b, KEY_HEADER, strlen(KEY_HEADER));
	addf(&b, "kernel: %s %s %s\n", u.release, u.version, u.machine);
	add_headers(&b, u.release);
	/* libbcc is one package: the part we link stands for the compiler */
	add_file_id(&b, "libbcc", dladdr((void *)bcc_create_map, &dl) ? dl.dli_fname : NULL);
	add_file_id(&b, "libbcc.so", getenv("PYBPF_LIBBCC"));
	add_file_text(&b, "cpus", "/sys/devices/system/cpu/possible");
	for (int i = 0; i < ncflags; i++)
		addf(&b, "cflag: %s\n", cflags[i]);
	addf(&b, "text: %zu\n", strlen(text));
	add(&b, text, strlen(text));
	if (b.failed) {
		free(b.p);
		return -1;
	}
	k->blob = b.p;
	k->len = b.len;
	k->hash = (unsigned long long)fnv1a(b.p, b.len);
	return 0;
}

void bpf_cache_key_free(struct bpf_cache_key *k)
{
	free(k->blob);
	memset(k, 0, sizeof(*k));
}

/* ---- the directory ---------------------------------------------------- */

static bool owned_and_private(const struct stat *st)
{
	return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The cache directory, made if missing; NULL (note says why) if it must
 * not be used. */
static const char *cache_dir(bool create, char *note, size_t len)
{
	const char *dir = getenv("PYBPF_BPF_CACHE");
	static char parent[512];
	struct stat st;
	char *slash;

	if (!dir || !*dir)
		dir = DEFAULT_DIR;
	if (strcmp(dir, "off") == 0) {
		snprintf(note, len, "the BPF cache is off (PYBPF_BPF_CACHE=off)");
		return NULL;
	}
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (create && lstat(dir, &st) < 0 && errno == ENOENT) {
		/* the parent too (mode 0755, like /var/cache's own) */
		if (lstat(parent, &st) < 0 && errno == ENOENT)
			mkdir(parent, 0755);
		mkdir(dir, 0700);
	}
	if (lstat(parent, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(note, len, "BPF cache not used: %s is missing or writable by others",
			 parent);
		return NULL;
	}
	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT)
			snprintf(note, len, "BPF cache not used: %s: %s", dir, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode) || !owned_and_private(&st)) {
		snprintf(note, len,
			 "BPF cache not used: %s is not a directory of this user that only it can "
			 "write",
			 dir);
		return NULL;
	}
	return dir;
}

static bool read_all(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

static void entry_path(const char *dir, const struct bpf_cache_key *k, char *path, size_t len)
{
	snprintf(path, len, "%s/%016llx.img", dir, k->hash);
}

int bpf_cache_get(const struct bpf_cache_key *k, struct bpf_image *img, char *note, size_t len)
{
	const char *dir = cache_dir(false, note, len);
	char path[600], err[160];
	struct stat st;
	uint8_t *data;
	uint32_t klen;
	int fd, rc = 0;

	if (!dir)
		return -1;
	entry_path(dir, k, path, sizeof(path));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !owned_and_private(&st) ||
	    st.st_size < 4 || (uint64_t)st.st_size > MAX_ENTRY_BYTES) {
		snprintf(note, len, "BPF cache entry %s not used (not a private file of this user)",
			 path);
		close(fd);
		return 0;
	}
	data = malloc((size_t)st.st_size);
	if (!data || !read_all(fd, data, (size_t)st.st_size)) {
		free(data);
		close(fd);
		return 0;
	}
	close(fd);
	memcpy(&klen, data, 4);
	/* the whole key, byte for byte: anything else is a miss */
	if (klen == k->len && klen <= (uint64_t)st.st_size - 4 &&
	    memcmp(data + 4, k->blob, klen) == 0) {
		if (bpf_image_parse(img, data + 4 + klen, (size_t)st.st_size - 4 - klen, err,
				    sizeof(err)) == 0)
			rc = 1;
		else
			snprintf(note, len, "BPF cache entry %s not used: %s", path, err);
	}
	free(data);
	return rc;
}

/* Keeps at most BPF_CACHE_MAX_ENTRIES entries: the oldest go. */
static void prune(const char *dir)
{
	for (;;) {
		DIR *d = opendir(dir);
		struct dirent *e;
		char oldest[300] = "", path[600];
		time_t oldest_t = 0;
		int n = 0;

		if (!d)
			return;
		while ((e = readdir(d))) {
			struct stat st;
			size_t l = strlen(e->d_name);

			if (l < 5 || strcmp(e->d_name + l - 4, ".img") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (lstat(path, &st) < 0)
				continue;
			n++;
			if (!oldest[0] || st.st_mtime < oldest_t) {
				oldest_t = st.st_mtime;
				snprintf(oldest, sizeof(oldest), "%s", e->d_name);
			}
		}
		closedir(d);
		if (n <= BPF_CACHE_MAX_ENTRIES || !oldest[0])
			return;
		snprintf(path, sizeof(path), "%s/%s", dir, oldest);
		if (unlink(path) < 0)
			return;
	}
}

int bpf_cache_put(const struct bpf_cache_key *k, const struct bpf_image *img, char *note,
		  size_t len)
{
	const char *dir = cache_dir(true, note, len);
	char path[600], tmp[640];
	uint8_t *data = NULL;
	size_t n;
	uint32_t klen = (uint32_t)k->len;
	int fd;
	bool ok;

	if (!dir || bpf_image_serialize(img, &data, &n) < 0)
		return -1;
	entry_path(dir, k, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(note, len, "cannot write to the BPF cache %s: %s", dir, strerror(errno));
		free(data);
		return -1;
	}
	ok = fchmod(fd, 0600) == 0 && write(fd, &klen, 4) == 4 &&
	     write(fd, k->blob, k->len) == (ssize_t)k->len && write(fd, data, n) == (ssize_t)n;
	ok = close(fd) == 0 && ok;
	free(data);
	if (!ok || rename(tmp, path) < 0) {
		snprintf(note, len, "cannot write to the BPF cache %s: %s", dir, strerror(errno));
		unlink(tmp);
		return -1;
	}
	prune(dir);
	return 0;
}
