#!/usr/bin/env python3
"""What pymem --alloc costs the process it traces, against tracemalloc on
the same workload (a benchmark, not a test; it prints figures).

The workload, in a loop: a bytearray of SIZE bytes made and freed (one libc
malloc and one free: over pymalloc's 512 bytes) and a few small objects
(pymalloc's, which --alloc does not see and tracemalloc does). Measured in
ns per iteration, in modes interleaved over rounds:

  none          no tool
  tracemalloc   tracemalloc.start() in the workload (1 frame)
  alloc         pymem --alloc -p PID (every allocation: uprobes on malloc's
                entry and return, free's entry; a Python and native stack
                walked per malloc)
  alloc-s100    pymem --alloc --sample 100 (the probes still fire on every
                call; 1 in 100 walks its stack)
  alloc-native  pymem --alloc --no-native (Python stacks only)

The difference from "none" per iteration is the cost of one malloc+free
pair under each tool. pymem's peak RSS (VmHWM) is printed too.

    sudo bench/pymem_alloc.py [--rounds N] [--iterations N] [--size BYTES]
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smoke  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools",
                    "pymem")
PY = os.environ.get("PYBPF_BENCH_PYTHON", "/usr/bin/python3")
WORKLOAD = r"""
import sys, time
n, size, traced = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "tracemalloc"
if traced:
    import tracemalloc
    tracemalloc.start()
def allocate(n, size):
    for i in range(n):
        b = bytearray(size)
        t = (i, i + 1, [i])
        del b, t
allocate(1000, size)  # warm
print("ready", flush=True)
sys.stdin.readline()
t0 = time.perf_counter_ns()
allocate(n, size)
print((time.perf_counter_ns() - t0) / n, flush=True)
sys.stdin.readline()
"""
MODES = {
    "none": None,
    "tracemalloc": None,
    "alloc": [],
    "alloc-s100": ["--sample", "100"],
    "alloc-native": ["--no-native"],
}


def peak_rss_kb(pid):
    with open("/proc/%d/status" % pid) as fp:
        for line in fp:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def one_round(mode, iterations, size):
    """(ns per iteration, pymem's peak RSS in KiB or None)"""
    py = subprocess.Popen([PY, "-c", WORKLOAD, str(iterations), str(size), mode],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          universal_newlines=True)
    tool, rss = None, None
    try:
        assert py.stdout.readline().strip() == "ready"
        if MODES[mode] is not None:
            tool = subprocess.Popen([TOOL, "--alloc", "-p", str(py.pid), "-o", os.devnull,
                                     "--format", "folded"] + MODES[mode],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    universal_newlines=True)
            for line in tool.stdout:
                if line.startswith("Tracing"):
                    break
            else:
                raise SystemExit("pymem did not start: %s" % tool.stderr.read())
        py.stdin.write("go\n")
        py.stdin.flush()
        ns = float(py.stdout.readline())
        if tool:
            rss = peak_rss_kb(tool.pid)
            tool.send_signal(signal.SIGINT)
            _, err = tool.communicate(timeout=120)
            if tool.returncode != 0:
                raise SystemExit("pymem failed: %s" % err)
        py.stdin.write("end\n")
        py.stdin.flush()
        py.wait(timeout=60)
        return ns, rss
    finally:
        if tool and tool.poll() is None:
            tool.kill()
        if py.poll() is None:
            py.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=200000)
    ap.add_argument("--size", type=int, default=4096)
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), rounds=1, iterations=2000)
    times = {m: [] for m in MODES}
    rss = []
    for _ in range(args.rounds):
        for mode in MODES:
            ns, kb = one_round(mode, args.iterations, args.size)
            times[mode].append(ns)
            if kb:
                rss.append(kb)
    base = statistics.median(times["none"])
    print("pymem --alloc: %s, %d iterations of bytearray(%d) + small objects, "
          "median of %d rounds%s" % (PY, args.iterations, args.size, args.rounds,
                                    " (--smoke: figures meaningless)" if args.smoke else ""))
    print("%-14s %12s %10s %18s" % ("mode", "ns/iter", "slowdown", "added ns/iter"))
    for mode in MODES:
        med = statistics.median(times[mode])
        print("%-14s %12.0f %9.2fx %18.0f" % (mode, med, med / base, med - base))
    if rss:
        print("pymem peak RSS: %.1f MiB (max over runs)" % (max(rss) / 1024))


if __name__ == "__main__":
    main()
