/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one interpreter binary says about itself, kept per binary so that
 * the second process of the same binary costs little to open: its version
 * and rules, where _PyRuntime, the type objects and the eval loop are (as
 * linked: each process adds its own load bias), whether it keeps frame
 * pointers, and the offsets its DWARF and our tables give. Reading these
 * costs most of opening a process (the .eh_frame walk for the eval loop's
 * fragments and frame pointers, symbol look-ups, DWARF); a system with
 * 100 processes of one binary reads them once.
 *
 * A binary is known by its file's identity (device, inode, size, change
 * time, as the opened descriptor says), so a file replaced or changed in
 * place is read again. What lives in each process is still read and
 * checked per process (cpython/process.c): the load bias, _Py_DebugOffsets
 * (3.13+), and the validation of the offsets against the live memory
 * (cpython/validate.h).
 */
#ifndef PYBPF_CPYTHON_INTERP_CACHE_H
#define PYBPF_CPYTHON_INTERP_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cpython/offsets.h"
#include "cpython/rules.h"
#include "cpython/version.h"
#include "sys/code_fragments.h"
#include "sys/elf_image.h"

#define INTERP_CACHE_SIZE 32
#define INTERP_EVAL_RANGES 16 /* PY_EVAL_RANGES */
#define INTERP_FILE_OFFSETS 3

struct interp_facts {
	/* the file */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec ctime;
	/* what it says */
	struct py_version version;
	char version_str[24];
	bool free_threaded;
	const struct py_rules *rules;
	uint64_t runtime, code_type, unicode_type, bytes_type, function_type; /* as linked */
	struct code_range eval_code[INTERP_EVAL_RANGES];        /* as linked */
	int eval_ranges;
	bool frame_pointers;
	/* offsets that come from the file (DWARF, tables), best first */
	int noffsets;
	enum py_offsets_source offsets_src[INTERP_FILE_OFFSETS];
	struct py_offsets offsets[INTERP_FILE_OFFSETS];
	char notes[512];
};

/* The facts of the binary img was opened from, or NULL. */
const struct interp_facts *interp_cache_find(const struct elf_image *img);

/* Keeps f (its file identity is taken from img). */
void interp_cache_add(const struct elf_image *img, const struct interp_facts *f);

/* Forgets everything (tests). */
void interp_cache_clear(void);

#endif
