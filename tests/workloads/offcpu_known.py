"""Off-CPU workload with known blocked times, for pyoffcpu's accuracy test.

    python offcpu_known.py DIR [CYCLES [PROC_FD]]

Writes DIR/state.json ({"pid", "ready"}) and waits for DIR/go to appear
(so the tracer is attached before anything is measured). Then:
  - the main thread runs CYCLES cycles of nap_in_sleep() (time.sleep 40 ms)
    and wait_on_pipe() (reads a pipe a writer thread answers 30 ms later);
  - a second thread loops in wait_in_select() (select() with a 50 ms timeout
    on a socket that never gets data) until the main thread is done. Its
    native thread id is in state.json as "select_tid" (3.8+).
Each function notes the time its blocking call was blocked in "calls"
(per function, the list of each call's blocked seconds), written with
their sums ("truth") to DIR/state.json before the process exits: the call's
wall time less the time the thread ran or waited for a CPU meanwhile (on a
loaded machine a woken thread may wait long for a CPU, which pyoffcpu
counts as runnable, not blocked), by the scheduler's accounting of the
thread: thread-self/schedstat of procfs, read through PROC_FD (a directory
descriptor of the host's /proc: a chroot has none) or else /proc; the
wall time alone where neither can be read.
"""
import ctypes
import json
import os
import select
import socket
import sys
import threading
import time

DIR = sys.argv[1]
CYCLES = int(sys.argv[2]) if len(sys.argv) > 2 else 30
PROC_FD = int(sys.argv[3]) if len(sys.argv) > 3 else None
LIBC = ctypes.PyDLL(None)
LIBC.pread.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_long]
LIBC.pread.restype = ctypes.c_ssize_t
local = threading.local()
calls = {"nap_in_sleep": [], "wait_on_pipe": [], "wait_in_select": []}
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


def schedstat_fd():
    """This thread's schedstat, opened once per thread, or -1."""
    if not hasattr(local, "fd"):
        try:
            if PROC_FD is None:
                local.fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
            else:
                local.fd = os.open("thread-self/schedstat", os.O_RDONLY, dir_fd=PROC_FD)
        except OSError:
            local.fd = -1
    return local.fd


def on_cpu_or_runnable():
    """Seconds this thread has run or waited for a CPU, or None if unknown.
    Read by a call that keeps the GIL (ctypes.PyDLL): os.read would let it
    go, and the wait to get it back, a CPU included, would fall outside the
    call's wall time but inside this count."""
    fd = schedstat_fd()
    if fd < 0:
        return None
    buf = ctypes.create_string_buffer(128)
    n = LIBC.pread(fd, buf, 127, 0)
    try:
        run, delay = buf.raw[:max(n, 0)].split()[:2]
        return (int(run) + int(delay)) / 1e9
    except ValueError:
        return None


def note_blocked(name, t0, busy0):
    """Adds to NAME's calls the seconds blocked since monotonic T0, when
    on_cpu_or_runnable() said BUSY0."""
    t1 = time.monotonic()
    busy1 = on_cpu_or_runnable()
    busy = busy1 - busy0 if busy0 is not None and busy1 is not None else 0.0
    calls[name].append(max(0.0, t1 - t0 - busy))


def nap_in_sleep():
    busy0, t0 = on_cpu_or_runnable(), time.monotonic()
    time.sleep(0.04)
    note_blocked("nap_in_sleep", t0, busy0)


def wait_on_pipe(req_w, resp_r):
    os.write(req_w, b"?")
    busy0, t0 = on_cpu_or_runnable(), time.monotonic()
    os.read(resp_r, 1)
    note_blocked("wait_on_pipe", t0, busy0)


def pipe_writer_delay(req_r, resp_w):
    while os.read(req_r, 1):
        time.sleep(0.03)
        os.write(resp_w, b"!")


def wait_in_select():
    if hasattr(threading, "get_native_id"):
        select_tid.append(threading.get_native_id())
    schedstat_fd()
    go.wait()
    a, b = socket.socketpair()
    while not done.is_set():
        busy0, t0 = on_cpu_or_runnable(), time.monotonic()
        select.select([a], [], [], 0.05)
        note_blocked("wait_in_select", t0, busy0)
    a.close()
    b.close()


def wait_for_go():
    while not os.path.exists(os.path.join(DIR, "go")):
        time.sleep(0.01)


def main():
    # no forced GIL switches: a thread gives the GIL up only to block, never
    # between its clock and its schedstat reads (a wait to get it back there
    # would count in one and not the other)
    sys.setswitchinterval(1.0)
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    threading.Thread(target=pipe_writer_delay, args=(req_r, resp_w), daemon=True).start()
    selector = threading.Thread(target=wait_in_select)
    selector.start()
    while not select_tid and hasattr(threading, "get_native_id"):
        time.sleep(0.001)
    schedstat_fd()
    write_state(ready=True)
    wait_for_go()
    go.set()
    for _ in range(CYCLES):
        nap_in_sleep()
        wait_on_pipe(req_w, resp_r)
    done.set()
    selector.join()
    write_state(ready=True, truth={name: sum(c) for name, c in calls.items()}, calls=calls)


main()
