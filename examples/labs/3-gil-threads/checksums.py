#!/usr/bin/env python3
"""Lab 3: more threads, no more speed.

Verifies downloaded chunks by their Adler-32 checksums, split over worker
threads. On a machine with several cores, 4 threads should be much faster
than 1; they are not. Find out with pygil why, and what helps.

    python3 checksums.py [--threads N] [--seconds S] [--zlib] [--truth FILE]

--zlib uses the C implementation from the standard library instead of the
Python one. It prints megabytes checked per second.
--truth FILE is for the instructor and the tests: at the end it writes each
worker's native thread id and CPU seconds to FILE (JSON).
Runs on Python 3.8+.
"""
import argparse
import json
import os
import threading
import time
import zlib

CHUNK = 64 * 1024


def adler32(data):
    """Adler-32 of DATA, as the RFC 1950 defines it."""
    a, b = 1, 0
    for byte in data:
        a = (a + byte) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


def verify(chunk, expected, use_zlib):
    found = zlib.adler32(chunk) if use_zlib else adler32(chunk)
    if found != expected:
        raise ValueError("corrupt chunk")


def worker(chunks, use_zlib, stop, done, truth, name):
    checked = 0
    t0 = time.thread_time()
    while not stop.is_set():
        for chunk, expected in chunks:
            verify(chunk, expected, use_zlib)
            checked += len(chunk)
            if stop.is_set():
                break
    done.append(checked)
    native = threading.get_native_id() if hasattr(threading, "get_native_id") else 0
    truth[name] = {"tid": native, "cpu": time.thread_time() - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--zlib", action="store_true", help="use zlib.adler32")
    ap.add_argument("--truth", help="write each worker's thread id and CPU seconds here")
    args = ap.parse_args()
    size = 256 * CHUNK if args.zlib else 4 * CHUNK  # the C version needs more to chew on
    data = os.urandom(size)
    chunks = [(data[i:i + CHUNK], zlib.adler32(data[i:i + CHUNK]))
              for i in range(0, size, CHUNK)]
    stop, done, truth = threading.Event(), [], {}
    threads = [threading.Thread(target=worker, name="worker-%d" % i,
                                args=(chunks, args.zlib, stop, done, truth, "worker-%d" % i))
               for i in range(args.threads)]
    start = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    print("%d threads: %.1f MB/s" % (args.threads, sum(done) / wall / 1e6))
    if args.truth:
        with open(args.truth, "w") as fp:
            json.dump({"pid": os.getpid(), "wall": wall, "workers": truth}, fp)


if __name__ == "__main__":
    main()
