#!/usr/bin/env python3
"""Writes the committed seeds of fuzz_census (tests/fuzz/corpus/fuzz_census/):
fake process images (tests/fuzz/fuzz_mem.h) of a 3.8 runtime-wide and a
3.12 per-interpreter collector whose youngest list holds a few objects of
one type, with each version's real offsets (offsets/cpython-3.N.offsets).

    tests/fuzz/seed_census.py
"""
import hashlib
import os
import re
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BASE = 0x200000000000
TYPE_TYPE = BASE + 0x100 * 17   # o.t_type in fuzz_census.c
HAVE_GC = 1 << 14


def fields():
    text = open(os.path.join(ROOT, "lib", "abi", "py_offset_fields.h")).read()
    return re.findall(r"^\s+X\((\w+),", text, re.M)


def offsets(minor):
    vals = {}
    for line in open(os.path.join(ROOT, "offsets", "cpython-3.%d.offsets" % minor)):
        parts = line.split()
        if len(parts) == 2 and not line.startswith(("#", "version")):
            vals[parts[0]] = int(parts[1])
    return [vals.get(f, -1) for f in fields()]


def image(minor, gc_home, gc_at, objects):
    mem = bytearray(0x8000)
    put = lambda at, fmt, *v: struct.pack_into(fmt, mem, at, *v)
    off = offsets(minor)
    runtime, interp, cls, name = 0x3000, 0x4000, 0x2000, 0x2800
    put(0, "<BBHIQQ", minor - 8, 0, 0, 0, BASE + runtime, 0)
    put(24, "<%di" % len(off), *off)
    fld = dict(zip(fields(), off))
    put(runtime + fld["runtime_interpreters_head"], "<Q", BASE + interp)
    put(interp + fld["interp_next"], "<Q", 0)
    # the class: a static type named "Leak", 32 bytes, tracked
    put(cls + 8, "<Q", TYPE_TYPE)
    put(cls + 24, "<QQQ", BASE + name, 32, 0)
    put(cls + 168, "<Q", HAVE_GC)
    mem[name:name + 5] = b"Leak\0"
    state = (runtime if gc_home == "runtime" else interp) + gc_at
    heads = [state + 24 + 24 * i for i in range(3)] + [state + (104 if minor < 14 else 96)]
    for h in heads:
        put(h, "<QQ", BASE + h, BASE + h)
    nodes = [0x6000 + 0x40 * i for i in range(objects)]
    ring = [heads[0]] + nodes
    for i, n in enumerate(ring):
        nxt, prv = ring[(i + 1) % len(ring)], ring[i - 1]
        put(n, "<QQ", BASE + nxt, BASE + prv)
        if n != heads[0]:
            put(n + 16, "<QQ", 1, BASE + cls)
    return bytes(mem)


def main():
    out = os.path.join(HERE, "corpus", "fuzz_census")
    os.makedirs(out, exist_ok=True)
    for data in (image(8, "runtime", 344, 3), image(12, "interp", 112, 5)):
        with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as fp:
            fp.write(data)


if __name__ == "__main__":
    main()
