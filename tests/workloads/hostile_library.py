"""A process that loads a hostile library (tests/elf_bombs.py) and works in
it, for tests/test_hostile_elf.py and bench/hostile_elf.py.

    python hostile_library.py DIR LIBRARY [SECONDS] [--truncate]

Loads LIBRARY with ctypes, says {"ready": true} in DIR/state.json, waits
for DIR/go (or goes at once if SECONDS is negative: until killed), then
calls bomb_spin from do_native (bomb_spin -> bomb_helper in the library)
for SECONDS of CPU. Meanwhile a thread named "waiter" sleeps in the library
(do_wait -> bomb_wait -> bomb_sleep -> nanosleep), for pydump -n. With --truncate, a thread meanwhile cuts the library
file to its first page and writes it back, again and again, and the work is
done in Python (do_python) instead: the process's own mapping of the
library would fault while the file is short.
"""
import ctypes
import json
import os
import sys
import threading
import time

DIR, LIBRARY = sys.argv[1], sys.argv[2]
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
TRUNCATE = "--truncate" in sys.argv


def do_native(lib):
    return lib.bomb_spin(20000)


def do_wait(lib):
    lib.bomb_wait(100000)


def do_python():
    x = 0
    for i in range(20000):
        x = (x * 31 + i) % 1000003
    return x


def cut_and_restore(data, stop):
    """The library short, then whole, with pauses of about a millisecond."""
    rounds = 0
    fd = os.open(LIBRARY, os.O_WRONLY)
    while not stop.is_set():
        os.ftruncate(fd, 4096)
        time.sleep(0.001)
        os.pwrite(fd, data, 0)
        time.sleep(0.001)
        rounds += 1
    os.close(fd)


def main():
    lib = ctypes.CDLL(LIBRARY)
    lib.bomb_spin.argtypes = [ctypes.c_long]
    lib.bomb_spin.restype = ctypes.c_long
    lib.bomb_wait.argtypes = [ctypes.c_long]
    threading.Thread(target=do_wait, args=(lib,), name="waiter", daemon=True).start()
    stop = threading.Event()
    if TRUNCATE:
        with open(LIBRARY, "rb") as fp:
            data = fp.read()
        threading.Thread(target=cut_and_restore, args=(data, stop), daemon=True).start()
    with open(os.path.join(DIR, "state.tmp"), "w") as fp:
        json.dump({"ready": True, "pid": os.getpid()}, fp)
    os.rename(os.path.join(DIR, "state.tmp"), os.path.join(DIR, "state.json"))
    if SECONDS >= 0:
        while not os.path.exists(os.path.join(DIR, "go")):
            time.sleep(0.02)
    t0 = time.thread_time()
    while SECONDS < 0 or time.thread_time() - t0 < SECONDS:
        if TRUNCATE:
            do_python()
        else:
            do_native(lib)
    stop.set()


main()
