#!/usr/bin/env python3
"""A process that lies about the function that frees its code objects:
PyCode_Type's tp_dealloc is pointed at a heap buffer (no code object is
freed while it spins, so it never runs it).

Usage: python forged_code_dealloc.py STATE_JSON

Writes STATE_JSON ({"ready": true, "pid", "forged": the address}) and
spins in spin() until killed.
"""
import ctypes
import json
import os
import sys
import types

TP_DEALLOC = 48  # PyTypeObject: ob_refcnt, ob_type, ob_size, tp_name, tp_basicsize, tp_itemsize


def spin():
    n = 0
    while True:
        n += 1


buf = ctypes.create_string_buffer(64)
slot = ctypes.c_void_p.from_address(id(types.CodeType) + TP_DEALLOC)
slot.value = ctypes.addressof(buf)
with open(sys.argv[1] + ".tmp", "w") as fp:
    json.dump({"ready": True, "pid": os.getpid(), "forged": ctypes.addressof(buf)}, fp)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
spin()
