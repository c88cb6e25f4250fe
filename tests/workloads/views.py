"""A command for pyprofile's views (launched: pyprofile ... -- python views.py OUT).

Two threads, named alpha and beta (their kernel and Python names), each runs
its own function: alpha_work burns CPU on two lines in turn, beta_work
alternates CPU bursts (burn) with sleeps (nap). The main thread waits for
both. OUT (JSON) gets each thread's native id, alpha_work's def line and
its two hot lines, and per function the wall and CPU time it measured
itself: burn and nap (beta's), alpha_work (alpha's); for nap also the
sleep it asked for and its number of calls.
"""
import ctypes
import json
import sys
import threading
import time

ROUNDS = 8
truth = {}


def name_thread(name):
    # prctl(PR_SET_NAME): a chroot may have no /proc to write the name to
    ctypes.CDLL(None, use_errno=True).prctl(15, name.encode(), 0, 0, 0)


def account(name, w0, c0):
    t = truth.setdefault(name, {"wall": 0.0, "cpu": 0.0})
    t["wall"] += time.monotonic() - w0
    t["cpu"] += time.thread_time() - c0


def alpha_work(seconds):
    w0, c0 = time.monotonic(), time.thread_time()
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        sum(range(300))  # hot line 1
        sorted(range(300), key=int)  # hot line 2
    account("alpha_work", w0, c0)


def burn(seconds):
    w0, c0 = time.monotonic(), time.thread_time()
    while time.thread_time() - c0 < seconds:
        sum(range(300))
    account("burn", w0, c0)


def nap(seconds):
    w0, c0 = time.monotonic(), time.thread_time()
    time.sleep(seconds)
    account("nap", w0, c0)
    truth["nap"]["asked"] = truth["nap"].get("asked", 0.0) + seconds
    truth["nap"]["calls"] = truth["nap"].get("calls", 0) + 1


def alpha():
    name_thread("alpha")
    truth["alpha_tid"] = threading.get_native_id()
    alpha_work(1.0)


def beta():
    name_thread("beta")
    truth["beta_tid"] = threading.get_native_id()
    for _ in range(ROUNDS):
        burn(0.1)
        nap(0.1)


def main():
    lines = alpha_work.__code__.co_firstlineno
    src = open(__file__).read().splitlines()
    truth["alpha_def"] = lines
    truth["alpha_hot"] = [i + 1 for i, line in enumerate(src) if "# hot line" in line
                          and not line.lstrip().startswith("#") and "if" not in line]
    # the same Python names: the tools name threads by them (--threads)
    threads = [threading.Thread(target=alpha, name="alpha"),
               threading.Thread(target=beta, name="beta")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(sys.argv[1] + ".tmp", "w") as fp:
        json.dump(truth, fp)
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])


main()
