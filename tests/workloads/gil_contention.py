"""GIL contention with known shape, for pygil's tests.

    python gil_contention.py DIR MODE SECONDS

MODE is one of
  spinners  four threads spinning in pure Python (each should wait for the
            GIL about 3/4 of its time);
  single    one thread spinning alone (waits ~never);
  io        one spinning thread and one doing blocking I/O (a 1 ms select)
            in a loop: after each I/O it must wait to get the GIL back.
Writes DIR/state.json ({"pid", "ready", "threads": {role: native id}}),
waits for DIR/go, runs SECONDS, then rewrites the state with "io_ops" (the
I/O calls made), "span" (seconds from go to stop), "cpu" ({role: CPU
seconds each thread used meanwhile}) and "done". Its threads then stay
alive, idle, so the test can read their scheduler statistics, until
DIR/quit appears; then it exits.
"""
import json
import os
import select
import sys
import threading
import time

DIR, MODE, SECONDS = sys.argv[1], sys.argv[2], float(sys.argv[3])
started = threading.Event()
go = threading.Event()
stop = threading.Event()
quit = threading.Event()
tids = {}
cpu = {}
io_ops = [0]


def write_state(**extra):
    state = {"pid": os.getpid(), "threads": tids}
    state.update(extra)
    tmp = os.path.join(DIR, "state.json.tmp")
    with open(tmp, "w") as fp:
        json.dump(state, fp)
    os.rename(tmp, os.path.join(DIR, "state.json"))


def native_id():
    return threading.get_native_id() if hasattr(threading, "get_native_id") else 0


def spin_pure(role):
    tids[role] = native_id()
    go.wait()
    t0 = time.thread_time()
    n = 0
    while not stop.is_set():
        for i in range(200):
            n += i * i
    cpu[role] = time.thread_time() - t0
    quit.wait()
    return n


def io_in_loop(role):
    tids[role] = native_id()
    go.wait()
    t0 = time.thread_time()
    while not stop.is_set():
        select.select([], [], [], 0.001)
        io_ops[0] += 1
    cpu[role] = time.thread_time() - t0
    quit.wait()


def main():
    roles = {"spinners": [("spinner-%d" % i, spin_pure) for i in range(4)],
             "single": [("spinner-0", spin_pure)],
             "io": [("spinner-0", spin_pure), ("io", io_in_loop)]}[MODE]
    threads = [threading.Thread(target=fn, args=(role,), name=role) for role, fn in roles]
    for t in threads:
        t.start()
    while len(tids) < len(threads):
        time.sleep(0.01)
    write_state(ready=True)
    while not os.path.exists(os.path.join(DIR, "go")):
        time.sleep(0.01)
    go.set()
    t0 = time.monotonic()
    time.sleep(SECONDS)
    stop.set()
    span = time.monotonic() - t0
    while len(cpu) < len(threads):
        time.sleep(0.01)
    write_state(ready=True, done=True, io_ops=io_ops[0], span=span, cpu=cpu)
    while not os.path.exists(os.path.join(DIR, "quit")):
        time.sleep(0.01)
    quit.set()
    for t in threads:
        t.join()


main()
