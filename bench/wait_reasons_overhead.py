#!/usr/bin/env python3
"""What pyoffcpu's wait-reason tracking costs a system call (a benchmark,
not a test; it prints figures).

pyoffcpu tells why a thread waited from the system call it is in, which it
reads from the thread's saved user registers as it switches out; the only
system calls that run a program for it are close, dup2 and dup3 (a
descriptor's kind forgotten). Until 2026-11-29 a raw sys_enter program ran
at every system call of the machine (+0.78 us per call of an untraced
process); this measures what is left, per system call of another kind:

  traced    a traced Python process calling os.getppid() in a loop
  untraced  a small C program calling getppid() in a loop, not traced

in three modes, interleaved over rounds: no tool; pyoffcpu --no-reasons
(sched_switch and wakeup programs only); pyoffcpu (with the descriptor
programs). The cost of reason tracking is the difference between the last
two; the kernel's own accounting of the two programs (turned on for the
run) is printed too.

    sudo bench/wait_reasons_overhead.py [--rounds N] [--calls N]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smoke  # noqa: E402
from bpf_progs import bpf_stats  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools",
                    "pyoffcpu")
PY = "/usr/bin/python3.11"
PY_LOOP = r"""
import os, sys, time
n = int(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
t0 = time.perf_counter_ns()
for _ in range(n):
    os.getppid()
print((time.perf_counter_ns() - t0) / n, flush=True)
sys.stdin.readline()
"""
C_LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	long n = atol(argv[1]);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
"""
MODES = ("none", "--no-reasons", "reasons")


def build_c_loop(d):
    src, exe = os.path.join(d, "loop.c"), os.path.join(d, "loop")
    with open(src, "w") as fp:
        fp.write(C_LOOP)
    subprocess.run(["cc", "-O2", "-o", exe, src], check=True)
    return exe


def one_round(mode, calls, c_loop):
    """(ns per traced call, ns per untraced call, BPF stats lines)"""
    py = subprocess.Popen([PY, "-c", PY_LOOP, str(calls)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, universal_newlines=True)
    assert py.stdout.readline().strip() == "ready"
    tool = None
    if mode != "none":
        args = [TOOL, "-v", "-f", "-p", str(py.pid)]
        if mode == "--no-reasons":
            args.insert(1, "--no-reasons")
        tool = subprocess.Popen(args + ["-o", os.devnull], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True)
        header = tool.stdout.readline()
        assert header.startswith("Tracing"), header + tool.stderr.read()
    py.stdin.write("go\n")
    py.stdin.flush()
    traced = float(py.stdout.readline())
    untraced = float(subprocess.run([c_loop, str(calls)], stdout=subprocess.PIPE,
                                    check=True, universal_newlines=True).stdout)
    stats = []
    if tool:
        tool.send_signal(2)
        _, err = tool.communicate(timeout=60)
        stats = re.findall(r"BPF sys_e\w+ program: .*", err)
    py.stdin.write("end\n")
    py.stdin.flush()
    py.wait()
    return traced, untraced, stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=2000000)
    smoke.option(ap)
    a = smoke.apply(ap.parse_args(), rounds=1, calls=20000)
    if os.geteuid() != 0:
        sys.exit("run as root")
    results = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory() as d:
        c_loop = build_c_loop(d)
        for r in range(a.rounds):
            for mode in MODES:
                traced, untraced, stats = one_round(mode, a.calls, c_loop)
                results[mode].append((traced, untraced))
                print("round %d %-13s traced %7.1f ns/call  untraced %7.1f ns/call  %s" % (
                    r + 1, mode, traced, untraced, "; ".join(stats)))
    med = {m: (statistics.median(t for t, _ in v), statistics.median(u for _, u in v))
           for m, v in results.items()}
    print("\nmedians over %d rounds of %d getppid() calls:" % (a.rounds, a.calls))
    for m in MODES:
        print("  %-13s traced %7.1f ns/call  untraced %7.1f ns/call" % (m, *med[m]))
    print("reason tracking costs (reasons - --no-reasons): traced %+.1f ns per system call, "
          "untraced %+.1f ns per system call" % (
              med["reasons"][0] - med["--no-reasons"][0],
              med["reasons"][1] - med["--no-reasons"][1]))


if __name__ == "__main__":
    with bpf_stats():
        main()
