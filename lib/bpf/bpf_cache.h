/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compiled BPF images kept on disk between runs, so that a run whose
 * program, flags, kernel, kernel headers and libbcc are the same as an
 * earlier one's skips the compiler (about 1.5 s of CPU and 100 MB).
 *
 * An entry is named by a hash of its key and holds the whole key (the
 * program text, every flag, the kernel's release and build, the headers'
 * and libbcc's file identities, the number of possible CPUs), which must
 * match byte for byte: a hash collision or a changed system is a miss,
 * never a wrong program. The kernel verifies every program at each load
 * whatever its origin.
 *
 * Directory: $PYBPF_BPF_CACHE, else /var/cache/pybpf-tools/bpf; "off"
 * disables the cache. It and its parent must belong to the user running
 * the tool and be writable by no one else, entries likewise; anything
 * else is not used (-v says why). At most BPF_CACHE_MAX_ENTRIES entries
 * are kept (the oldest go).
 */
#ifndef PYBPF_BPF_BPF_CACHE_H
#define PYBPF_BPF_BPF_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/bpf_image.h"

#define BPF_CACHE_MAX_ENTRIES 32

struct bpf_cache_key {
	char *blob; /* the key material, compared in full */
	size_t len;
	unsigned long long hash;
};

/* Builds the key of text compiled with cflags on this system. 0 or -1. */
int bpf_cache_key(struct bpf_cache_key *k, const char *text, const char *const *cflags,
		  int ncflags);
void bpf_cache_key_free(struct bpf_cache_key *k);

/*
 * Looks the key up. Returns 1 with img filled (maps not created), 0 on a
 * miss, -1 when the cache cannot be used; note says why when it matters
 * (for -v).
 */
int bpf_cache_get(const struct bpf_cache_key *k, struct bpf_image *img, char *note, size_t len);

/* Stores img under the key (best effort). Returns 0 or -1 (note says why). */
int bpf_cache_put(const struct bpf_cache_key *k, const struct bpf_image *img, char *note,
		  size_t len);

#endif
