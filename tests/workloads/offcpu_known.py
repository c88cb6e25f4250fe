"""Off-CPU workload with known blocked times, for pyoffcpu's accuracy test.

    python offcpu_known.py DIR [CYCLES]

Writes DIR/state.json ({"pid", "ready"}) and waits for DIR/go to appear
(so the tracer is attached before anything is measured). Then:
  - the main thread runs CYCLES cycles of nap_in_sleep() (time.sleep 40 ms)
    and wait_on_pipe() (reads a pipe a writer thread answers 30 ms later);
  - a second thread loops in wait_in_select() (select() with a 50 ms timeout
    on a socket that never gets data) until the main thread is done. Its
    native thread id is in state.json as "select_tid" (3.8+).
Each function adds the wall time of its blocking call to the truth, which
is written to DIR/state.json before the process exits.
"""
import json
import os
import select
import socket
import sys
import threading
import time

DIR = sys.argv[1]
CYCLES = int(sys.argv[2]) if len(sys.argv) > 2 else 30
truth = {"nap_in_sleep": 0.0, "wait_on_pipe": 0.0, "wait_in_select": 0.0}
done = threading.Event()
go = threading.Event()
select_tid = []


def write_state(**extra):
    state = {"pid": os.getpid(), "select_tid": select_tid[0] if select_tid else 0}
    state.update(extra)
    tmp = os.path.join(DIR, "state.json.tmp")
    with open(tmp, "w") as fp:
        json.dump(state, fp)
    os.rename(tmp, os.path.join(DIR, "state.json"))


def nap_in_sleep():
    t0 = time.monotonic()
    time.sleep(0.04)
    truth["nap_in_sleep"] += time.monotonic() - t0


def wait_on_pipe(req_w, resp_r):
    os.write(req_w, b"?")
    t0 = time.monotonic()
    os.read(resp_r, 1)
    truth["wait_on_pipe"] += time.monotonic() - t0


def pipe_writer_delay(req_r, resp_w):
    while os.read(req_r, 1):
        time.sleep(0.03)
        os.write(resp_w, b"!")


def wait_in_select():
    if hasattr(threading, "get_native_id"):
        select_tid.append(threading.get_native_id())
    go.wait()
    a, b = socket.socketpair()
    while not done.is_set():
        t0 = time.monotonic()
        select.select([a], [], [], 0.05)
        truth["wait_in_select"] += time.monotonic() - t0
    a.close()
    b.close()


def wait_for_go():
    while not os.path.exists(os.path.join(DIR, "go")):
        time.sleep(0.01)


def main():
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    threading.Thread(target=pipe_writer_delay, args=(req_r, resp_w), daemon=True).start()
    selector = threading.Thread(target=wait_in_select)
    selector.start()
    while not select_tid and hasattr(threading, "get_native_id"):
        time.sleep(0.001)
    write_state(ready=True)
    wait_for_go()
    go.set()
    for _ in range(CYCLES):
        nap_in_sleep()
        wait_on_pipe(req_w, resp_r)
    done.set()
    selector.join()
    write_state(ready=True, truth=truth)


main()
