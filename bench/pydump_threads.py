#!/usr/bin/env python3
"""How long pydump takes to dump a process of many threads (a benchmark,
not a test; it prints figures).

    sudo bench/pydump_threads.py [--threads N] [--depth D] [--runs R]
                                 [--python PATH] [--fifo]

Starts one Python process (default /usr/bin/python3.11) with N threads
(default 100), each D Python frames deep (default 20) with a few variables
per frame, then blocked: a quarter in time.sleep, a quarter waiting for a
lock, a quarter in recv on a local socket, a quarter in Event.wait (two
threads burn CPU instead). Then runs each pydump variant R times (default
10) against it and prints, per variant, the wall time (median, min, max),
pydump's CPU time (user+sys from wait4, median) and the output size. The
variants: plain, -l (variables), -n (native frames), -j -l -n (everything,
as JSON). Also the same process as a core (gcore), with --core.

--fifo runs pydump at SCHED_FIFO priority 50 (chrt -f 50): on a shared
machine the wall time is then pydump's own, not its wait for a CPU.

The workload is killed at the end, also on errors and Ctrl-C.
"""
import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smoke  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYDUMP = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools",
                      "pydump")

WORKER = r'''
import socket, sys, threading, time
n, depth = int(sys.argv[1]), int(sys.argv[2])
lock = threading.Lock(); lock.acquire()
event = threading.Event()
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1024)
started = threading.Semaphore(0)

def block(k):
    if k % 4 == 0:
        time.sleep(3600)
    elif k % 4 == 1:
        lock.acquire()
    elif k % 4 == 2:
        c = socket.create_connection(srv.getsockname())
        c.recv(10)
    else:
        event.wait()

def burn():
    x = 0
    while True:
        x += 1

def nest(level, k, payload):
    label = "level-%d" % level
    items = [level, k, label]
    if level == 0:
        started.release()
        if k < 2:
            burn()
        block(k)
    else:
        nest(level - 1, k, payload)

for k in range(n):
    threading.Thread(target=nest, args=(depth, k, {"k": k}), daemon=True).start()
for _ in range(n):
    started.acquire()
print("ready", flush=True)
event.wait()
'''


def run(argv):
    """(wall seconds, CPU seconds, output bytes) of one pydump run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    cp = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cp.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(argv), cp.stderr.decode(errors="replace")))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, len(cp.stdout)


def measure(name, argv, runs):
    results = [run(argv) for _ in range(runs)]
    walls = sorted(r[0] for r in results)
    print("%-28s wall median %7.1f ms (min %7.1f, max %7.1f)  cpu median %6.1f ms  output %8d bytes"
          % (name, 1000 * statistics.median(walls), 1000 * walls[0], 1000 * walls[-1],
             1000 * statistics.median(r[1] for r in results), results[-1][2]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=100)
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--fifo", action="store_true", help="run pydump at SCHED_FIFO 50")
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), threads=4, depth=3, runs=1)
    prefix = ["chrt", "-f", "50"] if args.fifo else []
    worker = subprocess.Popen([args.python, "-c", WORKER, str(args.threads), str(args.depth)],
                              stdout=subprocess.PIPE)
    try:
        assert worker.stdout.readline() == b"ready\n", "the workload did not start"
        time.sleep(1)
        pid = worker.pid
        print("workload: %s, pid %d, %d threads + main, %d Python frames each; pydump %s%s"
              % (args.python, pid, args.threads, args.depth + 3, PYDUMP,
                 " at SCHED_FIFO 50" if args.fifo else ""))
        for name, extra in (("plain", []), ("-l (variables)", ["-l"]),
                            ("-n (native frames)", ["-n"]), ("-j -l -n (all, JSON)", ["-j", "-l", "-n"])):
            measure(name, prefix + [PYDUMP] + extra + ["-p", str(pid)], args.runs)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["gcore", "-o", os.path.join(tmp, "core"), str(pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            core = os.path.join(tmp, "core.%d" % pid)
            print("core: %d MB (gcore)" % (os.path.getsize(core) >> 20))
            measure("--core -l -n", prefix + [PYDUMP, "--core", core, "-l", "-n"], args.runs)
    finally:
        worker.kill()
        worker.wait()


if __name__ == "__main__":
    main()
