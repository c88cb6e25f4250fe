#!/usr/bin/env python3
"""Context-switch-heavy workload: two threads pass a byte back and forth
through two pipes, so every round trip blocks and wakes each thread once.

    python3 pingpong.py [SECONDS] [--go-on-stdin]

Prints "round_trips_per_second N" at the end (used to measure what
pyoffcpu costs a program that switches very often). With --go-on-stdin it
starts the threads, prints "ready", waits for a line on standard input
before it starts timing, and after printing its result waits for the end
of standard input before it exits (so a benchmark can attach a tracer
first and read the tracer's counters before the process is gone).
Runs on Python 3.8+.
"""
import os
import sys
import threading
import time


def pong(ping_r, pong_w):
    while os.read(ping_r, 1) == b"p":
        os.write(pong_w, b"o")


def ping(ping_w, pong_r, seconds):
    trips = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(100):
            os.write(ping_w, b"p")
            os.read(pong_r, 1)
        trips += 100
    os.write(ping_w, b"q")
    return trips


def main():
    args = [a for a in sys.argv[1:] if a != "--go-on-stdin"]
    controlled = len(args) < len(sys.argv) - 1
    seconds = float(args[0]) if args else 5.0
    ping_r, ping_w = os.pipe()
    pong_r, pong_w = os.pipe()
    t = threading.Thread(target=pong, args=(ping_r, pong_w), name="pong")
    t.start()
    if controlled:
        print("ready", flush=True)
        sys.stdin.readline()
    t0 = time.monotonic()
    trips = ping(ping_w, pong_r, seconds)
    elapsed = time.monotonic() - t0
    t.join()
    print("round_trips_per_second %.1f" % (trips / elapsed), flush=True)
    if controlled:
        sys.stdin.read()


if __name__ == "__main__":
    main()
