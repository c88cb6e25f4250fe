#!/usr/bin/env python3
"""What a hostile library costs the tools (a benchmark, not a test).

For each library of tests/elf_bombs.py, loaded by a process that works in
it (tests/workloads/hostile_library.py, host python3), runs pyprofile -p
PID for a few seconds and pydump -n -p PID, each under a watchdog that
kills it past a memory or time limit (the old tools grew to many GB on some
of them), and prints the wall time, the peak RSS (the tool's own, from
ru_maxrss) and how it ended. "truncate" is the notes library, cut short and
written back by its process meanwhile; it is run ROUNDS times.

Usage: sudo [PYBPF_BUILD=DIR] bench/hostile_elf.py [--kinds notes,huge,...]
       [--seconds 3] [--limit-mb 3000] [--timeout 300] [--rounds 5]
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, HERE)
import elf_bombs  # noqa: E402
import smoke  # noqa: E402
from profiling import run_measured  # noqa: E402

BUILD = os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build"))
WORKLOAD = os.path.join(REPO, "tests", "workloads", "hostile_library.py")


def start_workload(tmp, lib, truncate):
    args = [sys.executable, WORKLOAD, tmp, lib, "-1"] + (["--truncate"] if truncate else [])
    w = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(tmp, "state.json")):
        if time.monotonic() > deadline or w.poll() is not None:
            raise SystemExit("workload did not start")
        time.sleep(0.05)
    return w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kinds", default="plain,notes,huge,many,ehframe,bigcie,truncate")
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--limit-mb", type=int, default=3000)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    smoke.option(ap)
    a = smoke.apply(ap.parse_args(), kinds="plain,notes", seconds=1, rounds=1, timeout=120)
    tools = [("pyprofile", ["-f", "-p", "{pid}", str(a.seconds)]),
             ("pydump -n", ["-n", "-p", "{pid}"])]
    print("build: %s" % BUILD)
    for kind in a.kinds.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            lib = elf_bombs.make("notes" if kind == "truncate" else kind,
                                 os.path.join(tmp, "libbomb.so"))
            w = start_workload(tmp, lib, kind == "truncate")
            try:
                for name, args in tools:
                    exe = os.path.join(BUILD, "tools", name.split()[0])
                    argv = [exe] + [x.format(pid=w.pid) for x in args]
                    for _ in range(a.rounds if kind == "truncate" else 1):
                        rc, _, _, s, mb = run_measured(argv, a.timeout, a.limit_mb)
                        why = "exit %d" % rc if rc >= 0 else "signal %d" % -rc
                        if rc == -9:
                            why = "killed at %d MB or %d s" % (a.limit_mb, a.timeout)
                        print("%-9s %-10s %8.1f s %8.0f MB  %s" % (kind, name, s, mb, why),
                              flush=True)
            finally:
                w.kill()
                w.wait()
    print("(self: %.0f MB)" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


if __name__ == "__main__":
    main()
