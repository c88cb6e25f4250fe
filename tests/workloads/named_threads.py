"""Threads with Python names longer than an OS name can be, for the tools'
thread identity (tests/test_thread_names.py).

    python named_threads.py DIR

Two threads named NAMES spin in pure Python (each waits for the GIL while
the other holds it); the main thread sleeps. Writes DIR/state.json
({"pid", "ready", "threads": {name: native id}}) once both run, then runs
until killed.
"""
import json
import os
import sys
import threading
import time

NAMES = ("gil-cruncher-alpha", "gil-cruncher-bravo")  # > 15 bytes: not an OS name
DIR = sys.argv[1]
tids = {}


def native_id():
    return threading.get_native_id() if hasattr(threading, "get_native_id") else 0


def crunch():
    tids[threading.current_thread().name] = native_id()
    n = 0
    while True:
        for i in range(200):
            n += i * i


for name in NAMES:
    threading.Thread(target=crunch, name=name, daemon=True).start()
while len(tids) < len(NAMES):
    time.sleep(0.01)
tmp = os.path.join(DIR, "state.json.tmp")
with open(tmp, "w") as fp:
    json.dump({"pid": os.getpid(), "ready": True, "threads": tids}, fp)
os.rename(tmp, os.path.join(DIR, "state.json"))
while True:
    time.sleep(1)
