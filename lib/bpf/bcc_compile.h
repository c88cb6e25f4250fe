/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compiling BPF C with libbcc's clang front end, into an image
 * (bpf/bpf_image.h). libbcc.so, with LLVM and clang behind it (about 60 MB
 * of relocated libraries and 100 MB of heap while compiling), is loaded
 * only in a child process that compiles and exits: the tool itself links
 * libbcc's BPF half only, and a run that finds its image in the cache
 * (bpf/bpf_cache.h) starts no compiler at all.
 */
#ifndef PYBPF_BPF_BCC_COMPILE_H
#define PYBPF_BPF_BCC_COMPILE_H

#include <stddef.h>

#include "bpf/bpf_image.h"

/* Returns 0 with img filled (maps not created), or -1 with the reason in
 * err (libbcc prints compiler errors on stderr itself). */
int bcc_compile_image(const char *text, const char *const *cflags, int ncflags,
		      struct bpf_image *img, char *err, size_t errlen);

#endif
