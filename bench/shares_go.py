"""A CPU-bound workload with known shares, for bench/peer_austin.py: one
thread alternates burn_a (3 calls) and burn_b (2 calls of a shorter loop),
and measures the CPU time of each call itself (time.thread_time()).

    python3 shares_go.py SECONDS

Prints "ready", waits for a line on stdin, runs SECONDS, prints
"iterations_per_second N cpu_burn_a S cpu_burn_b S", then waits for stdin
to close.
"""
import sys
import time


def burn_a():
    s = 0
    for i in range(3000):
        s += i * i % 7
    return s


def burn_b():
    s = 0
    for i in range(2000):
        s += i * i % 7
    return s


def run(seconds):
    clock = time.thread_time
    cpu_a = cpu_b = 0.0
    n = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = clock()
        burn_a()
        burn_a()
        burn_a()
        t1 = clock()
        burn_b()
        burn_b()
        t2 = clock()
        cpu_a += t1 - t0
        cpu_b += t2 - t1
        n += 1
    return n, cpu_a, cpu_b


seconds = float(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
start = time.monotonic()
count, cpu_a, cpu_b = run(seconds)
print("iterations_per_second %.2f cpu_burn_a %.4f cpu_burn_b %.4f"
      % (count / (time.monotonic() - start), cpu_a, cpu_b), flush=True)
sys.stdin.read()
