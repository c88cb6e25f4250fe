#!/usr/bin/env python3
"""Memory demo for pymem: a service whose memory grows, in two places.

The main thread handles requests, one every 10 ms:

    remember_session   keeps every request's session record in a dict
                       that nothing ever trims (a leak: about 1 KB each)
    render_report      builds a 1 MiB bytearray for every 50th request
                       and keeps the last 64 (a cache that levels off at
                       64 MiB)

    python3 memory_demo.py [--seconds N]     (default: run until killed)

Runs on Python 3.8+.
"""
import argparse
import time

sessions = {}
reports = []


def remember_session(n):
    sessions[n] = {"id": n, "user": "user%d" % (n % 1000), "payload": "x" * 900}


def render_report(n):
    report = bytearray(1 << 20)  # zeroed: every page is touched
    report[0] = n & 0xff
    reports.append(report)
    del reports[:-64]


def handle(n):
    remember_session(n)
    if n % 50 == 0:
        render_report(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0)
    args = ap.parse_args()
    end = time.monotonic() + args.seconds if args.seconds else None
    n = 0
    while end is None or time.monotonic() < end:
        handle(n)
        n += 1
        time.sleep(0.01)


if __name__ == "__main__":
    main()
