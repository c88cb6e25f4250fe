/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library of tests/test_hostile_files.py: a static function (named by
 * INNER, which the test sets) that either burns CPU or sleeps in a raw
 * nanosleep, called through one exported function. Links to nothing (no
 * libc), so it loads under any glibc; the test builds it with and without
 * symbols, build-ids and debug links.
 */
#ifndef INNER
#define INNER hostile_inner
#endif

/* n > 0: n rounds of arithmetic; n < 0: sleeps -n ms (the thread blocks
 * in this very function, for pydump to unwind from); 0: crashes here
 * (SIGSEGV, for a core). */
__attribute__((noinline)) static long INNER(long n)
{
	volatile long x = 0;

	if (n == 0)
		*(volatile long *)8 = 0;
	if (n < 0) {
		long ts[2] = { -n / 1000, (-n % 1000) * 1000000 }, rc;

		__asm__ volatile("syscall"
				 : "=a"(rc)
				 : "0"(35L /* nanosleep */), "D"(ts), "S"(0L)
				 : "rcx", "r11", "memory");
		return rc;
	}
	for (long i = 0; i < n; i++)
		x += i;
	return x;
}

long hostile_call(long n)
{
	return INNER(n) + 1; /* + 1: no tail call, this frame stays */
}
