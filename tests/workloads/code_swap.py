"""One function whose code object is replaced again and again. Generation
k of f's code is a copy of one code object (code.replace) that begins
OFFSETS[k % 4] lines further down "swapped.py", so that its loop runs at
other lines in each; a copy shares its name, file name and line table
with the others, and is mostly made where the one before the last was
(freed when its successor took its place): the same address, the same
strings, only the first line number differs. caller() calls f in a
loop from one call site, which the interpreter specializes: from 3.11 f
gets a version again after each swap. Each generation runs for SLICE
seconds of CPU time, the whole for SECONDS (default 60).

    python code_swap.py [SECONDS] [SLICE]

f's hot lines in generation k: OFFSETS[k % 4] + 4 (the for) and + 5.
"""
import sys
import time

SOURCE = """
def f():
    s = 0
    for i in range(200):
        s += i
    return s
"""
OFFSETS = (0, 10, 20, 30)


def f():
    return 0


def compiled():
    names = {}
    exec(compile(SOURCE, "swapped.py", "exec"), names)
    return names["f"].__code__


BASE = compiled()


def generation(k):
    return BASE.replace(co_firstlineno=BASE.co_firstlineno + OFFSETS[k % len(OFFSETS)])


def caller(until):
    n = 0
    while time.process_time() < until:
        for _ in range(50):
            f()
        n += 1
    return n


seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60
slice_ = float(sys.argv[2]) if len(sys.argv) > 2 else 0.1
end = time.monotonic() + seconds
k = 0
while time.monotonic() < end:
    f.__code__ = generation(k)
    caller(time.process_time() + slice_)
    k += 1
