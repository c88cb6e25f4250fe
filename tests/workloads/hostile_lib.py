"""Calls a library the test built (hostile_lib.c) through ctypes.

    python hostile_lib.py SCRATCH LIBRARY.so MODE SECONDS

MODE "spin": the main thread burns CPU in the library's static function;
"sleep": it sleeps there, 200 ms at a time; "crash": it dies there of
SIGSEGV, in SCRATCH (where the kernel writes a core named "core"). Writes
SCRATCH/state.json ({"pid", "ready"}) once the library is loaded and
called, goes on for SECONDS and exits.
"""
import ctypes
import json
import os
import sys
import time

SCRATCH, LIBRARY, MODE, SECONDS = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])


def call_library(lib, arg):
    lib.hostile_call(arg)


def main():
    lib = ctypes.CDLL(LIBRARY)
    lib.hostile_call.argtypes = [ctypes.c_long]
    lib.hostile_call.restype = ctypes.c_long
    arg = 2000000 if MODE == "spin" else -200
    call_library(lib, arg)
    state = os.path.join(SCRATCH, "state.json")
    with open(state + ".tmp", "w") as fp:
        json.dump({"pid": os.getpid(), "ready": True}, fp)
    os.rename(state + ".tmp", state)
    if MODE == "crash":
        os.chdir(SCRATCH)
        call_library(lib, 0)
    end = time.time() + SECONDS
    while time.time() < end:
        call_library(lib, arg)


main()
