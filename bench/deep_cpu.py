"""CPU-bound workload for benchmarks: burns in a function 30 Python frames
deep and reports its own throughput.

    python deep_cpu.py SECONDS [DEPTH]

Prints "iterations_per_second N" when done.
"""
import sys
import time


def burn():
    s = 0
    for i in range(2000):
        s += i * i % 7
    return s


def descend(depth, end):
    if depth > 1:
        return descend(depth - 1, end)
    n = 0
    while time.monotonic() < end:
        burn()
        n += 1
    return n


seconds = float(sys.argv[1])
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 30
start = time.monotonic()
count = descend(depth - 2, start + seconds)  # <module> and descend's caller count too
print("iterations_per_second %.1f" % (count / (time.monotonic() - start)))
