"""CPU-bound workload for the native-stack benchmark: burns in a function
30 Python frames deep whose stack passes three times through C (sorted()
calling its key function), some 20 native frames, and reports its own
throughput.

    python deep_native.py SECONDS [distinct]

With "distinct", the 28 descend frames are 28 functions of their own
(d1..d28, the same calls on the same lines), and the stack is left and
entered again every 50 ms, as a server's request handlers are: a walk
meets some 30 code objects instead of 4, each called again and again.

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


def distinct_descend():
    """descend() as d28 .. d1, one function a frame."""
    text = []
    for depth in range(2, 29):
        if depth % 9 == 0:
            text.append("def d%d(end):\n    got = []\n"
                        "    sorted([%d], key=lambda d: got.append(d%d(end)))\n"
                        "    return got[0]\n" % (depth, depth, depth - 1))
        else:
            text.append("def d%d(end):\n    return d%d(end)\n" % (depth, depth - 1))
    text.append("def d1(end):\n    n = 0\n    while time.monotonic() < end:\n"
                "        burn()\n        n += 1\n    return n\n")
    names = {"time": time, "burn": burn}
    exec(compile("".join(text), __file__ + ":distinct", "exec"), names)
    return names["d28"]


seconds = float(sys.argv[1])
start = time.monotonic()
if sys.argv[2:] == ["distinct"]:
    top, count = distinct_descend(), 0
    while time.monotonic() < start + seconds:
        count += top(min(start + seconds, time.monotonic() + 0.05))
else:
    # 28 descend frames, 3 of them called back from sorted() (plus their
    # lambdas), <module>: 30 Python frames and more
    count = descend(28, start + seconds)
print("iterations_per_second %.1f" % (count / (time.monotonic() - start)))
