"""bench/deep_cpu.py (30 frames deep, burn()) with the go-on-stdin protocol
of examples/demo/pingpong.py: timed only after a line on stdin."""
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
print("ready", flush=True)
sys.stdin.readline()
start = time.monotonic()
count = descend(30 - 2, start + seconds)
print("iterations_per_second %.1f" % (count / (time.monotonic() - start)), flush=True)
sys.stdin.read()
