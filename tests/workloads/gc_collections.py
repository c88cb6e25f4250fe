#!/usr/bin/env python3
"""Collections of known size, timed by the collector's own callbacks.

Usage: python gc_collections.py SCRATCH MODE [SECONDS]

Automatic collections are off (gc.disable()): every collection is one
this script asks for, so their number is known. It writes
{"ready": true} to SCRATCH/state.json, waits for SCRATCH/go, then:

  known   ROUNDS rounds: make K reference cycles (objects that refer to
          themselves), drop them, gc.collect(round % 3) from
          collect_generation(); SECONDS (default 3) apart in all.
  heavy   for SECONDS (default 3): gc.collect() over a large live heap
          (hundreds of thousands of tracked objects, made before "ready"),
          from collect_loop(): nearly all of its time in the collector,
          and on CPU little else. Meanwhile another
          thread hashes in hash_loop(), on CPU without the GIL (hashlib
          drops it for large buffers) while the main thread collects:
          it runs no collection.

In the known mode gc.callbacks time each collection
(time.perf_counter_ns, the monotonic clock BPF's clock is) and note its
generation and objects collected (collected + uncollectable, what gc__done
passes); in the heavy mode each gc.collect() call is timed instead (no
callback: a collection that runs Python code, as callbacks are, may hand
the GIL to the hashing thread while the collecting flag is set). It writes
{"done": true, "pid", "collections": [{"generation", "collected",
"start_ns", "duration_ns"}], "cpu_s", "wall_s", "process_cpu_s"} to
SCRATCH/truth.json and exits at once (os._exit: the interpreter's
finalization collects too). cpu_s and wall_s are the main thread's over
the measured part; process_cpu_s is every thread's CPU time from go to
that write, nearly all the CPU time the process had under a tool
started before go. Runs on Python 3.8+.
"""
import gc
import hashlib
import json
import os
import sys
import threading
import time

ROUNDS = 45
K = 20000

log = []
_open = {}


def on_gc(phase, info):
    now = time.perf_counter_ns()
    if phase == "start":
        _open["t"] = now
    elif "t" in _open:
        start = _open.pop("t")
        log.append({"generation": info["generation"],
                    "collected": info["collected"] + info["uncollectable"],
                    "start_ns": start, "duration_ns": now - start})


class Node:
    def __init__(self):
        self.me = self


def make_cycles(k):
    keep = [Node() for _ in range(k)]
    del keep


def collect_generation(gen):
    gc.collect(gen)


def known(seconds):
    pause = seconds / ROUNDS
    for i in range(ROUNDS):
        make_cycles(K)
        collect_generation(i % 3)
        time.sleep(pause)


def hash_loop(stop):
    data = b"x" * (1 << 20)
    while not stop.is_set():
        hashlib.sha256(data).digest()


def collect_loop(seconds, heap):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.perf_counter_ns()
        collected = gc.collect()
        log.append({"generation": 2, "collected": collected, "start_ns": start,
                    "duration_ns": time.perf_counter_ns() - start})
    return len(heap)


def write(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as fp:
        json.dump(data, fp)
    os.rename(tmp, path)


def main():
    scratch, mode = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
    gc.disable()
    gc.collect()
    # before the tools start: making it is no part of the loop's CPU time
    heap = [[i] for i in range(300000)] if mode != "known" else []
    write(os.path.join(scratch, "state.json"), {"ready": True, "pid": os.getpid()})
    go = os.path.join(scratch, "go")
    while not os.path.exists(go):
        time.sleep(0.01)
    process0 = time.process_time()
    if mode == "known":
        gc.callbacks.append(on_gc)
    stop = threading.Event()
    hasher = threading.Thread(target=hash_loop, args=(stop,), name="hasher")
    if mode != "known":
        hasher.start()
    cpu0, wall0 = time.thread_time(), time.monotonic()
    if mode == "known":
        known(seconds)
    else:
        collect_loop(seconds, heap)
    cpu, wall = time.thread_time() - cpu0, time.monotonic() - wall0
    if mode == "known":
        gc.callbacks.remove(on_gc)
    stop.set()
    if hasher.is_alive():
        hasher.join()
    del heap[:]  # freed here, not in the exit after the CPU time is read
    write(os.path.join(scratch, "truth.json"),
          {"done": True, "pid": os.getpid(), "collections": log,
           "cpu_s": cpu, "wall_s": wall, "process_cpu_s": time.process_time() - process0})


if __name__ == "__main__":
    main()
    # no finalization: its collections are not the ones this script knows
    os._exit(0)
