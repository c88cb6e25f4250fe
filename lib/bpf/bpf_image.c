/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/bpf_image.h"

#include <bcc/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "PYBPFIMG"
#define FORMAT_VERSION 1
#define LD_IMM64 (BPF_LD | BPF_DW | BPF_IMM)

void bpf_image_free(struct bpf_image *img)
{
	for (uint32_t i = 0; i < img->ntables; i++)
		if (img->tables[i].fd >= 0)
			close(img->tables[i].fd);
	for (uint32_t i = 0; i < img->nfuncs; i++)
		free(img->funcs[i].insns);
	free(img->tables);
	free(img->funcs);
	memset(img, 0, sizeof(*img));
}

int bpf_image_index_maps(struct bpf_insn *insns, uint32_t ninsns, const int *fds, uint32_t nfds,
			 char *err, size_t errlen)
{
	for (uint32_t i = 0; i < ninsns; i++) {
		struct bpf_insn *in = &insns[i];

		if (in->code != LD_IMM64)
			continue;
		if (i + 1 >= ninsns) {
			snprintf(err, errlen, "64-bit load at the end of the program");
			return -1;
		}
		if (in->src_reg == BPF_PSEUDO_MAP_FD) {
			if (fds) {
				uint32_t k = 0;

				while (k < nfds && fds[k] != in->imm)
					k++;
				if (k == nfds) {
					snprintf(err, errlen, "instruction %u uses map fd %d, not one of the program's",
						 i, in->imm);
					return -1;
				}
				in->imm = (int32_t)k;
			}
		} else if (in->src_reg != 0) {
			snprintf(err, errlen, "instruction %u: a kind of 64-bit load images do not hold (%u)",
				 i, in->src_reg);
			return -1;
		}
		i++; /* the second half of the load */
	}
	return 0;
}

/* ---- serialized form ------------------------------------------------- */

struct writer {
	uint8_t *p;
	size_t len, cap;
	bool failed;
};

static void put(struct writer *w, const void *data, size_t len)
{
	if (w->failed)
		return;
	if (w->len + len > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		uint8_t *v;

		while (cap < w->len + len)
			cap *= 2;
		v = realloc(w->p, cap);
		if (!v) {
			w->failed = true;
			return;
		}
		w->p = v;
		w->cap = cap;
	}
	memcpy(w->p + w->len, data, len);
	w->len += len;
}

static void put_u32(struct writer *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	put(w, b, 4);
}

static void put_str(struct writer *w, const char *s)
{
	size_t n = strlen(s);
	uint8_t b[2] = { (uint8_t)n, (uint8_t)(n >> 8) };

	put(w, b, 2);
	put(w, s, n);
}

int bpf_image_serialize(const struct bpf_image *img, uint8_t **out, size_t *len)
{
	struct writer w = { 0 };

	put(&w, MAGIC, 8);
	put_u32(&w, FORMAT_VERSION);
	put_u32(&w, img->kern_version);
	put_str(&w, img->license);
	put_u32(&w, img->ntables);
	for (uint32_t i = 0; i < img->ntables; i++) {
		const struct bpf_image_table *t = &img->tables[i];

		put_str(&w, t->name);
		put_u32(&w, t->type);
		put_u32(&w, t->key_size);
		put_u32(&w, t->leaf_size);
		put_u32(&w, t->max_entries);
		put_u32(&w, t->flags);
	}
	put_u32(&w, img->nfuncs);
	for (uint32_t i = 0; i < img->nfuncs; i++) {
		put_str(&w, img->funcs[i].name);
		put_u32(&w, img->funcs[i].ninsns);
		put(&w, img->funcs[i].insns, (size_t)img->funcs[i].ninsns * sizeof(struct bpf_insn));
	}
	if (w.failed) {
		free(w.p);
		return -1;
	}
	*out = w.p;
	*len = w.len;
	return 0;
}

struct reader {
	const uint8_t *p;
	size_t n;
	bool failed;
};

static void get(struct reader *r, void *out, size_t len)
{
	if (r->failed || r->n < len) {
		r->failed = true;
		memset(out, 0, len);
		return;
	}
	memcpy(out, r->p, len);
	r->p += len;
	r->n -= len;
}

