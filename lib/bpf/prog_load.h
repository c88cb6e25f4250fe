/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading a BPF program in the background. The kernel's verifier takes
 * most of a warm start (about 0.6 s of CPU for pyprofile's sampling
 * program), and the tool has other work meanwhile (finding and checking
 * the Python processes): the load runs in a thread of its own.
 *
 * The caller gets a descriptor at once: a placeholder that becomes the
 * program (dup3 onto it) when prog_load_finish() has joined a successful
 * load. Until then it must not be used as the program.
 */
#ifndef PYBPF_BPF_PROG_LOAD_H
#define PYBPF_BPF_PROG_LOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_insn;

struct prog_load {
	pthread_t thread;
	bool started, finished;
	char fn[64];
	int type;
	struct bpf_insn *insns; /* owned; freed when finished */
	uint32_t ninsns;
	const char *license;
	uint32_t kern_version;
	int placeholder; /* what the caller holds */
	bool misses_expected; /* its skipped runs lose nothing (bpfmod_expect_misses) */
	int fd, err;     /* the thread's result: the program, or errno */
	uint64_t ns;     /* how long the kernel took */
};

/* Starts loading insns (taken over) as fn of type. Returns the placeholder
 * descriptor, or -1 (err says why). */
int prog_load_start(struct prog_load *j, const char *fn, int type, struct bpf_insn *insns,
		    uint32_t ninsns, const char *license, uint32_t kern_version, char *err,
		    size_t errlen);

/* Waits for the load; on success the placeholder is the program. Returns
 * 0, or -1 with the reason in err (again on later calls). */
int prog_load_finish(struct prog_load *j, char *err, size_t errlen);

#endif
