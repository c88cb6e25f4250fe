#!/usr/bin/env python3
"""What pyprofile / pyoffcpu / pygil cost a workload (a benchmark, not a
test; it prints figures): interleaved rounds of the same
workload with and without the tool attached; the workload's timed window
starts only after the tool has compiled and attached (go on stdin), and BPF
accounting (turned on for the run) is read from the tool's program fds
at the start and the end of that window.

    sudo bench/tool_overhead.py pyoffcpu|pygil|pyprofile [--rounds N] [--seconds S]
                                [--hz HZ] [--extra "TOOL OPTIONS"]

Workloads: pyoffcpu, two threads ping-ponging a byte through pipes (a
context switch per hop, examples/demo/pingpong.py); pygil, four spinning
threads (examples/demo/gil_demo.py --spin-only); pyprofile, a function 30
Python frames deep (bench/deep_cpu_go.py).
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
from bpf_progs import bpf_stats, prog_fds, prog_info  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools")
PY = "/usr/bin/python3.11"
WORKLOADS = {
    "pyoffcpu": (lambda s: [PY, os.path.join(REPO, "examples/demo/pingpong.py"), str(s),
                            "--go-on-stdin"], "round_trips_per_second"),
    "pyprofile": (lambda s: [PY, os.path.join(REPO, "bench/deep_cpu_go.py"), str(s)],
                  "iterations_per_second"),
    "pygil": (lambda s: [PY, os.path.join(REPO, "examples/demo/gil_demo.py"), "--seconds",
                         str(s), "--spin-only", "--go-on-stdin"], "iterations_per_second"),
}


# the per-event programs of a tool, by the names the kernel keeps
MAIN_NAMES = {"pyoffcpu": ("sched__sched_wa", "sched__sched_sw"), "pyprofile": ("on_sample",)}


def cpu_ticks(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def ctxt():
    for line in open("/proc/stat"):
        if line.startswith("ctxt "):
            return int(line.split()[1])


EXTRA = []


def run(tool, seconds, traced):
    mk, metric = WORKLOADS[tool]
    wl = subprocess.Popen(mk(seconds), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          universal_newlines=True)
    assert wl.stdout.readline().strip() == "ready"
    tp = None
    if traced:
        tp = subprocess.Popen([os.path.join(BUILD, tool), "-v"] + EXTRA + ["-p", str(wl.pid)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        header = tp.stdout.readline()
        assert header.startswith(("Tracing", "Sampling")), header
    time.sleep(0.5)
    if traced:
        p0, c0 = prog_fds(tp.pid), cpu_ticks(tp.pid)
    x0, t0 = ctxt(), time.monotonic()
    wl.stdin.write("go\n")
    wl.stdin.flush()
    line = wl.stdout.readline()
    t1, x1 = time.monotonic(), ctxt()
    rate = float(re.search(metric + r" (\S+)", line).group(1))
    res = {"rate": rate, "ctxt_per_s": (x1 - x0) / (t1 - t0)}
    if traced:
        p1, c1 = prog_fds(tp.pid), cpu_ticks(tp.pid)
        res["tool_cpu"] = (c1 - c0) / os.sysconf("SC_CLK_TCK") / (t1 - t0)
        res["progs"] = [(a[0], a[1], b[2] - a[2], b[3] - a[3],
                         (prog_info(a[4]) or ("?",))[0]) for a, b in zip(p0, p1)]
    wl.stdin.close()
    wl.wait()
    if traced:
        out, err = tp.communicate(timeout=60)
        res["stderr"] = err
        m = re.search(r"BPF \S+ program: (\d+) runs, (\d+) ns per run, at most (\d+) ns per "
                      r"[^(]*\((\d+)\)", err)
        res["events"] = int(m.group(4)) if m else 0
        res["vline"] = m.group(0) if m else err
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool", choices=sorted(WORKLOADS))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--hz", type=int, default=0, help="pyprofile -F")
    ap.add_argument("--extra", default="", help="more tool options, space-separated")
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), rounds=1, seconds=0.5)
    EXTRA.extend(args.extra.split())
    if args.hz:
        EXTRA.extend(["-F", str(args.hz)])
    ratios, per_event, per_run, tool_cpu = [], [], [], []
    for r in range(args.rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        got = {}
        for traced in order:
            got[traced] = run(args.tool, args.seconds, traced)
        base, tr = got[False], got[True]
        ratio = tr["rate"] / base["rate"]
        ratios.append(ratio)
        # the workload's own programs: by name (as the kernel keeps it, 15
        # characters) where it tells them, else pygil's tracepoint programs
        # in load order (enter, waiter stack, holder stack, exit)
        if args.tool in MAIN_NAMES:
            main_progs = [p for p in tr["progs"] if p[4] in MAIN_NAMES[args.tool]]
            if len(main_progs) != len(MAIN_NAMES[args.tool]):
                sys.exit("%s: its programs %s are not among %s"
                         % (args.tool, MAIN_NAMES[args.tool], [p[4] for p in tr["progs"]]))
        else:
            main_progs = [p for p in tr["progs"] if p[1] == 5][:4]
        ns = sum(p[2] for p in main_progs)
        runs = [p[3] for p in main_progs]
        ev = tr["events"]
        per_event.append(ns / ev if ev else float("nan"))
        per_run.append(ns / max(1, sum(runs)))
        tool_cpu.append(tr["tool_cpu"])
        print("round %d (%s first): %.1f traced vs %.1f untraced: ratio %.3f; "
              "ctxt/s %.0f vs %.0f; events %d; BPF ns %s runs %s -> %.0f ns per event; "
              "tool CPU %.1f%%\n    %s"
              % (r + 1, "traced" if order[0] else "untraced", tr["rate"], base["rate"], ratio,
                 tr["ctxt_per_s"], base["ctxt_per_s"], ev,
                 [p[2] for p in main_progs], runs, per_event[-1], 100 * tr["tool_cpu"],
                 tr["vline"]), flush=True)
    med = statistics.median(ratios)
    print("\n%s: %d rounds of %.0f s; median throughput ratio traced/untraced %.3f "
          "(slowdown %.1f%%), min %.3f max %.3f; BPF time (all its per-event programs) per "
          "Python event: median %.0f ns; per program run: median %.0f ns; tool user-space "
          "CPU median %.1f%% of one CPU"
          % (args.tool, args.rounds, args.seconds, med, 100 * (1 - med), min(ratios),
             max(ratios), statistics.median(per_event), statistics.median(per_run),
             100 * statistics.median(tool_cpu)))


if __name__ == "__main__":
    with bpf_stats():
        main()
