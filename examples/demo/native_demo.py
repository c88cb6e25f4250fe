#!/usr/bin/env python3
"""A loop whose time goes to C code, to see native frames in pyprofile.

Each round, the main thread
  pack_log    compresses a log with zlib at level 9 (libz's deflate),
  export      writes a list of dicts as JSON (the _json module's C encoder),
  rank        sorts numbers by a key function written in Python, which the
              interpreter's C sort calls back for every element,
and a "heartbeat" thread sleeps 50 ms at a time.

Usage: python3 native_demo.py [--seconds N]     (default: run until killed)
"""
import argparse
import json
import threading
import time
import zlib

LOG = b"".join(b"%06d GET /item/%d 200\n" % (i, i * 7919 % 10007) for i in range(30000))
RECORDS = [{"sku": i, "title": "widget %d" % i, "sizes": [1, 2, 3]} for i in range(25000)]


def pack_log():
    return zlib.compress(LOG, 9)


def export():
    return json.dumps(RECORDS)


def score(n):
    total = 0
    for k in range(16):
        total += k * n
    return total % 977


def rank():
    return sorted(range(30000), key=score)


def heartbeat():
    while True:
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop after N seconds (default: run until killed)")
    args = ap.parse_args()
    threading.Thread(target=heartbeat, name="heartbeat", daemon=True).start()
    end = None if args.seconds is None else time.monotonic() + args.seconds
    while end is None or time.monotonic() < end:
        pack_log()
        export()
        rank()


if __name__ == "__main__":
    main()
