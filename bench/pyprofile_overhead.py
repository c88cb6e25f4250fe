#!/usr/bin/env python3
"""pyprofile's cost, measured on this machine (a benchmark, not a test).

Prints:
  - BPF run time per sample (the kernel's accounting, kernel.bpf_stats_enabled)
    on a stack 30 Python frames deep, at 999 Hz;
  - the slowdown of a CPU-bound workload profiled at 99 Hz and 999 Hz, as
    ratios to unprofiled runs interleaved with them in the same run (the
    machine is shared: only ratios are meaningful).

Usage: sudo bench/pyprofile_overhead.py [--python /usr/bin/python3.11]
       [--seconds 6] [--rounds 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD = os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build"))
PYPROFILE = os.path.join(BUILD, "tools", "pyprofile")
WORKLOAD = os.path.join(HERE, "deep_cpu.py")
sys.path.insert(0, HERE)
import smoke  # noqa: E402
from bpf_progs import bpf_stats  # noqa: E402


def run_workload(python, seconds, profile_hz=None):
    """Runs the workload; with profile_hz, under pyprofile -p. Returns
    (iterations per second, pyprofile stderr)."""
    wl = subprocess.Popen([python, WORKLOAD, str(seconds + 4)], stdout=subprocess.PIPE,
                          universal_newlines=True)
    err = ""
    if profile_hz:
        time.sleep(0.3)
        prof = subprocess.run([PYPROFILE, "-v", "-F", str(profile_hz), "-f", "-p", str(wl.pid),
                               str(int(seconds + 2))], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, universal_newlines=True)
        err = prof.stderr
    out, _ = wl.communicate()
    rate = float(re.search(r"iterations_per_second (\S+)", out).group(1))
    return rate, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), seconds=1, rounds=1)
    if os.geteuid() != 0:
        sys.exit("run as root")
    with bpf_stats():
        ratios = {99: [], 999: []}
        per_sample = []
        for r in range(args.rounds):
            for hz in (99, 999):
                base, _ = run_workload(args.python, args.seconds)
                prof, err = run_workload(args.python, args.seconds, hz)
                ratios[hz].append(prof / base)
                m = re.search(r"(\d+) ns per run, at most (\d+) ns per Python sample", err)
                if m and hz == 999:
                    per_sample.append((int(m.group(1)), int(m.group(2))))
                print("round %d, %4d Hz: %.1f it/s profiled vs %.1f unprofiled (ratio %.3f)"
                      % (r + 1, hz, prof, base, prof / base), flush=True)
    print()
    print("python: %s; stack depth 30; %d rounds of %.0f s" % (args.python, args.rounds,
                                                              args.seconds))
    for hz in (99, 999):
        med = statistics.median(ratios[hz])
        print("slowdown at %4d Hz: %.1f%% (median throughput ratio %.3f)"
              % (hz, 100 * (1 - med), med))
    if per_sample:
        runs = statistics.median(p[0] for p in per_sample)
        upper = statistics.median(p[1] for p in per_sample)
        print("BPF time per sample at 999 Hz: %.2f us per run, at most %.2f us per Python "
              "sample (30-frame stack)" % (runs / 1000, upper / 1000))


if __name__ == "__main__":
    main()
