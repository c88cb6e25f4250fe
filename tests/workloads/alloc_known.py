#!/usr/bin/env python3
"""Known libc allocations for test_pymem_alloc.py (pymem --alloc).

    python alloc_known.py DIR

Writes DIR/state.json ({"pid", "ready": true}) once running, spins in
wait_for_go until DIR/go exists, then, each in a function of its own:

  keep_bytearrays  keeps BYTEARRAYS bytearrays of BYTEARRAY_SIZE bytes
                   (each asks libc for its size + 1: the trailing NUL)
  keep_buffers     keeps ctypes buffers (create_string_buffer) and array
                   buffers of known sizes (their items come from libc:
                   over pymalloc's 512 bytes)
  churn            allocates bytearrays of CHURN_SIZE and frees each at
                   once: nothing stays outstanding

then rewrites state.json with "done": true and the sizes each function
keeps ("kept": {function: bytes asked of libc}, "churned": bytes), and
spins in wait_for_quit until DIR/quit exists. Python 3.8+.
"""
import array
import ctypes
import json
import os
import sys
import time

DIR = sys.argv[1]
BYTEARRAYS, BYTEARRAY_SIZE = 100, 200000
CTYPES_BUFFERS, CTYPES_SIZE = 50, 100000
ARRAYS, ARRAY_ITEMS = 40, 10000  # of 'd': 80,000 bytes each
CHURNS, CHURN_SIZE = 1000, 50000
kept = []


def write_state(state):
    tmp = os.path.join(DIR, "state.json.tmp")
    with open(tmp, "w") as fp:
        json.dump(state, fp)
    os.rename(tmp, os.path.join(DIR, "state.json"))


def spin_until(name):
    path = os.path.join(DIR, name)
    while not os.path.exists(path):
        sum(range(200))
        time.sleep(0.002)


def wait_for_go():
    spin_until("go")


def wait_for_quit():
    spin_until("quit")


def keep_bytearrays():
    for _ in range(BYTEARRAYS):
        kept.append(bytearray(BYTEARRAY_SIZE))
    return BYTEARRAYS * (BYTEARRAY_SIZE + 1)


def keep_buffers():
    for _ in range(CTYPES_BUFFERS):
        kept.append(ctypes.create_string_buffer(CTYPES_SIZE))
    zeros = array.array("d", [0.0])
    for _ in range(ARRAYS):
        kept.append(zeros * ARRAY_ITEMS)
    return CTYPES_BUFFERS * CTYPES_SIZE + ARRAYS * ARRAY_ITEMS * zeros.itemsize


def churn():
    for _ in range(CHURNS):
        b = bytearray(CHURN_SIZE)
        del b
    return CHURNS * (CHURN_SIZE + 1)


def main():
    write_state({"pid": os.getpid(), "ready": True})
    wait_for_go()
    kept.append(None)  # the list's own growth happens before the measured part
    kept.clear()
    state = {"pid": os.getpid(), "ready": True}
    state["kept"] = {"keep_bytearrays": keep_bytearrays(), "keep_buffers": keep_buffers()}
    state["churned"] = churn()
    state["done"] = True
    write_state(state)
    wait_for_quit()


main()
