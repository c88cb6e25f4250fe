#!/usr/bin/env python3
"""A process that names everything with terminal escapes, C1 controls, ';'
and newlines, for the tools' text sinks (tests/test_hostile_text.py).

Usage: python hostile_names.py SCRATCH [LIBSPIN]
  - the process's name (prctl PR_SET_NAME) and each thread's name hold
    ESC sequences, a C1 byte, ';' and a newline (NAMES below);
  - the Python code that runs lives in a module file whose path holds
    such bytes (created in SCRATCH, imported from there);
  - thread "spinner" burns CPU in that module; thread "sleeper" sleeps in
    it 5 ms at a time (off-CPU time, and GIL waits on each wake-up);
  - with LIBSPIN (a library built by the test with a symbol name of such
    bytes), thread "native" calls its run_spin(N) through ctypes, which
    never returns: it burns CPU and sleeps in that symbol by turns;
  - the main thread runs an asyncio loop whose task, named with such
    bytes, burns CPU in the module.
Writes SCRATCH/state.json ({"ready", "pid", "module": the module's path,
"tids": {role: native id}}) once every thread runs, then runs until killed.
"""
import asyncio
import ctypes
import ctypes.util
import importlib.util
import json
import os
import sys
import threading

# Each name: what prctl sets (bytes, at most 15) and what threading shows.
NAMES = {
    "process": b"p\x1b[31m;\n\x9bq",
    "spinner": b"s\x1b]0;x\x07\xc2\x85",
    "sleeper": b"z\x7f;\t\x1b[2J",
    "native": b"n\x1b[5m\n;\x9b",
}
THREAD_NAMES = {
    "spinner": "spin\x1b[1m;\nner\u009b",
    "sleeper": "sleep\x1b[2J\x7f;er",
    "native": "nat\x1b[31mive;\n",
}
TASK_NAME = "task\x1b[31m;\n\x7fname"  # ASCII: --async knows tasks by ASCII names only
MODULE_NAME = "mod\x1b[1m;\n\u0085x\x7f.py"

MODULE = '''
import time


def burn(n):
    total = 0
    for i in range(n):
        total += i
    return total


def spin_forever():
    while True:
        burn(20000)


def nap_forever():
    while True:
        time.sleep(0.005)


def spin_some():
    burn(20000)
'''

PR_SET_NAME = 15
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def set_comm(name):
    if libc.prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl")


def main():
    scratch = sys.argv[1]
    libspin = sys.argv[2] if len(sys.argv) > 2 else None
    path = os.path.join(scratch, MODULE_NAME)
    with open(path, "w") as fp:
        fp.write(MODULE)
    spec = importlib.util.spec_from_file_location("hostile_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    set_comm(NAMES["process"])
    tids = {"main": threading.get_native_id()}
    started = threading.Barrier(2 + (libspin is not None) + 1)

    def run(role, body):
        set_comm(NAMES[role])
        tids[role] = threading.get_native_id()
        started.wait()
        body()

    bodies = {"spinner": mod.spin_forever, "sleeper": mod.nap_forever}
    if libspin:
        lib = ctypes.CDLL(libspin)

        def native_spin():
            lib.run_spin(ctypes.c_ulong(1000000))  # never returns
        bodies["native"] = native_spin
    for role, body in bodies.items():
        threading.Thread(target=run, args=(role, body), name=THREAD_NAMES[role],
                         daemon=True).start()
    started.wait()

    async def busy():
        while True:
            mod.spin_some()
            await asyncio.sleep(0)

    async def amain():
        task = asyncio.ensure_future(busy())
        task.set_name(TASK_NAME)
        await asyncio.sleep(0.05)
        tmp = os.path.join(scratch, "state.json.tmp")
        with open(tmp, "w") as fp:
            json.dump({"ready": True, "pid": os.getpid(), "module": path, "tids": tids}, fp)
        os.rename(tmp, os.path.join(scratch, "state.json"))
        await task

    asyncio.run(amain())


if __name__ == "__main__":
    main()
