#!/usr/bin/env python3
"""What pymem --gc costs the traced process (a benchmark, not a test; it
prints figures).

The exact method puts a uprobe on CPython's gc__start and gc__done probes
and walks the Python stack at each start; the interpreter also does a
little more once the probes' semaphores are set. Two workloads on the
host's Debian python3.11 (which has the probes), each with no tool and
under pymem --gc -f, interleaved over rounds:

  per-collection  gc.collect(0) on an empty young generation, in a loop:
                  nearly nothing but the collection's fixed cost, so the
                  difference is the probes' cost per collection
  cycles          an allocation-heavy loop of small reference cycles with
                  automatic collection on (the collection-heavy case): the
                  slowdown a real program sees

    sudo bench/pymem_gc.py [--rounds N] [--collections N] [--seconds S]
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smoke  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools",
                    "pymem")
PY = "/usr/bin/python3.11"
WORKLOAD = r"""
import gc, sys, time
mode, n = sys.argv[1], int(sys.argv[2])
class Node:
    def __init__(self):
        self.me = self
print("ready", flush=True)
sys.stdin.readline()
t0 = time.perf_counter_ns()
if mode == "per-collection":
    for _ in range(n):
        gc.collect(0)
    done = n
else:
    done = 0
    for _ in range(n):
        Node()
        done += 1
print((time.perf_counter_ns() - t0) / done, sum(s["collections"] for s in gc.get_stats()),
      flush=True)
sys.stdin.readline()
"""
MODES = ("none", "pymem --gc")


def one_round(workload, n, traced):
    """(ns per iteration, collections the interpreter made in all)"""
    py = subprocess.Popen([PY, "-c", WORKLOAD, workload, str(n)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, universal_newlines=True)
    assert py.stdout.readline().strip() == "ready"
    tool = None
    if traced:
        tool = subprocess.Popen([TOOL, "--gc", "-f", "-p", str(py.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                universal_newlines=True)
        header = tool.stderr.readline()
        assert header.startswith("Tracing"), header + tool.stderr.read()
    py.stdin.write("go\n")
    py.stdin.flush()
    ns, collections = py.stdout.readline().split()
    py.stdin.write("end\n")
    py.stdin.flush()
    py.wait()
    if tool:
        tool.communicate(timeout=60)
    return float(ns), int(collections)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--collections", type=int, default=200000)
    ap.add_argument("--objects", type=int, default=5000000)
    smoke.option(ap)
    a = smoke.apply(ap.parse_args(), rounds=1, collections=2000, objects=50000)
    if os.geteuid() != 0:
        sys.exit("run as root")
    for workload, n in (("per-collection", a.collections), ("cycles", a.objects)):
        results = {m: [] for m in MODES}
        collections = 0
        for r in range(a.rounds):
            for mode in MODES:
                ns, collections = one_round(workload, n, mode != "none")
                results[mode].append(ns)
                print("%-14s round %d %-11s %8.1f ns per %s" % (
                    workload, r + 1, mode, ns,
                    "collection" if workload == "per-collection" else "object"))
        med = {m: statistics.median(v) for m, v in results.items()}
        base, traced = med["none"], med["pymem --gc"]
        if workload == "per-collection":
            print("%s: median %.1f ns per collection untraced, %.1f traced: the probes cost "
                  "%+.1f ns per collection\n" % (workload, base, traced, traced - base))
        else:
            print("%s: median %.1f ns per object untraced, %.1f traced: %.3fx (%d collections "
                  "per run, %.0f per second untraced)\n" % (
                      workload, base, traced, traced / base, collections,
                      collections / (base * n / 1e9)))


if __name__ == "__main__":
    main()
