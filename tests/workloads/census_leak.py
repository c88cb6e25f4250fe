#!/usr/bin/env python3
"""A process whose live objects are known, for pymem --census.

Usage: python census_leak.py SCRATCH [SECONDS]

Module "leaky" (made at run time, so the classes are named
leaky.Node, leaky.Pair and leaky.Outer.Leak, a nested class):
  1. keeps 3000 Node (each with a list) and 1234 Pair (__slots__), then,
     quiescent (no other thread yet), counts every live instance of each
     class as len([o for o in gc.get_objects() if type(o) is T]) and
     writes SCRATCH/state.json {"ready": true, "truth": {name: count}};
  2. waits for SCRATCH/go (at most 60 s), then for SECONDS (default 5)
     keeps 200 more Outer.Leak instances every 0.1 s (2000 a second) while
     two threads allocate and free lists of dicts and small objects; each
     burst is logged as [time before, time after, count after], and
     SCRATCH/leak.json {"done": true, "bursts": [...], "rate": 2000} is
     written at the end. Then it idles until killed.
"""
import gc
import json
import os
import sys
import threading
import time
import types

SCRATCH = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
BURST, PERIOD = 200, 0.1

leaky = types.ModuleType("leaky")
exec(compile('''
class Outer:
    class Leak:
        def __init__(self, i):
            self.i = i

class Node:
    def __init__(self):
        self.kids = []

class Pair:
    __slots__ = ("a", "b")
    def __init__(self, a, b):
        self.a, self.b = a, b
''', "leaky.py", "exec"), leaky.__dict__)
sys.modules["leaky"] = leaky


def write(name, doc):
    tmp = os.path.join(SCRATCH, name + ".tmp")
    with open(tmp, "w") as fp:
        json.dump(doc, fp)
    os.rename(tmp, os.path.join(SCRATCH, name))


nodes = [leaky.Node() for _ in range(3000)]
pairs = [leaky.Pair(i, [i]) for i in range(1234)]
leaks = []
truth = {}
for cls in (leaky.Node, leaky.Pair, leaky.Outer.Leak):
    name = "%s.%s" % (cls.__module__, cls.__qualname__)
    truth[name] = len([o for o in gc.get_objects() if type(o) is cls])
write("state.json", {"ready": True, "truth": truth, "pid": os.getpid()})

deadline = time.monotonic() + 60
while not os.path.exists(os.path.join(SCRATCH, "go")) and time.monotonic() < deadline:
    time.sleep(0.02)

stop = threading.Event()


def churn():
    while not stop.is_set():
        junk = [{"k": [j], "v": (j, [j])} for j in range(50)]
        del junk
        time.sleep(0.001)


threads = [threading.Thread(target=churn) for _ in range(2)]
for t in threads:
    t.start()
bursts = []
end = time.time() + SECONDS
next_at = time.time()
while time.time() < end:
    before = time.time()
    leaks.extend(leaky.Outer.Leak(i) for i in range(BURST))
    bursts.append([before, time.time(), len(leaks)])
    next_at += PERIOD
    time.sleep(max(0.0, next_at - time.time()))
stop.set()
for t in threads:
    t.join()
write("leak.json", {"done": True, "bursts": bursts, "rate": BURST / PERIOD})
while True:
    time.sleep(1)
