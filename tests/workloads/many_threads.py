"""A busy thread started first, then N idle threads.

    python many_threads.py STATE_FILE N SECONDS

The busy thread (spin_first) is the oldest, so it sits at the far end of
the interpreter's list of thread states, behind N newer ones. Writes
STATE_FILE ({"pid", "threads", "ready"}) once every thread runs, then
lives SECONDS.
"""
import json
import os
import sys
import threading
import time

STATE, N, SECONDS = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
stop = threading.Event()


def spin_first():
    n = 0
    while not stop.is_set():
        for i in range(500):
            n += i
    return n


def idle():
    stop.wait()


threads = [threading.Thread(target=spin_first, daemon=True)]
threads += [threading.Thread(target=idle, daemon=True) for _ in range(N)]
for t in threads:
    t.start()
tmp = STATE + ".tmp"
with open(tmp, "w") as fp:
    json.dump({"pid": os.getpid(), "threads": threading.active_count(), "ready": True}, fp)
os.rename(tmp, STATE)
time.sleep(SECONDS)
stop.set()
