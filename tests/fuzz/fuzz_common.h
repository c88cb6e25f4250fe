/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the libFuzzer targets in tests/fuzz/ (see run.sh).
 *
 * Two ways of handing untrusted bytes to a reader without mocking it:
 *  - files (ELF, DWARF): the input goes into a memfd that the reader opens
 *    by path (/proc/self/fd/N), through its normal open path;
 *  - process memory: the input is mapped at a fixed address in this very
 *    process and the reader is pointed at getpid(), so remote_read() does
 *    real process_vm_readv() calls. Pointers inside the input may point
 *    into it (FUZZ_BASE + offset), anywhere else, or at themselves.
 */
#ifndef PYBPF_FUZZ_COMMON_H
#define PYBPF_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A report that libFuzzer counts as a crash (abort leaves the reproducer). */
#define FUZZ_CHECK(cond)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__,  \
				__LINE__, #cond);                                     \
			abort();                                                      \
		}                                                                     \
	} while (0)

/* Consuming an input front to back; reads past the end give zeros. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline void fuzz_take(struct fuzz_in *in, void *out, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memset(out, 0, len);
	memcpy(out, in->p, k);
	in->p += k;
	in->n -= k;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v;

	fuzz_take(in, &v, 1);
	return v;
}

/*
 * Where process-memory inputs live: above ASan's shadow (HighMem starts at
 * 0x10007fff8000), below its allocator (0x600000000000), canonical.
 */
#define FUZZ_BASE 0x200000000000ULL

/* Maps the input at FUZZ_BASE (whole pages, zero after the data, nothing
 * mapped past the last page). Returns the mapping. */
static inline uint8_t *fuzz_map_input(const uint8_t *data, size_t size)
{
	static size_t mapped;
	size_t len = (size + 4095) & ~(size_t)4095;
	void *p;

	if (!len)
		len = 4096;
	if (mapped)
		munmap((void *)(uintptr_t)FUZZ_BASE, mapped);
	p = mmap((void *)(uintptr_t)FUZZ_BASE, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)(uintptr_t)FUZZ_BASE) {
		perror("fuzz: mmap at FUZZ_BASE");
		abort();
	}
	mapped = len;
	memcpy(p, data, size);
	return p;
}

/*
 * A memfd holding the current input, and its path for readers that open
 * files by name.
 */
struct fuzz_file {
	int fd;
	char path[64];
};

static inline void fuzz_file_init(struct fuzz_file *f, const char *name)
{
	f->fd = memfd_create(name, MFD_CLOEXEC);
	if (f->fd < 0) {
		perror("fuzz: memfd_create");
		abort();
	}
	snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
}

static inline void fuzz_file_set(struct fuzz_file *f, const uint8_t *data, size_t size)
{
	size_t done = 0;

	if (ftruncate(f->fd, 0) != 0)
		abort();
	while (done < size) {
		ssize_t w = pwrite(f->fd, data + done, size - done, (off_t)done);

		if (w <= 0)
			abort();
		done += (size_t)w;
	}
}

/* A heap copy of exactly len bytes, so ASan sees any read past the end. */
static inline uint8_t *fuzz_dup(const uint8_t *data, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	if (!p)
		abort();
	memcpy(p, data, len);
	return p;
}

#endif
