"""A process that loads a native library after the profiler started and
exits before the profiler ends, for the native names test. Waits for the
file DIR/go, then imports bz2 (its _bz2 module maps libbz2), compresses
in do_bz2 for about SECONDS of CPU (default 1.5) and exits.

    python late_library.py DIR [SECONDS]
"""
import os
import sys
import time

DIR = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
DATA = b"".join(b"%d,%d;" % (i, i * i % 9973) for i in range(60000))


def do_bz2(bz2):
    return bz2.compress(DATA, 9)


def main():
    with open(os.path.join(DIR, "ready.tmp"), "w") as fp:
        fp.write('{"ready": true}')
    os.rename(os.path.join(DIR, "ready.tmp"), os.path.join(DIR, "ready.json"))
    while not os.path.exists(os.path.join(DIR, "go")):
        time.sleep(0.02)
    import bz2  # maps _bz2 and libbz2 now, while the profiler runs

    t0 = time.thread_time()
    while time.thread_time() - t0 < SECONDS:
        do_bz2(bz2)


main()
