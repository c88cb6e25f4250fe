#!/usr/bin/env python3
"""What native stacks cost, measured on this machine (a benchmark, not a test).

For a stack of 30 Python frames and about 20 native ones (deep_native.py),
profiled at 999 Hz, in one run, pyprofile with native stacks against
pyprofile --no-native (Python and kernel frames only: what interpreters
without frame pointers had before) and against no profiler at all:
  - BPF time per sample (the kernel's accounting, kernel.bpf_stats_enabled);
  - the workload's slowdown, as throughput ratios to unprofiled runs
    interleaved with the profiled ones (the machine is shared: only ratios
    mean anything);
  - the unwind tables: rows, kernel memory, time to build and load them,
    and the start-up time they add (pyprofile -v);
  - the same tables for a process that imports NumPy, when python3-numpy
    is installed.

Usage: sudo bench/native_cost.py [--python /usr/bin/python3.11] [--seconds 6]
       [--rounds 3] [--baseline OTHER_BUILD_DIR] [--distinct]

--distinct: each of the stack's descend frames a function of its own,
entered again every 50 ms (deep_native.py distinct): some 30 code objects
a walk instead of 4.

BPF time per sample is the run time of the sampling program (and the
chain it tail-calls) over the workload's samples: an upper bound, as it
includes the runs on other processes and idle CPUs (cheap: a look-up).
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
WORKLOAD = os.path.join(HERE, "deep_native.py")
sys.path.insert(0, HERE)
import smoke  # noqa: E402
from bpf_progs import bpf_stats  # noqa: E402

WORKLOAD_ARGS = []  # ["distinct"] with --distinct
TABLES = re.compile(r"native unwind tables: (\d+) rows \((\d+) KiB\) of (\d+) files, built in "
                    r"(\d+) ms, loaded in (\d+) ms")


def run(python, seconds, hz=None, extra=(), fixed=None, pyprofile=PYPROFILE):
    """The workload alone, or under pyprofile -p at hz. (it/s, stderr).
    With hz, appends to fixed pyprofile's (start-up s, finish s, CPU s):
    exec to sampling, end of sampling to exit (drain, names, report), and
    its CPU time for the whole run (user + sys)."""
    wl = subprocess.Popen([python, WORKLOAD, str(seconds + 6)] + WORKLOAD_ARGS,
                          stdout=subprocess.PIPE, universal_newlines=True)
    err = ""
    if hz:
        time.sleep(0.3)
        duration = int(seconds + 2)
        t0 = time.monotonic()
        prof = subprocess.Popen([pyprofile, "-v", "-U", "-F", str(hz), "-f", "-p", str(wl.pid)]
                                + list(extra) + [str(duration)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                universal_newlines=True)
        err = prof.stderr.read()
        _, _, ru = os.wait4(prof.pid, 0)
        wall = time.monotonic() - t0
        prof.returncode = 0
        prof.stderr.close()
        up = startup_s(err)
        if fixed is not None and up is not None:
            fixed.append((up, wall - up - duration, ru.ru_utime + ru.ru_stime))
    out, _ = wl.communicate()
    return float(re.search(r"iterations_per_second (\S+)", out).group(1)), err


def startup_s(err):
    m = re.search(r"start-up ([\d.]+) s", err)
    return float(m.group(1)) if m else None


def numpy_tables(python):
    """pyprofile -v's table line for a process that imported NumPy, or why not."""
    probe = subprocess.run([python, "-c", "import numpy"], stderr=subprocess.DEVNULL)
    if probe.returncode:
        return "NumPy not installed for %s (apt install python3-numpy)" % python
    wl = subprocess.Popen([python, "-c", "import numpy, time\nwhile True: numpy.ones(1000).sum()"])
    try:
        time.sleep(2)
        err = subprocess.run([PYPROFILE, "-v", "-p", str(wl.pid), "1"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, universal_newlines=True).stderr
    finally:
        wl.kill()
    m = TABLES.search(err)
    return m.group(0) if m else "no table figures:\n" + err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", metavar="BUILD",
                    help="also another build's pyprofile (native stacks on), in the same rounds")
    ap.add_argument("--distinct", action="store_true",
                    help="a function of its own for each frame (deep_native.py distinct)")
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), seconds=1, rounds=1)
    if os.geteuid() != 0:
        sys.exit("run as root")
    if args.distinct:
        WORKLOAD_ARGS.append("distinct")
    modes = {"native": (PYPROFILE, []), "no-native": (PYPROFILE, ["--no-native"])}
    if args.baseline:
        modes["baseline"] = (os.path.join(args.baseline, "tools", "pyprofile"), [])
    ratio = {m: [] for m in modes}
    per_sample = {m: [] for m in modes}
    start = {m: [] for m in modes}
    tables = None
    fixed = []
    with bpf_stats():
        for tool, extra in modes.values():  # the BPF programs into the cache first
            run(args.python, 1, 999, extra, pyprofile=tool)
        for r in range(args.rounds):
            for mode, (tool, extra) in modes.items():
                base, _ = run(args.python, args.seconds)
                prof, err = run(args.python, args.seconds, 999, extra,
                                fixed if mode == "native" else None, tool)
                ratio[mode].append(prof / base)
                m = re.search(r"(\d+) ns per run, at most (\d+) ns per Python sample", err)
                if m:
                    per_sample[mode].append((int(m.group(1)), int(m.group(2))))
                if startup_s(err) is not None:
                    start[mode].append(startup_s(err))
                if mode == "native" and TABLES.search(err):
                    tables = TABLES.search(err)
                print("round %d, %-9s: %.1f it/s profiled vs %.1f unprofiled (ratio %.3f)"
                      % (r + 1, mode, prof, base, prof / base), flush=True)
    print()
    print("python: %s; 30 Python frames (%s), ~20 native; 999 Hz; %d rounds of %.0f s"
          % (args.python, "a function each" if args.distinct else "4 functions", args.rounds,
             args.seconds))
    for mode in modes:
        med = statistics.median(ratio[mode])
        got = per_sample[mode] or [(float("nan"), float("nan"))]
        run_ns = statistics.median(g[0] for g in got)
        py_ns = statistics.median(g[1] for g in got)
        print("%-9s: slowdown %.1f%% (throughput ratio %.3f), BPF %.2f us per sample (at most; "
              "%.2f us per run of every CPU's sampling, idle ones included), start-up %.2f s"
              % (mode, 100 * (1 - med), med, py_ns / 1000, run_ns / 1000,
                 statistics.median(start[mode]) if start[mode] else -1))
    if fixed:
        up, finish, cpu = (statistics.median(f[i] for f in fixed) for i in range(3))
        print("fixed user-space cost: start-up %.2f s (exec to sampling), finish %.2f s (end "
              "of sampling to exit: drain, names, report); pyprofile's CPU for a %d s run "
              "%.2f s (medians of %d runs)" % (up, finish, int(args.seconds + 2), cpu,
                                               len(fixed)))
    if tables:
        rows, kib, files, build, load = map(int, tables.groups())
        print("unwind tables of the workload's process: %d rows, %d KiB of kernel memory, "
              "%d files; built in %d ms, loaded in %d ms" % (rows, kib, files, build, load))
    print("with NumPy:", numpy_tables(args.python))


if __name__ == "__main__":
    main()
