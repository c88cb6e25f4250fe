#!/usr/bin/env python3
"""What --async costs pyprofile, measured on this machine (a benchmark, not a test).

Profiles the asyncio workload (tests/workloads/asyncio_tasks.py, cpu mode:
three tasks burning CPU between awaits, stacks about 15 frames deep) at
999 Hz, alternately with and without --async, and prints per variant:
  - BPF run time per sample (the kernel's accounting, kernel.bpf_stats_enabled,
    as pyprofile -v reports it);
  - the instructions the verifier went through for on_sample (its limit is
    1,000,000), read from the loaded program (bpf_prog_info.verified_insns).
The machine is shared: compare the variants of the same run only.

Usage: sudo bench/async_overhead.py [--python /usr/bin/python3.11]
       [--seconds 8] [--rounds 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import smoke  # noqa: E402
from bpf_progs import bpf_stats, verified_insns  # noqa: E402

REPO = os.path.dirname(HERE)
BUILD = os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build"))
PYPROFILE = os.path.join(BUILD, "tools", "pyprofile")
WORKLOAD = os.path.join(REPO, "tests", "workloads", "asyncio_tasks.py")

def profile(pid, seconds, tasks):
    """pyprofile -v -F 999 on pid; returns (ns per run, verified instructions)."""
    argv = [PYPROFILE, "-v", "-F", "999", "-f", "-p", str(pid)] + \
        (["--async"] if tasks else []) + [str(int(seconds))]
    prof = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            universal_newlines=True)
    insns = [None]

    def watch():  # once loaded, ask the kernel what the verifier did
        while prof.poll() is None and insns[0] is None:
            try:
                insns[0] = verified_insns(prof.pid)
            except OSError:
                pass
            time.sleep(0.5)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    _, err = prof.communicate()
    t.join(5)
    m = re.search(r"(\d+) ns per run", err)
    return (int(m.group(1)) if m else None), insns[0], err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), seconds=1, rounds=1)
    if os.geteuid() != 0:
        sys.exit("run as root")
    tmp = tempfile.mkdtemp()
    wl = subprocess.Popen([args.python, WORKLOAD, os.path.join(tmp, "state.json"), "cpu"])
    results = {False: [], True: []}
    insns = {}
    try:
        with bpf_stats():
            time.sleep(1)
            for r in range(args.rounds):
                for tasks in (False, True):
                    ns, n, err = profile(wl.pid, args.seconds, tasks)
                    if ns is None:
                        sys.exit("no BPF run time in pyprofile's output:\n" + err)
                    results[tasks].append(ns)
                    insns[tasks] = n or insns.get(tasks)
                    print("round %d, %-10s %5d ns per sample, %s instructions verified"
                          % (r + 1, "--async:" if tasks else "default:", ns, n), flush=True)
    finally:
        wl.kill()
    print()
    print("python: %s; asyncio workload (3 tasks, ~15 frames); %d rounds of %.0f s at 999 Hz"
          % (args.python, args.rounds, args.seconds))
    base, tasks = statistics.median(results[False]), statistics.median(results[True])
    print("BPF time per sample: %.2f us default, %.2f us with --async (%+.2f us)"
          % (base / 1000, tasks / 1000, (tasks - base) / 1000))
    print("on_sample instructions verified: %s default, %s with --async (limit 1000000)"
          % (insns.get(False), insns.get(True)))


if __name__ == "__main__":
    main()
