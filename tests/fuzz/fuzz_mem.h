/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake "Python process" made of the fuzz input, for the readers of live
 * interpreter memory (py_code, code_names, py_frames, py_threads, py_gil).
 *
 * The whole input is mapped at FUZZ_BASE and starts with a header: the
 * version, the struct offsets the readers will use (as a hostile process
 * could publish them in _Py_DebugOffsets: any value up to 1 MiB, or
 * absent), and where the reader starts. Everything after the header is the
 * process's memory; tests/fuzz/seedgen.c writes realistic images (runtime,
 * interpreter, thread states, frames, code objects, str and bytes objects
 * laid out with each version's real offsets).
 */
#ifndef PYBPF_FUZZ_MEM_H
#define PYBPF_FUZZ_MEM_H

#include "fuzz_common.h"
#include "cpython/offsets.h"
#include "cpython/process.h"

/* Type objects are only compared, never read: fixed addresses. */
#define FUZZ_TYPE_CODE 0x7a0000001000ULL
#define FUZZ_TYPE_UNICODE 0x7a0000002000ULL
#define FUZZ_TYPE_BYTES 0x7a0000003000ULL

#define FUZZ_NOFFSETS (sizeof(struct py_offsets) / sizeof(int32_t))

enum fuzz_mem_flags {
	FUZZ_FREE_THREADED = 1 << 0,
	FUZZ_RAW_IDENT = 1 << 1, /* code_names: use arg64 as the identity */
	FUZZ_GIL = 1 << 2,       /* py_threads: also locate the GIL */
};

struct fuzz_mem_header {
	uint8_t minor;   /* 3.(8 + minor % 8) */
	uint8_t flags;   /* enum fuzz_mem_flags */
	uint16_t count;  /* target-specific: frames, threads, lookups */
	uint32_t arg32;  /* target-specific: buffer sizes */
	uint64_t root;   /* where the reader starts: code, tstate, _PyRuntime */
	uint64_t arg64;  /* target-specific: another address, an identity */
	int32_t off[FUZZ_NOFFSETS]; /* struct py_offsets, in field order */
};

/*
 * Maps the input and fills p as py_process_open() would have. Returns -1
 * when the input is too short or its offsets would have been refused
 * (py_offsets_missing), like any set of offsets before it is used.
 */
static inline int fuzz_mem_process(const uint8_t *data, size_t size, struct py_process *p,
				   struct fuzz_mem_header *h)
{
	int32_t *off = (int32_t *)&p->off;

	if (size < sizeof(*h))
		return -1;
	memcpy(h, data, sizeof(*h));
	fuzz_map_input(data, size);
	memset(p, 0, sizeof(*p));
	p->pid = getpid();
	p->ns_pid = p->pid;
	snprintf(p->comm, sizeof(p->comm), "fuzz");
	p->version.major = 3;
	p->version.minor = 8 + h->minor % 8;
	p->version.level = 0xf;
	py_version_format(&p->version, p->version_str, sizeof(p->version_str));
	p->free_threaded = p->version.minor >= 13 && (h->flags & FUZZ_FREE_THREADED);
	p->rules = py_rules_for(p->version.minor, p->free_threaded);
	for (size_t i = 0; i < FUZZ_NOFFSETS; i++)
		off[i] = h->off[i] < 0 ? PY_OFFSET_ABSENT : h->off[i] & 0xfffff;
	if (py_offsets_missing(&p->off, p->version.minor))
		return -1;
	p->source = PY_OFFSETS_DEBUG;
	p->code_type = FUZZ_TYPE_CODE;
	p->unicode_type = FUZZ_TYPE_UNICODE;
	p->bytes_type = FUZZ_TYPE_BYTES;
	p->runtime_addr = h->root;
	p->pthread_tid_offset = (int32_t)(h->arg32 & 0xfff);
	return 0;
}

#endif
