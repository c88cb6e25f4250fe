#!/usr/bin/env python3
"""How long pymem --census takes per million live objects, and pymem's own
peak RSS (a benchmark, not a test; it prints figures).

    sudo bench/pymem_census.py [--objects N] [--runs R] [--python PATH]

Starts one Python process (default /usr/bin/python3.11) that keeps N
tracked objects (default 1,000,000: instances of a class with an
attribute, a third of them holding a small list, so containers and
instances both), then runs `pymem --census -p PID` R times (default 5)
against it and prints, per run and as medians: the objects the census
counted, its wall time, pymem's CPU time (user+sys from wait4), the time
per million objects and pymem's peak RSS (ru_maxrss). The walk's own time
as pymem measured it is in its report's first line.

The workload is killed at the end, also on errors and Ctrl-C.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smoke  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYMEM = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools",
                     "pymem")

WORKER = r'''
import sys, time
class Item:
    def __init__(self, i):
        self.i = i
n = int(sys.argv[1])
keep = [Item(i) for i in range(n * 2 // 3)] + [[i] for i in range(n // 3)]
print("ready", flush=True)
time.sleep(3600)
'''

HEAD = re.compile(r"Live objects of PID \d+ \(.*\): (\d+) objects, (\d+) bytes, .* \(walk ([\d.]+) s\)")


def one_run(pid):
    start = time.monotonic()
    proc = subprocess.Popen([PYMEM, "--census", "--top", "5", "-p", str(pid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    out, err = proc.stdout.read(), proc.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("pymem failed: %s" % err)
    m = HEAD.search(out)
    if not m:
        raise SystemExit("no census in pymem's output:\n%s" % out)
    return {"objects": int(m.group(1)), "walk": float(m.group(3)), "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--objects", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", default="/usr/bin/python3.11")
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), objects=20000, runs=1)
    if not os.access(PYMEM, os.X_OK):
        raise SystemExit("%s not built" % PYMEM)
    worker = subprocess.Popen([args.python, "-c", WORKER, str(args.objects)],
                              stdout=subprocess.PIPE, universal_newlines=True)
    try:
        if worker.stdout.readline().strip() != "ready":
            raise SystemExit("the workload did not start")
        rows = [one_run(worker.pid) for _ in range(args.runs)]
    finally:
        worker.kill()
        worker.wait()
    print("%-8s %10s %8s %8s %8s %12s %8s" % ("run", "objects", "walk_s", "wall_s", "cpu_s",
                                             "s/M objects", "rss_MB"))
    for i, r in enumerate(rows):
        print("%-8d %10d %8.3f %8.3f %8.3f %12.3f %8.1f" % (
            i + 1, r["objects"], r["walk"], r["wall"], r["cpu"],
            r["walk"] / max(r["objects"], 1) * 1e6, r["rss_mb"]))
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print("%-8s %10d %8.3f %8.3f %8.3f %12.3f %8.1f" % (
        "median", med["objects"], med["walk"], med["wall"], med["cpu"],
        med["walk"] / max(med["objects"], 1) * 1e6, med["rss_mb"]))
    print("python: %s" % args.python)


if __name__ == "__main__":
    main()
