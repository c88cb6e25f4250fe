#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""A process stuck in the ways pydump must explain; writes the ground truth.

Usage: python stuck.py OUT.json [crash|stop]

Threads, each named (threading names):
  dead-a, dead-b   deadlocked: each holds one lock and waits for the other
  receiver         blocked in recv() on a connected local TCP socket
  sleeper          in time.sleep(1000)
  burner           burns CPU in pure Python
  MainThread       values(...) -> inner() (a closure) -> deep(3..0) -> Event.wait()

The main thread's frames hold variables of known values; OUT.json gives,
per frame, each variable's kind (arg, local, cell, free) and repr() as
pydump must print it (containers cut to 5 items, nesting to 2 levels).
OUT.json is written atomically once every thread is about to block, then
a little later. With "crash", a thread named "crasher" then enables
faulthandler (its report of every thread goes to stderr: the ground truth
of the crash), changes to the directory of OUT.json (where the kernel
writes "core") and reads address 0 through ctypes: SIGSEGV. With "stop",
it prints the same report and stops the process with SIGSTOP instead, for
gcore to take (machines whose core_pattern pipes cores elsewhere). Runs on
Python 3.8+.
"""
import faulthandler
import json
import os
import signal
import socket
import sys
import threading
import time

SLEEP = 1000
lock_a = threading.Lock()
lock_b = threading.Lock()
both_hold = threading.Barrier(3)
forever = threading.Event()
truth = {"pid": os.getpid(), "version": list(sys.version_info[:3]), "threads": {},
         "frames": []}
ready = threading.Semaphore(0)


class Payload:
    pass


def deadlocker(first, second):
    truth["threads"][threading.current_thread().name] = threading.get_native_id()
    with first:
        both_hold.wait()
        ready.release()
        second.acquire()


def receiver(conn):
    truth["threads"]["receiver"] = threading.get_native_id()
    ready.release()
    conn.recv(4096)


def sleeper(seconds):
    truth["threads"]["sleeper"] = threading.get_native_id()
    truth["sleep"] = {"seconds": seconds, "started": time.monotonic()}
    ready.release()
    time.sleep(seconds)


def burner():
    truth["threads"]["burner"] = threading.get_native_id()
    ready.release()
    n = 0
    while True:
        n += 1


def deep(level, payload):
    count = level * 10
    label = "level-%d" % level
    if level == 0:
        ready.release()
        forever.wait()
    else:
        deep(level - 1, payload)


def cut_int(v):
    s = str(v)
    return s if len(s) <= 40 else "%s...(%d digits)" % (s[:20], len(s))


def values(a, b=2, *rest, key=None, **extra):
    none, yes, no = None, True, False
    small, negative, zero = 42, -7, 0
    big, huge = 2 ** 100, 10 ** 50 + 1
    pi, tiny, large, neg_zero, inf, third = 3.25, 1e-07, 1.5e300, -0.0, float("inf"), 1 / 3
    text = 'it\'s "quoted"\n'
    uni = "h\u00e9llo w\u00f6rld \u2713"
    long_text = "x" * 100
    data = b"\x00ab\xff"
    tup, single, empty = (1, "a", None), (5,), ()
    lst, long_list, nested = [1, 2, 3], list(range(10)), [[[1]]]
    dct = {"k": 1, "z": [1, 2]}
    st, empty_set, fs = {7}, set(), frozenset({3})
    obj = Payload()
    captured = "cap"

    def inner(x):
        depth = x + 1
        deep(3, obj)
        return captured

    frame = {
        "function": "values",
        "vars": {
            "a": ["arg", repr(a)], "b": ["arg", repr(b)], "rest": ["arg", repr(rest)],
            "key": ["arg", repr(key)], "extra": ["arg", repr(extra)],
            "none": ["local", "None"], "yes": ["local", "True"], "no": ["local", "False"],
            "small": ["local", "42"], "negative": ["local", "-7"], "zero": ["local", "0"],
            "big": ["local", cut_int(big)], "huge": ["local", cut_int(huge)],
            "pi": ["local", repr(pi)], "tiny": ["local", repr(tiny)],
            "large": ["local", repr(large)], "neg_zero": ["local", repr(neg_zero)],
            "inf": ["local", repr(inf)], "third": ["local", repr(third)],
            "text": ["local", repr(text)], "uni": ["local", repr(uni)],
            "long_text": ["local", repr("x" * 60) + "...(100 chars)"],
            "data": ["local", repr(data)],
            "tup": ["local", repr(tup)], "single": ["local", repr(single)],
            "empty": ["local", repr(empty)],
            "lst": ["local", repr(lst)], "long_list": ["local", "[0, 1, 2, 3, 4, ...10 items]"],
            "nested": ["local", "[[[...1 item]]]"],
            "dct": ["local", repr(dct)], "st": ["local", repr(st)],
            "empty_set": ["local", "set()"], "fs": ["local", repr(fs)],
            "obj": ["cell", "<Payload at 0x%x>" % id(obj)],
            "captured": ["cell", repr(captured)],
            "inner": ["local", "<function at 0x%x>" % id(inner)],
        },
        # as co_varnames orders them: positional, keyword-only, *args, **kwargs
        "args": ["a", "b", "key", "rest", "extra"],
    }
    truth["frames"].append(frame)
    truth["frames"].append({"function": "values.<locals>.inner", "args": ["x"],
                            "vars": {"x": ["arg", "41"], "depth": ["local", "42"],
                                     "captured": ["free", repr(captured)],
                                     "obj": ["free", "<Payload at 0x%x>" % id(obj)]}})
    for level in (3, 2, 1, 0):
        truth["frames"].append({"function": "deep", "args": ["level", "payload"], "vars": {
            "level": ["arg", str(level)], "payload": ["arg", "<Payload at 0x%x>" % id(obj)],
            "count": ["local", str(level * 10)], "label": ["local", repr("level-%d" % level)]}})
    truth["frames"].reverse()   # innermost first, as pydump prints
    del frame, level            # unbound: pydump leaves them out, like locals()
    if len(sys.argv) > 2:
        threading.Thread(target=crash_soon, name="crasher", daemon=True).start()
    inner(41)


def crash_soon():
    """Once OUT.json is out: SIGSEGV in this thread (or SIGSTOP, see above)."""
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.05)
    time.sleep(0.5)
    os.chdir(os.path.dirname(os.path.abspath(sys.argv[1])))
    crash_here(sys.argv[2])


def crash_here(how):
    if how == "stop":
        faulthandler.dump_traceback(all_threads=True)
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSTOP)
        return
    import ctypes
    faulthandler.enable(all_threads=True)
    ctypes.string_at(0)


def write_truth():
    for _ in range(6):
        ready.acquire()
    time.sleep(0.3)   # each thread is inside its blocking call by now
    truth["main"] = threading.main_thread().native_id
    truth["locks"] = {"lock_a": id(lock_a), "lock_b": id(lock_b)}
    path = sys.argv[1]
    with open(path + ".tmp", "w") as fp:
        json.dump(truth, fp)
    os.rename(path + ".tmp", path)


def main():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    cli = socket.create_connection(srv.getsockname())
    conn, _ = srv.accept()
    truth["socket"] = {"fd": conn.fileno(),
                       "local": "%s:%d" % conn.getsockname()[:2],
                       "peer": "%s:%d" % conn.getpeername()[:2],
                       "client": cli.fileno()}
    truth["threads"]["MainThread"] = threading.get_native_id()
    for t in (threading.Thread(target=deadlocker, args=(lock_a, lock_b), name="dead-a"),
              threading.Thread(target=deadlocker, args=(lock_b, lock_a), name="dead-b"),
              threading.Thread(target=receiver, args=(conn,), name="receiver"),
              threading.Thread(target=sleeper, args=(SLEEP,), name="sleeper"),
              threading.Thread(target=burner, name="burner")):
        t.daemon = True
        t.start()
    both_hold.wait()
    threading.Thread(target=write_truth, name="reporter", daemon=True).start()
    values(1, 2, 3, key="k", opt=[1])


if __name__ == "__main__":
    main()
