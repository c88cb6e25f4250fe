"""A Python function whose time goes to a library without unwind
information, for the test of native walks that end early: spin() calls,
through ctypes, nounwind_copy in LIBRARY (built without .eh_frame and
without frame pointers), which copies a buffer with libc's memcpy over
and over. A native walk from memcpy meets nounwind_copy and cannot go on.
Runs for SECONDS.

    python nounwind_spin.py LIBRARY SECONDS
"""
import ctypes
import sys
import time

LIB = ctypes.CDLL(sys.argv[1])
LIB.nounwind_copy.argtypes = [ctypes.c_int]
LIB.nounwind_copy.restype = ctypes.c_long


def spin():
    return LIB.nounwind_copy(200)


def main():
    end = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        spin()


main()
