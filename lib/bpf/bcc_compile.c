/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/bcc_compile.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* libbcc's module API (bcc/bcc_common.h), resolved at run time. */
struct bcc_api {
	void *(*create)(const char *text, unsigned flags, const char *cflags[], int ncflags,
			bool allow_rlimit, const char *dev_name);
	void (*destroy)(void *mod);
	char *(*license)(void *mod);
	unsigned (*kern_version)(void *mod);
	size_t (*num_functions)(void *mod);
	const char *(*function_name)(void *mod, size_t id);
	void *(*function_start_id)(void *mod, size_t id);
	size_t (*function_size_id)(void *mod, size_t id);
	size_t (*num_tables)(void *mod);
	const char *(*table_name)(void *mod, size_t id);
	int (*table_fd_id)(void *mod, size_t id);
	int (*table_type_id)(void *mod, size_t id);
	size_t (*table_max_entries_id)(void *mod, size_t id);
	int (*table_flags_id)(void *mod, size_t id);
	size_t (*table_key_size_id)(void *mod, size_t id);
	size_t (*table_leaf_size_id)(void *mod, size_t id);
};

static int load_api(struct bcc_api *api, char *err, size_t errlen)
{
	/* PYBPF_LIBBCC: another libbcc (tests, odd installs) */
	const char *name = getenv("PYBPF_LIBBCC") ? getenv("PYBPF_LIBBCC") : "libbcc.so.0";
	/* its own symbols first: libbcc_bpf (linked) defines many of them too */
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	struct {
		void **slot;
		const char *sym;
	} syms[] = {
		{ (void **)&api->create, "bpf_module_create_c_from_string" },
		{ (void **)&api->destroy, "bpf_module_destroy" },
		{ (void **)&api->license, "bpf_module_license" },
		{ (void **)&api->kern_version, "bpf_module_kern_version" },
		{ (void **)&api->num_functions, "bpf_num_functions" },
		{ (void **)&api->function_name, "bpf_function_name" },
		{ (void **)&api->function_start_id, "bpf_function_start_id" },
		{ (void **)&api->function_size_id, "bpf_function_size_id" },
		{ (void **)&api->num_tables, "bpf_num_tables" },
		{ (void **)&api->table_name, "bpf_table_name" },
		{ (void **)&api->table_fd_id, "bpf_table_fd_id" },
		{ (void **)&api->table_type_id, "bpf_table_type_id" },
		{ (void **)&api->table_max_entries_id, "bpf_table_max_entries_id" },
		{ (void **)&api->table_flags_id, "bpf_table_flags_id" },
		{ (void **)&api->table_key_size_id, "bpf_table_key_size_id" },
		{ (void **)&api->table_leaf_size_id, "bpf_table_leaf_size_id" },
	};

	if (!h) {
		snprintf(err, errlen, "cannot load %s to compile the BPF programs: %s", name,
			 dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(h, syms[i].sym);
		if (!*syms[i].slot) {
			snprintf(err, errlen, "%s has no %s", name, syms[i].sym);
			return -1;
		}
	}
	return 0;
}

/* Copies what the module compiled into img, map fds turned into indices. */
static int extract(const struct bcc_api *api, void *mod, struct bpf_image *img, char *err,
		   size_t errlen)
{
	size_t ntables = api->num_tables(mod), nfuncs = api->num_functions(mod);
	int fds[BPF_IMAGE_MAX_TABLES];
	const char *license = api->license(mod);

	if (ntables > BPF_IMAGE_MAX_TABLES || nfuncs > BPF_IMAGE_MAX_FUNCS) {
		snprintf(err, errlen, "too many BPF maps (%zu) or functions (%zu)", ntables, nfuncs);
		return -1;
	}
	img->kern_version = api->kern_version(mod);
	snprintf(img->license, sizeof(img->license), "%s", license ? license : "GPL");
	img->tables = calloc(ntables ? ntables : 1, sizeof(*img->tables));
	img->funcs = calloc(nfuncs ? nfuncs : 1, sizeof(*img->funcs));
	if (!img->tables || !img->funcs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < ntables; i++) {
		struct bpf_image_table *t = &img->tables[img->ntables++];

		snprintf(t->name, sizeof(t->name), "%s", api->table_name(mod, i));
		t->type = (uint32_t)api->table_type_id(mod, i);
		t->key_size = (uint32_t)api->table_key_size_id(mod, i);
		t->leaf_size = (uint32_t)api->table_leaf_size_id(mod, i);
		t->max_entries = (uint32_t)api->table_max_entries_id(mod, i);
		t->flags = (uint32_t)api->table_flags_id(mod, i);
		t->fd = -1; /* the module's maps go with it */
		fds[i] = api->table_fd_id(mod, i);
	}
	for (size_t i = 0; i < nfuncs; i++) {
		struct bpf_image_func *f = &img->funcs[img->nfuncs];
		size_t bytes = api->function_size_id(mod, i);
		const void *start = api->function_start_id(mod, i);

		if (!start || !bytes || bytes % sizeof(struct bpf_insn) ||
		    bytes / sizeof(struct bpf_insn) > BPF_IMAGE_MAX_INSNS) {
			snprintf(err, errlen, "BPF function %s has no usable code",
				 api->function_name(mod, i));
			return -1;
		}
		snprintf(f->name, sizeof(f->name), "%s", api->function_name(mod, i));
		f->ninsns = (uint32_t)(bytes / sizeof(struct bpf_insn));
		f->insns = malloc(bytes);
		if (!f->insns) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memcpy(f->insns, start, bytes);
		img->nfuncs++;
		if (bpf_image_index_maps(f->insns, f->ninsns, fds, (uint32_t)ntables, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* In the child: compile, write the serialized image (or an error) to fd. */
static int compile_in_child(const char *text, const char *const *cflags, int ncflags, int fd)
{
	struct bcc_api api;
	struct bpf_image img = { 0 };
	char err[512] = "";
	uint8_t *data = NULL;
	size_t len = 0;
	uint8_t ok = 0;
	void *mod;

	if (load_api(&api, err, sizeof(err)) == 0) {
		mod = api.create(text, 0, (const char **)cflags, ncflags, true, NULL);
		if (!mod)
			snprintf(err, sizeof(err), "the BPF program failed to compile (see above)");
		else if (extract(&api, mod, &img, err, sizeof(err)) == 0 &&
			 bpf_image_serialize(&img, &data, &len) == 0)
			ok = 1;
	}
	fflush(stdout);
	fflush(stderr);
	if (write(fd, &ok, 1) != 1)
		return 1;
	if (!ok)
		return write(fd, err, strlen(err)) < 0;
	for (size_t at = 0; at < len;) {
		ssize_t w = write(fd, data + at, len - at);

		if (w <= 0)
			return 1;
		at += (size_t)w;
	}
	return 0;
}

static uint8_t *read_to_end(int fd, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap);

	while (buf) {
		ssize_t r;

		if (n == cap) {
			uint8_t *v = realloc(buf, cap * 2);

			if (!v)
				break;
			buf = v;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

/*
 * libbcc.so is not loaded into this process: it holds a second copy of
 * what the linked libbcc_bpf holds (their C++ globals would be destroyed
 * twice at exit), and its compiler leaves 100 MB behind. A child loads it,
 * compiles, hands the serialized image back through a pipe and exits
 * without running destructors.
 */
int bcc_compile_image(const char *text, const char *const *cflags, int ncflags,
		      struct bpf_image *img, char *err, size_t errlen)
{
	int pipefd[2], status = 0;
	uint8_t *data;
	size_t len = 0;
	pid_t child;

	memset(img, 0, sizeof(*img));
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL); /* nothing buffered written twice */
	child = fork();
	if (child < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (child == 0) {
		close(pipefd[0]);
		_exit(compile_in_child(text, cflags, ncflags, pipefd[1]));
	}
	close(pipefd[1]);
	data = read_to_end(pipefd[0], &len);
	close(pipefd[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (!data || len < 1 || !data[0]) {
		if (data && len > 1)
			snprintf(err, errlen, "%.*s", (int)(len - 1), (const char *)data + 1);
		else if (WIFSIGNALED(status))
			snprintf(err, errlen, "the BPF compiler died (signal %d)", WTERMSIG(status));
		else
			snprintf(err, errlen, "the BPF program failed to compile (see above)");
		free(data);
		return -1;
	}
	if (bpf_image_parse(img, data + 1, len - 1, err, errlen) < 0) {
		free(data);
		return -1;
	}
	free(data);
	return 0;
}
