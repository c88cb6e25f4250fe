"""A Python function whose time goes to a library that calls libc through
its PLT in a hot loop, for the naming of PLT stubs: spin() calls, through
ctypes, plt_spin in LIBRARY, which calls strlen, labs (.plt, or .plt.sec
with IBT) and abs (.plt.got) over and over. Runs for SECONDS.

    python plt_spin.py LIBRARY SECONDS
"""
import ctypes
import sys
import time

LIB = ctypes.CDLL(sys.argv[1])
LIB.plt_spin.argtypes = [ctypes.c_char_p, ctypes.c_long]
LIB.plt_spin.restype = ctypes.c_long


def spin():
    return LIB.plt_spin(b"abc", 20000)


def main():
    end = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        spin()


main()
