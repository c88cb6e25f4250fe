#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Threads parked forever in known places; writes its own stacks as ground truth.

Usage: python known_stacks.py OUT.json

Every thread (main included) calls about_to_park() right before it blocks.
When all have done so, a reporter thread waits a little more (so each is
really inside its blocking call), snapshots sys._current_frames() and
writes OUT.json atomically (tmp file + rename):

  {"pid": os.getpid(), "version": [X, Y, Z], "executable": ...,
   "threads": [{"native_id": N, "ident": I, "name": "...", "main": bool,
                "frames": [[name, filename, lineno], ...innermost first]}]}

The reporter leaves itself out and then exits; the process stays parked until
killed. Names are co_qualname where it exists (3.11+), else co_name.
Runs on Python 3.8+.
"""
import json
import os
import select
import sys
import threading
import time

FOREVER = threading.Event()     # never set
BLOCKED = threading.Lock()      # never released
BLOCKED.acquire()
PARKING = threading.Semaphore(0)


def about_to_park():
    PARKING.release()


# 1. recursion, 50 frames of recurse(), parks on an Event
def recurse(n):
    if n > 1:
        return recurse(n - 1)
    about_to_park()
    FOREVER.wait()


# 2. a method (qualname Worker.run on 3.11+), parks in Lock.acquire (C)
class Worker:
    def __init__(self):
        self.lock = threading.Lock()
        self.lock.acquire()

    def run(self):
        about_to_park()
        self.lock.acquire()


# 3. a generator frame, driven by next(), parks inside its body
def numbers():
    about_to_park()
    BLOCKED.acquire()
    yield 1


def consume():
    gen = numbers()
    next(gen)


# 4. select() on the read end of a pipe nobody writes to
def wait_on_pipe():
    r, w = os.pipe()
    about_to_park()
    select.select([r], [], [])
    return w


# 5. nested function: outer.<locals>.inner
def outer():
    def inner():
        about_to_park()
        FOREVER.wait()
    inner()


# 6. non-ASCII identifiers
class Ünïcode:
    def 日本語(self):
        about_to_park()
        BLOCKED.acquire()


def grüße():
    Ünïcode().日本語()


# 7. time.sleep
def sleeper():
    about_to_park()
    time.sleep(100000)


# 8. deep recursion, 300 frames of deep()
def deep(n):
    if n > 1:
        return deep(n - 1)
    about_to_park()
    FOREVER.wait()


def frame_name(code):
    return getattr(code, "co_qualname", code.co_name)


def snapshot(exclude_ident):
    by_ident = {t.ident: t for t in threading.enumerate()}
    main_ident = threading.main_thread().ident
    threads = []
    for ident, f in sys._current_frames().items():
        if ident == exclude_ident:
            continue
        frames = []
        while f is not None:
            frames.append([frame_name(f.f_code), f.f_code.co_filename, f.f_lineno])
            f = f.f_back
        t = by_ident[ident]
        threads.append({"native_id": t.native_id, "ident": ident, "name": t.name,
                        "main": ident == main_ident, "frames": frames})
    threads.sort(key=lambda t: t["native_id"])
    return threads


def write_json_atomically(path, data):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as fp:
        json.dump(data, fp, ensure_ascii=False, indent=1)
        fp.flush()
        os.fsync(fp.fileno())
    os.rename(tmp, path)


def reporter(out, n_parked):
    for _ in range(n_parked):
        PARKING.acquire()
    time.sleep(0.5)
    data = {
        "pid": os.getpid(),
        "version": list(sys.version_info[:3]),
        "version_string": sys.version,
        "executable": sys.executable,
        "executable_realpath": os.path.realpath(sys.executable),
        "threads": snapshot(threading.get_ident()),
    }
    write_json_atomically(out, data)


def main():
    out = sys.argv[1]
    targets = [
        ("recursion", recurse, (50,)),
        ("method", Worker().run, ()),
        ("generator", consume, ()),
        ("select", wait_on_pipe, ()),
        ("nested", outer, ()),
        ("unicode", grüße, ()),
        ("sleeper", sleeper, ()),
        ("deep", deep, (300,)),
    ]
    for name, fn, args in targets:
        threading.Thread(target=fn, args=args, name=name, daemon=True).start()
    threading.Thread(target=reporter, args=(out, len(targets) + 1),
                     name="reporter", daemon=True).start()
    about_to_park()
    FOREVER.wait()


if __name__ == "__main__":
    main()
