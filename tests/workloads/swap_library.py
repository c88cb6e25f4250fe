"""A process whose code mappings change while it is profiled, for
tests/test_hostile_maps.py: it loads library FIRST (ctypes), spins in its
PREFIX1_spin for about SECONDS of CPU (in first_phase), unloads it
(dlclose), then loads SECOND and spins in its PREFIX2_spin (in
second_phase). With --rewrite, SECOND holds the new contents of FIRST:
they are written over FIRST in place (same path, same inode) before it is
loaded again.

    python swap_library.py DIR FIRST PREFIX1 SECOND PREFIX2 SECONDS [--rewrite]

Writes DIR/ready.json, waits for DIR/go, and at the end DIR/truth.json:
each phase's CPU time, where each library's spin function was and the
inode of each library.
"""
import ctypes
import json
import os
import sys
import time

DIR, FIRST, P1, SECOND, P2 = sys.argv[1:6]
SECONDS = float(sys.argv[6])
REWRITE = "--rewrite" in sys.argv[7:]


def write_json(name, data):
    tmp = os.path.join(DIR, name + ".tmp")
    with open(tmp, "w") as fp:
        json.dump(data, fp)
    os.rename(tmp, os.path.join(DIR, name))


def address_of(lib, prefix):
    """Where PREFIX_spin is (a chroot may have no /proc: not from its maps);
    the two variants of the same layout have it at the same offset."""
    return ctypes.cast(getattr(lib, prefix + "_spin"), ctypes.c_void_p).value


def burn(spin):
    t0 = time.thread_time()
    while time.thread_time() - t0 < SECONDS:
        spin(2000000)
    return time.thread_time() - t0


def first_phase(lib):
    return burn(getattr(lib, P1 + "_spin"))


def second_phase(lib):
    return burn(getattr(lib, P2 + "_spin"))


def main():
    write_json("ready.json", {"ready": True})
    while not os.path.exists(os.path.join(DIR, "go")):
        time.sleep(0.02)
    truth = {}
    lib = ctypes.CDLL(FIRST)
    truth["spin1"], truth["ino1"] = address_of(lib, P1), os.stat(FIRST).st_ino
    truth["cpu1"] = first_phase(lib)
    import _ctypes
    _ctypes.dlclose(lib._handle)
    del lib
    if REWRITE:
        with open(SECOND, "rb") as fp:
            data = fp.read()
        with open(FIRST, "r+b") as fp:  # in place: the same inode
            fp.truncate(0)
            fp.write(data)
        target = FIRST
    else:
        target = SECOND
    lib = ctypes.CDLL(target)
    truth["spin2"], truth["ino2"] = address_of(lib, P2), os.stat(target).st_ino
    truth["cpu2"] = second_phase(lib)
    truth["done"] = True
    write_json("truth.json", truth)


main()
