"""CPU-bound workload for the native-stack benchmark: burns in a function
30 Python frames deep whose stack passes three times through C (sorted()
calling its key function), some 20 native frames, and reports its own
throughput.

    python deep_native.py SECONDS

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
        if depth % 9 == 0:
            # into C and back: sorted() calls the key function
            got = []
            sorted([depth], key=lambda d: got.append(descend(d - 1, end)))
            return got[0]
        return descend(depth - 1, end)
    n = 0
    while time.monotonic() < end:
        burn()
        n += 1
    return n


seconds = float(sys.argv[1])
start = time.monotonic()
# 28 descend frames, 3 of them called back from sorted() (plus their
# lambdas), <module>: 30 Python frames and more
count = descend(28, start + seconds)
print("iterations_per_second %.1f" % (count / (time.monotonic() - start)))
