/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A compiled BPF program set, apart from the compiler: its maps (name,
 * type, sizes, flags) and its functions' instructions, in which each map
 * reference names the map by its index instead of a file descriptor. One
 * compile by libbcc (bpf/bcc_compile.c) gives an image; an image can be
 * stored (bpf/bpf_cache.c) and, in this or a later run, its maps created
 * and its functions loaded into the kernel, which verifies them each time.
 *
 * Serialized form (little-endian, what bpf_image_parse reads back):
 *   "PYBPFIMG" u32 format version
 *   u32 kern_version, u16 license length, license
 *   u32 ntables, per table: u16 name length, name, u32 type, key size,
 *       leaf size, max entries, flags
 *   u32 nfuncs, per function: u16 name length, name, u32 ninsns,
 *       ninsns x 8 bytes of struct bpf_insn
 */
#ifndef PYBPF_BPF_IMAGE_H
#define PYBPF_BPF_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define BPF_IMAGE_NAME_MAX 64
#define BPF_IMAGE_MAX_TABLES 64
#define BPF_IMAGE_MAX_FUNCS 64
#define BPF_IMAGE_MAX_INSNS 1000000 /* BPF_COMPLEXITY_LIMIT_INSNS */

struct bpf_insn;

struct bpf_image_table {
	char name[BPF_IMAGE_NAME_MAX];
	uint32_t type, key_size, leaf_size, max_entries, flags;
	int fd; /* once created; -1 before */
};

struct bpf_image_func {
	char name[BPF_IMAGE_NAME_MAX];
	struct bpf_insn *insns; /* map references: table index in imm */
	uint32_t ninsns;
};

struct bpf_image {
	struct bpf_image_table *tables;
	uint32_t ntables;
	struct bpf_image_func *funcs;
	uint32_t nfuncs;
	char license[32];
	uint32_t kern_version;
};

void bpf_image_free(struct bpf_image *img); /* closes the maps too */

/*
 * Checks that the map references of insns (ninsns) are what an image can
 * hold: 64-bit immediate loads of a map by file descriptor, and no other
 * kind (map values, BTF ids, functions by address). When fds (nfds) is
 * given, each referenced descriptor is replaced by its index in fds.
 * Returns 0, or -1 with the reason in err.
 */
int bpf_image_index_maps(struct bpf_insn *insns, uint32_t ninsns, const int *fds, uint32_t nfds,
			 char *err, size_t errlen);

/* Serializes img; *out is malloc'ed. Returns 0 or -1. */
int bpf_image_serialize(const struct bpf_image *img, uint8_t **out, size_t *len);

/* Reads a serialized image (untrusted: every count and index checked).
 * Returns 0, or -1 with the reason in err. */
int bpf_image_parse(struct bpf_image *img, const uint8_t *data, size_t len, char *err,
		    size_t errlen);

/* Creates every map of img. Returns 0, or -1 with the reason in err. */
int bpf_image_create_maps(struct bpf_image *img, char *err, size_t errlen);

/* The descriptor of a created map by name, or -1. */
int bpf_image_table_fd(const struct bpf_image *img, const char *name);

/*
 * The instructions of function fn with each map index replaced by that
 * map's descriptor (malloc'ed, *ninsns set), or NULL with the reason in
 * err.
 */
struct bpf_insn *bpf_image_relocate(const struct bpf_image *img, const char *fn,
				    uint32_t *ninsns, char *err, size_t errlen);

#endif
