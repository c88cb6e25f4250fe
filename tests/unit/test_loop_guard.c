/* SPDX-License-Identifier: Apache-2.0 */
/* lib/bpf/loop_guard.c: loop guards rewritten into may_goto, nothing else. */
#include <linux/bpf.h>
#include <string.h>

#include "abi/loop_abi.h"
#include "bpf/loop_guard.h"
#include "unit_check.h"

#define GUARD(to) { .code = BPF_JMP | BPF_JEQ | BPF_K, .off = (to), .imm = PYB_LOOP_GUARD_IMM }
#define EXIT { .code = BPF_JMP | BPF_EXIT }
#define MAY_GOTO 0xe5

static void test_guards_become_may_goto(void)
{
	char err[128] = "";
	struct bpf_insn p[] = {
		GUARD(2),
		/* the same compare on another register, or against another
		 * value, is the program's own */
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 3, .off = 1, .imm = 7 },
		{ .code = BPF_JMP | BPF_JEQ | BPF_X, .off = 0, .imm = PYB_LOOP_GUARD_IMM },
		/* a 16-byte load whose second half looks like a guard */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1 },
		GUARD(0),
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 0, .off = 0, .imm = PYB_LOOP_GUARD_IMM },
		EXIT,
	};

	CHECK(loop_guard_patch(p, 7, err, sizeof(err)) == 2);
	CHECK(p[0].code == MAY_GOTO && p[0].off == 2 && p[0].imm == 0 && p[0].dst_reg == 0);
	CHECK(p[1].code == (BPF_JMP | BPF_JEQ | BPF_K) && p[1].imm == 7);
	CHECK(p[2].code == (BPF_JMP | BPF_JEQ | BPF_X));
	CHECK(p[4].code == (BPF_JMP | BPF_JEQ | BPF_K)); /* data, untouched */
	CHECK(p[5].code == MAY_GOTO && p[5].off == 0);
}

static void test_guard_jumping_out_is_refused(void)
{
	char err[128] = "";
	struct bpf_insn back[] = { EXIT, GUARD(-2), EXIT };
	struct bpf_insn past[] = { GUARD(5), EXIT };

	CHECK(loop_guard_patch(back, 3, err, sizeof(err)) == -1);
	CHECK(strstr(err, "instruction 1") != NULL);
	CHECK(loop_guard_patch(past, 2, err, sizeof(err)) == -1);
	CHECK(past[0].code == (BPF_JMP | BPF_JEQ | BPF_K));
}

int main(void)
{
	test_guards_become_may_goto();
	test_guard_jumping_out_is_refused();
	printf("loop_guard: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
