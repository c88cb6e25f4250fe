"""A Python function whose time goes to the vDSO: tick() reads the
thread's CPU clock (time.thread_time), which the vDSO's clock_gettime
cannot answer itself and asks the kernel for with a system call made from
the vDSO's own code. Runs for SECONDS.

    python vdso_clock.py SECONDS
"""
import sys
import time


def tick():
    for _ in range(1000):
        time.thread_time()


def main():
    end = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < end:
        tick()


main()
