"""Threads that wait for known reasons, for pyoffcpu's wait classification.

    python wait_reasons.py DIR [spinner]

Sets up (a cold file, a mapped file, helper threads), writes DIR/state.json
({"ready": true, "pid"}), waits for DIR/go, then runs, in the main thread:

  nap_in_sleep      time.sleep                        -> sleep
  wait_on_lock      a lock another thread releases    -> lock or condition
  wait_on_socket    recv on a socket another writes   -> socket I/O
  wait_on_pipe      os.read on a pipe another writes  -> pipe I/O
  wait_in_poll      select on a pipe nobody writes    -> poll/select/epoll
  read_cold_file    O_DIRECT reads of a file          -> disk I/O
  fault_pages_in    touches of a mapped file whose pages were dropped
                    (fsync + POSIX_FADV_DONTNEED, MADV_RANDOM)  -> page fault
  busy_on_cpu0      CPU work on CPU 0, next to a process spinning there
                    (wait_for_cpu sets it up)          -> waiting for a CPU
  spin_for_gil      two threads running Python at once -> the GIL

and writes DIR/truth.json: for each function the wall and CPU time (s) of
its waiting calls (for spin_for_gil, of each of its two threads: gil_a and
gil_b) and a bound on the steal time meanwhile; wall minus CPU is the
time it was off CPU, less up to that much (see Clock). With "spinner" it
is instead the process that spins on CPU 0.
"""
import json
import mmap
import os
import select
import socket
import subprocess
import sys
import threading
import time

DIR = sys.argv[1]
ROUNDS = 3
PAUSE = 0.3  # how long each helper makes the main thread wait
FILE_MB = 32
PAGE = mmap.PAGESIZE
truth = {}


def write(name, data):
    path = os.path.join(DIR, name)
    with open(path + ".tmp", "w") as fp:
        json.dump(data, fp)
    os.rename(path + ".tmp", path)


def later(action):
    """Does action PAUSE seconds after being called, in another thread."""
    t = threading.Timer(PAUSE, action)
    t.start()
    return t


def steal_ticks():
    """Each CPU's steal time so far (/proc/stat, in clock ticks), or []
    where the kernel does not say."""
    try:
        with open("/proc/stat") as fp:
            return [int(line.split()[8]) for line in fp
                    if line.startswith("cpu") and line[3].isdigit()]
    except (OSError, IndexError, ValueError):
        return []


class Clock:
    """Wall and CPU time of the waiting calls of one function, added up
    in truth[name] as {"wall", "cpu", "steal_max"}. In a VM the
    hypervisor may stop a CPU while the thread runs on it (steal time):
    the kernel leaves that out of the thread's CPU time, and the thread was
    not off CPU either, so wall - CPU overstates the time off CPU by up to
    the steal time meanwhile. steal_max bounds it: every CPU's steal, each
    CPU's counted in whole ticks (so one tick more)."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.s0 = steal_ticks()
        self.w0, self.c0 = time.monotonic(), time.thread_time()

    def __exit__(self, *exc):
        wall, cpu = time.monotonic() - self.w0, time.thread_time() - self.c0
        s1 = steal_ticks()
        t = truth.setdefault(self.name, {"wall": 0.0, "cpu": 0.0, "steal_max": 0.0})
        t["wall"] += wall
        t["cpu"] += cpu
        if len(s1) == len(self.s0) and s1:
            ticks = sum(b - a + 1 for a, b in zip(self.s0, s1))
            t["steal_max"] += min(wall, ticks / os.sysconf("SC_CLK_TCK"))
        else:  # unknown: wall - CPU is only an upper bound
            t["steal_max"] += wall


# Each function makes its waiting call itself: it is the innermost Python
# frame of the stacks that waited.
def nap_in_sleep():
    with Clock("nap_in_sleep"):
        time.sleep(PAUSE)


def wait_on_lock(lock):
    lock.acquire()
    later(lock.release)
    with Clock("wait_on_lock"):
        lock.acquire()
    lock.release()


def wait_on_socket(a, b):
    later(lambda: b.send(b"x"))
    with Clock("wait_on_socket"):
        a.recv(1)


def wait_on_pipe(r, w):
    later(lambda: os.write(w, b"x"))
    with Clock("wait_on_pipe"):
        os.read(r, 1)


def wait_in_poll(r):
    with Clock("wait_in_poll"):
        select.select([r], [], [], PAUSE)


# The set-up and clean-up of the next two are the caller's: a wait there
# (for a CPU, on a loaded machine) would be charged to the measured
# function, outside what it measured.
def read_cold_file(fd, buf):
    with Clock("read_cold_file"):
        for off in range(0, FILE_MB << 20, 1 << 20):
            os.preadv(fd, [buf], off)


def read_cold(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT wants
    try:
        read_cold_file(fd, buf)
    finally:
        os.close(fd)
        buf.close()


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def fault_pages_in(m):
    total = 0
    with Clock("fault_pages_in"):
        for off in range(0, len(m), PAGE * 4):
            total += m[off]
    return total


def fault_in(path):
    with open(path, "rb") as fp:
        m = mmap.mmap(fp.fileno(), 0, access=mmap.ACCESS_READ)
    m.madvise(mmap.MADV_RANDOM)  # one page per fault, no read-ahead
    try:
        return fault_pages_in(m)
    finally:
        m.close()


def busy_on_cpu0():
    """Only the measured CPU work: the set-up around it waits too (the
    sleep's wake-up is runnable time on the busy CPU)."""
    with Clock("busy_on_cpu0"):
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.5:
            sum(range(200))


def wait_for_cpu():
    """CPU work on CPU 0, where a spinner runs: about half the time runnable."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {0})
    spinner = subprocess.Popen([sys.executable, os.path.abspath(__file__), DIR, "spinner"])
    time.sleep(0.3)  # the spinner is running
    busy_on_cpu0()
    spinner.kill()
    spinner.wait()
    os.sched_setaffinity(0, allowed)


def spin_for_gil(name):
    """Run in two threads at once: each waits for the GIL the other holds."""
    with Clock(name):
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            sum(range(200))


def both_spin_for_gil():
    threads = [threading.Thread(target=spin_for_gil, args=(n,)) for n in ("gil_a", "gil_b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def spinner():
    os.sched_setaffinity(0, {0})
    while True:
        pass


def main():
    cold = os.path.join(DIR, "cold.bin")
    mapped = os.path.join(DIR, "mapped.bin")
    for path in (cold, mapped):
        with open(path, "wb") as fp:
            fp.write(os.urandom(FILE_MB << 20))
    lock = threading.Lock()
    a, b = socket.socketpair()
    r, w = os.pipe()
    idle_r, _idle_w = os.pipe()
    drop_cache(mapped)
    write("state.json", {"ready": True, "pid": os.getpid()})
    while not os.path.exists(os.path.join(DIR, "go")):
        time.sleep(0.02)
    for _ in range(ROUNDS):
        nap_in_sleep()
        wait_on_lock(lock)
        wait_on_socket(a, b)
        wait_on_pipe(r, w)
        wait_in_poll(idle_r)
    read_cold(cold)
    fault_in(mapped)
    wait_for_cpu()
    both_spin_for_gil()
    write("truth.json", truth)


if __name__ == "__main__":
    if sys.argv[2:] == ["spinner"]:
        spinner()
    else:
        main()
