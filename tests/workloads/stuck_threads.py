"""Threads that stay blocked past the end of a trace, for the tools'
handling of intervals still open when a run ends.

    python stuck_threads.py DIR lock|gil

Writes DIR/state.json ({"pid", "ready", "lines"}) and waits for DIR/go.

lock: the main thread holds a lock. blocked_from_start() waits for it from
      before "ready" (a thread blocked since before any tracer started),
      blocked_after_go() from just after DIR/go appears (its time,
      monotonic, is "late_since" in state.json). Neither ever gets it.
gil:  after DIR/go, the main thread calls usleep() through ctypes.PyDLL,
      which keeps the GIL, for 60 s (its start, monotonic, is
      "holding_since"); wants_the_gil() (native thread id "waiter_tid")
      runs Python in a loop and so waits for the GIL all that time.
The process exits when DIR/quit appears (or after 120 s).
"""
import ctypes
import json
import os
import sys
import threading
import time

DIR = sys.argv[1]
MODE = sys.argv[2]
state = {"pid": os.getpid(), "lines": {}}
held = threading.Lock()
writing = threading.Lock()  # the waiter and the main thread both write state


def write_state(**extra):
    with writing:
        state.update(extra)
        tmp = os.path.join(DIR, "state.json.tmp")
        with open(tmp, "w") as fp:
            json.dump(state, fp)
        os.rename(tmp, os.path.join(DIR, "state.json"))


def line_of(marker):
    with open(__file__) as fp:
        for n, line in enumerate(fp, 1):
            if line.rstrip().endswith("# " + marker):
                return n
    raise LookupError(marker)


def wait_for(name, timeout=120):
    end = time.monotonic() + timeout
    while not os.path.exists(os.path.join(DIR, name)) and time.monotonic() < end:
        time.sleep(0.01)


def blocked_from_start():
    held.acquire()  # acquire: from start


def blocked_after_go():
    wait_for("go")
    write_state(late_since=time.monotonic())
    held.acquire()  # acquire: after go


def wants_the_gil():
    if hasattr(threading, "get_native_id"):
        write_state(waiter_tid=threading.get_native_id())
    n = 0
    while True:
        n += 1  # spins


def hold_gil_in_c(seconds):
    libc = ctypes.PyDLL(None)  # PyDLL: the GIL stays held during the call
    libc.usleep(int(seconds * 1e6))  # holds the GIL


def main():
    if MODE == "lock":
        held.acquire()
        for target in (blocked_from_start, blocked_after_go):
            threading.Thread(target=target, daemon=True).start()
        time.sleep(0.2)  # both threads are in their first wait
        write_state(ready=True, lines={"from start": line_of("acquire: from start"),
                                       "after go": line_of("acquire: after go")})
        wait_for("quit")
    else:
        threading.Thread(target=wants_the_gil, daemon=True).start()
        while "waiter_tid" not in state:
            time.sleep(0.01)
        write_state(ready=True, lines={"wants": line_of("spins"),
                                       "holds": line_of("holds the GIL")})
        wait_for("go")
        write_state(holding_since=time.monotonic())
        hold_gil_in_c(60)
    os._exit(0)


main()
