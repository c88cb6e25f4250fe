/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library tests/workloads/swap_library.py loads, unloads and loads
 * again, built by tests/test_hostile_maps.py in variants that differ in
 * their names only (P=a, P=b: same size and layout, so that the loader
 * puts the second where the first was) or in their frames too (FRAME:
 * a_helper keeps that many bytes on its stack, so that the first
 * variant's unwind rows do not fit the second). No libc: it loads in any
 * root. NAME(x) is P_x.
 */
#define CAT2(p, x) p##_##x
#define CAT(p, x) CAT2(p, x)
#define NAME(x) CAT(P, x)
#ifndef FRAME
#define FRAME 16
#endif

__attribute__((noinline)) unsigned long NAME(helper)(unsigned long n)
{
	volatile unsigned long keep[FRAME / 8];
	unsigned long x = n;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		keep[i % (FRAME / 8)] = x;
	}
	return x + keep[0];
}

/* spins for about n iterations, in P_helper */
unsigned long NAME(spin)(unsigned long n)
{
	unsigned long r = 0;

	for (int k = 0; k < 4; k++)
		r += NAME(helper)(n / 4);
	return r;
}