static uint32_t get_u32(struct reader *r)
{
	uint8_t b[4];

	get(r, b, 4);
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A name of at most size - 1 bytes, no NUL inside. */
static void get_str(struct reader *r, char *out, size_t size)
{
	uint8_t b[2];
	size_t n;

	get(r, b, 2);
	n = (size_t)b[0] | (size_t)b[1] << 8;
	if (n >= size) {
		r->failed = true;
		n = 0;
	}
	get(r, out, n);
	out[n] = '\0';
	if (strlen(out) != n)
		r->failed = true;
}

int bpf_image_parse(struct bpf_image *img, const uint8_t *data, size_t len, char *err,
		    size_t errlen)
{
	struct reader r = { data, len, false };
	char magic[8];
	uint32_t n;

	memset(img, 0, sizeof(*img));
	get(&r, magic, 8);
	if (r.failed || memcmp(magic, MAGIC, 8) != 0 || get_u32(&r) != FORMAT_VERSION) {
		snprintf(err, errlen, "not a BPF image of this version");
		return -1;
	}
	img->kern_version = get_u32(&r);
	get_str(&r, img->license, sizeof(img->license));
	n = get_u32(&r);
	if (r.failed || n > BPF_IMAGE_MAX_TABLES)
		goto bad;
	img->tables = calloc(n ? n : 1, sizeof(*img->tables));
	if (!img->tables)
		goto bad;
	img->ntables = n; /* counts set once their arrays exist (bpf_image_free) */
	for (uint32_t i = 0; i < img->ntables; i++)
		img->tables[i].fd = -1;
	for (uint32_t i = 0; i < img->ntables && !r.failed; i++) {
		struct bpf_image_table *t = &img->tables[i];

		get_str(&r, t->name, sizeof(t->name));
		t->type = get_u32(&r);
		t->key_size = get_u32(&r);
		t->leaf_size = get_u32(&r);
		t->max_entries = get_u32(&r);
		t->flags = get_u32(&r);
	}
	n = get_u32(&r);
	if (r.failed || n > BPF_IMAGE_MAX_FUNCS)
		goto bad;
	img->funcs = calloc(n ? n : 1, sizeof(*img->funcs));
	if (!img->funcs)
		goto bad;
	img->nfuncs = n;
	for (uint32_t i = 0; i < img->nfuncs && !r.failed; i++) {
		struct bpf_image_func *f = &img->funcs[i];
		size_t bytes;

		get_str(&r, f->name, sizeof(f->name));
		f->ninsns = get_u32(&r);
		if (r.failed || f->ninsns == 0 || f->ninsns > BPF_IMAGE_MAX_INSNS)
			goto bad;
		bytes = (size_t)f->ninsns * sizeof(struct bpf_insn);
		if (bytes > r.n)
			goto bad;
		f->insns = malloc(bytes);
		if (!f->insns)
			goto bad;
		get(&r, f->insns, bytes);
		/* every map reference an index of this image */
		if (bpf_image_index_maps(f->insns, f->ninsns, NULL, 0, err, errlen) < 0)
			goto bad_insns;
		for (uint32_t k = 0; k < f->ninsns; k++)
			if (f->insns[k].code == LD_IMM64 && f->insns[k].src_reg == BPF_PSEUDO_MAP_FD &&
			    (f->insns[k].imm < 0 || (uint32_t)f->insns[k].imm >= img->ntables)) {
				snprintf(err, errlen, "instruction %u names map %d of %u", k,
					 f->insns[k].imm, img->ntables);
				goto bad_insns;
			}
	}
	if (r.failed || r.n != 0)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "truncated or inconsistent BPF image");
bad_insns:
	bpf_image_free(img);
	return -1;
}

/* ---- into the kernel ------------------------------------------------- */

int bpf_image_create_maps(struct bpf_image *img, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < img->ntables; i++) {
		struct bpf_image_table *t = &img->tables[i];
		struct bcc_create_map_attr attr = {
			.name = t->name,
			.map_type = (enum bpf_map_type)t->type,
			.map_flags = t->flags,
			.key_size = t->key_size,
			.value_size = t->leaf_size,
			.max_entries = t->max_entries,
		};

		t->fd = bcc_create_map_xattr(&attr, true);
		if (t->fd < 0) {
			snprintf(err, errlen, "cannot create BPF map %s: %s", t->name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int bpf_image_table_fd(const struct bpf_image *img, const char *name)
{
	for (uint32_t i = 0; i < img->ntables; i++)
		if (strcmp(img->tables[i].name, name) == 0)
			return img->tables[i].fd;
	return -1;
}

struct bpf_insn *bpf_image_relocate(const struct bpf_image *img, const char *fn,
				    uint32_t *ninsns, char *err, size_t errlen)
{
	const struct bpf_image_func *f = NULL;
	struct bpf_insn *v;

	for (uint32_t i = 0; i < img->nfuncs && !f; i++)
		if (strcmp(img->funcs[i].name, fn) == 0)
			f = &img->funcs[i];
	if (!f) {
		snprintf(err, errlen, "no BPF function %s", fn);
		return NULL;
	}
	v = malloc((size_t)f->ninsns * sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memcpy(v, f->insns, (size_t)f->ninsns * sizeof(*v));
	for (uint32_t k = 0; k + 1 < f->ninsns; k++) {
		if (v[k].code != LD_IMM64)
			continue;
		if (v[k].src_reg == BPF_PSEUDO_MAP_FD) {
			/* checked by parse or compile: an index of this image */
			int fd = img->tables[v[k].imm].fd;

			if (fd < 0) {
				snprintf(err, errlen, "map %s not created", img->tables[v[k].imm].name);
				free(v);
				return NULL;
			}
			v[k].imm = fd;
		}
		k++;
	}
	*ninsns = f->ninsns;
	return v;
}
