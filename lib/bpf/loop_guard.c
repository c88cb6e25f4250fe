/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/loop_guard.h"

#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "abi/loop_abi.h"

/* BPF_JMP | BPF_JCOND with src_reg BPF_MAY_GOTO (0): the uapi headers of
 * older distributions do not name them */
#define MAY_GOTO_CODE (0x05 | 0xe0)
#define GUARD_CODE (BPF_JMP | BPF_JEQ | BPF_K)

static bool kernel_has_may_goto(void)
{
	struct bpf_insn probe[3] = {
		{ .code = MAY_GOTO_CODE }, /* to the next instruction either way */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	int fd;

	/* the system call itself: this file builds without libbcc (unit tests) */
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uint64_t)(uintptr_t)probe;
	attr.insn_cnt = 3;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool loop_guard_available(void)
{
	static int known = -1;

	if (known < 0) {
		const char *off = getenv("PYBPF_NO_MAY_GOTO");

		known = (off && *off && *off != '0') ? 0 : kernel_has_may_goto();
	}
	return known == 1;
}

int loop_guard_patch(struct bpf_insn *insns, uint32_t ninsns, char *err, size_t errlen)
{
	int n = 0;

	for (uint32_t i = 0; i < ninsns; i++) {
		struct bpf_insn *in = &insns[i];

		if (in->code == (BPF_LD | BPF_DW | BPF_IMM)) {
			i++; /* a 16-byte instruction: its second half is data */
			continue;
		}
		if (in->code != GUARD_CODE || in->src_reg != 0 || in->imm != PYB_LOOP_GUARD_IMM)
			continue;
		if (in->off < 0 || (uint64_t)i + 1 + (uint64_t)in->off > ninsns) {
			snprintf(err, errlen, "a loop guard at instruction %u jumps to %d", i,
				 (int)in->off);
			return -1;
		}
		in->code = MAY_GOTO_CODE;
		in->dst_reg = 0;
		in->imm = 0;
		n++;
	}
	return n;
}
