"""Short sleeps of a low-priority process on a busy machine, for the
test that pyoffcpu ends blocked time at the wakeup.

    nice -n 19 python wake_latency.py STATE.json NAPS

Writes STATE.json ({"pid", "ready"}), waits for SIGUSR1, then calls
nap_briefly(), which sleeps NAPS times for 2 ms, and rewrites STATE.json
with "requested" (the seconds asked for) and "wall" (the seconds the
sleeps took, wakeup latency included: with other processes hogging the
CPUs, a niced process waits for one after each wakeup), then exits.
"""
import json
import os
import signal
import sys
import time

OUT, NAPS = sys.argv[1], int(sys.argv[2])
NAP = 0.002
go = []


def write(**state):
    state["pid"] = os.getpid()
    with open(OUT + ".tmp", "w") as fp:
        json.dump(state, fp)
    os.rename(OUT + ".tmp", OUT)


def nap_briefly(naps):
    wall = 0.0
    for _ in range(naps):
        t0 = time.monotonic()
        time.sleep(NAP)
        wall += time.monotonic() - t0
    return wall


signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
write(ready=True)
while not go:
    time.sleep(0.01)
wall = nap_briefly(NAPS)
write(ready=True, done=True, requested=NAPS * NAP, wall=wall)
