#!/usr/bin/env python3
"""What pymem's growth mode costs a Python program that allocates (a
benchmark, not a test; it prints figures).

The workload (Debian's python3.11) builds 200,000 strings and an 8 MiB
bytearray, drops them, and again, ROUNDS times per run: every round gets
its memory from the kernel again (page faults), the worst case for pymem,
which works only when a page is made resident. Three modes, interleaved
over rounds: alone; under pymem -p (default: Python + native + kernel
stacks); under pymem --no-native -p; with tracemalloc started in the
workload (python -X tracemalloc), the in-process alternative. Prints the workload's time per mode, the
slowdown against alone, the page faults pymem counted, its cost per fault
(the difference in time over the faults, noisy on a shared machine; and
the BPF run time of its programs over the faults, from the kernel's
accounting, turned on for the run), and pymem's own peak RSS.

    sudo bench/pymem_growth.py [--rounds N] [--iters N]
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
from bpf_progs import TRACEPOINT, bpf_stats, prog_fds  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools",
                    "pymem")
PY = "/usr/bin/python3.11"
WORKLOAD = r"""
import sys, time
iters = int(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
t0 = time.perf_counter()
for _ in range(iters):
    strings = ["%0100d" % i for i in range(200000)]
    buf = bytearray(8 << 20)
    del strings, buf
print(time.perf_counter() - t0, flush=True)
sys.stdin.readline()
"""


def tool_figures(pid):
    """(BPF run time of pymem's tracepoint programs in ns, its peak RSS in KiB)"""
    bpf = sum(p.run_time_ns for p in prog_fds(pid) if p.prog_type == TRACEPOINT)
    with open("/proc/%d/status" % pid) as f:
        hwm = int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))
    return bpf, hwm


def run(mode, iters):
    """(seconds the workload took, pymem's stderr or '', BPF ns, its peak RSS in KiB)"""
    argv = [PY] + (["-X", "tracemalloc"] if mode == "tracemalloc" else []) + \
        ["-c", WORKLOAD, str(iters)]
    w = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         universal_newlines=True)
    w.stdout.readline()
    tool = None
    if mode.startswith("pymem"):
        flags = ["--no-native"] if mode == "pymem-no-native" else []
        tool = subprocess.Popen([TOOL] + flags + ["-p", str(w.pid)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True)
        for line in iter(tool.stdout.readline, ""):
            if line.startswith("Tracing"):
                break
    w.stdin.write("go\n")
    w.stdin.flush()
    took = float(w.stdout.readline())
    bpf, rss = tool_figures(tool.pid) if tool else (0, 0)
    w.stdin.close()
    w.wait()
    err = ""
    if tool:
        _, err = tool.communicate(timeout=120)
    return took, err, bpf, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), rounds=1, iters=1)
    if os.geteuid() != 0:
        sys.exit("needs root (pymem loads BPF programs)")
    times = {"alone": [], "pymem": [], "pymem-no-native": [], "tracemalloc": []}
    faults, bpf_ns, rss = {}, {}, []
    for _ in range(args.rounds):
        for mode in times:
            with bpf_stats():
                took, err, bpf, peak = run(mode, args.iters)
            times[mode].append(took)
            m = re.search(r"pymem: (\d+) page faults made pages resident", err)
            if m:
                faults.setdefault(mode, []).append(int(m.group(1)))
                bpf_ns.setdefault(mode, []).append(bpf / max(1, int(m.group(1))))
                rss.append(peak)
    alone = statistics.median(times["alone"])
    print("workload: %d x (200,000 strings of 100 characters + 8 MiB bytearray), "
          "%d rounds, %s" % (args.iters, args.rounds, time.strftime("%Y-%m-%d")))
    for mode, t in times.items():
        med = statistics.median(t)
        print("%-16s %.3f s (median; %s)  slowdown %.2fx" % (
            mode, med, ", ".join("%.3f" % x for x in t), med / alone))
    for mode, counted in faults.items():
        f = statistics.median(counted)
        extra = statistics.median(times[mode]) - alone
        print("%s: %d page faults counted per run (median); %.2f us per fault from the "
              "slowdown; BPF %.2f us per fault (kernel accounting, median; every program "
              "of the tool over the faults: an upper bound)" % (
                  mode, f, 1e6 * extra / f if f else 0,
                  statistics.median(bpf_ns[mode]) / 1000))
    if rss:
        print("pymem's peak RSS: %d KiB" % max(rss))


if __name__ == "__main__":
    main()
