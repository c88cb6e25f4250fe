"""CPU-bound workload with known shares, for pyprofile's accuracy test.

    python cpu_shares.py STATE.json

Runs three functions in turn, forever, and measures how much CPU time each
one takes with time.thread_time(). After a warm-up it writes STATE.json
({"pid", "ready"}); on SIGUSR1 it zeroes its counters (so the truth covers
exactly the profiled window), and it rewrites STATE.json with the measured
seconds per function every 0.2 s. The names contain non-ASCII letters on
purpose: the profiler must print them as UTF-8.
"""
import json
import os
import signal
import sys
import time

OUT = sys.argv[1]
spent = {"burn_main": 0.0, "burn_side": 0.0, "burn_ünïcode": 0.0}


def burn_main(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def burn_side(n):
    s = ""
    for i in range(n):
        s = s[-50:] + chr(65 + i % 26)
    return s


def burn_ünïcode(n):
    return sum(sorted(range(n), key=lambda x: -x)[:10])


def reset(signum, frame):
    for k in spent:
        spent[k] = 0.0


def write(ready):
    tmp = OUT + ".tmp"
    with open(tmp, "w") as fp:
        json.dump({"pid": os.getpid(), "ready": ready, "spent": spent}, fp)
    os.rename(tmp, OUT)


def main():
    signal.signal(signal.SIGUSR1, reset)
    work = [(burn_main, 30000), (burn_side, 12000), (burn_ünïcode, 8000)]
    start = last = time.monotonic()
    while True:
        for fn, n in work:
            t0 = time.thread_time()
            fn(n)
            spent[fn.__name__] += time.thread_time() - t0
        now = time.monotonic()
        if now - last > 0.2:
            write(now - start > 1.0)
            last = now


main()
