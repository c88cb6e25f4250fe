#!/usr/bin/env python3
"""Runs the benchmark set and writes its figures as one markdown table,
with the date, the machine and the interpreter: the README's Performance
table comes from it (a benchmark, not a test).

    sudo bench/report.py [-o FILE] [--rounds N] [--smoke]

The set: bench/native_cost.py (pyprofile at 999 Hz on 30 Python + ~20
native frames, native stacks on and off), bench/peer_austin.py (pyprofile
against austin at 99 and 999 Hz; left out, and said so, without austin),
bench/tool_overhead.py pyoffcpu (with and without native stacks) and
pygil, bench/scale.py --only system (100 processes x 20 threads at 99 Hz).
Each script's own output goes to stderr as it runs. The machine is shared:
every figure is a ratio or a median of paired, interleaved runs made by the
script itself. A figure the script did not print makes the run fail (exit
1), so the set cannot drift from what its scripts print.
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import smoke  # noqa: E402
from peer_austin import AUSTIN, PYTHON, host  # noqa: E402

NUM = r"(-?[\d.]+|nan)"


def run(script, args, common):
    cmd = [sys.executable, os.path.join(HERE, script)] + args + common
    print("report: %s" % " ".join(cmd[1:]), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
    sys.stderr.write(p.stdout)
    if p.returncode:
        sys.exit("report: %s exited %d" % (script, p.returncode))
    return p.stdout, "`bench/%s`" % " ".join([script] + args)


class Missing(Exception):
    pass


def find(pattern, text):
    m = re.search(pattern, text, re.M)
    if not m:
        raise Missing(pattern)
    return m.groups()


def native_rows(common):
    out, cmd = run("native_cost.py", [], common)
    rows = []
    for mode in ("native", "no-native"):
        slow, us = find(r"^%s\s*: slowdown %s%% .*?, BPF %s us per sample" % (mode, NUM, NUM),
                        out)
        rows.append(("pyprofile -F 999, 30 Python + ~20 native frames, %s" % (
            "native stacks on" if mode == "native" else "--no-native"),
            "target slowdown %s%%; BPF at most %s us per sample" % (slow, us), cmd))
    fixed = find(r"^fixed user-space cost: (.*)$", out)[0]
    rows.append(("pyprofile's fixed user-space cost of a run (apart from sampling)", fixed, cmd))
    return rows


def austin_rows(common):
    if not os.access(host(AUSTIN), os.X_OK):
        return [("pyprofile against austin", "not measured: no austin (`setup.sh austin`)",
                 "`bench/peer_austin.py`")]
    out, cmd = run("peer_austin.py", [], common)
    rows = []
    for hz in (99, 999):
        got = {}
        for kind in ("pyprofile", "austin"):
            slow, cpu, bpf = find(r"^  %s\s+%d Hz: slowdown\s+%s%%, profiler CPU\s+%s%% of a "
                                  r"CPU \(BPF %s%%\)" % (kind, hz, NUM, NUM, NUM), out)
            got[kind] = "%s: slowdown %s%%, profiler CPU %s%% (BPF %s%%), total %.2f%% of a " \
                        "CPU" % (kind, slow, cpu, bpf, float(slow) + float(cpu))
        rows.append(("pyprofile against austin, %d Hz, %s" % (hz, PYTHON),
                     "; ".join(got.values()), cmd))
    return rows


def overhead_rows(common):
    rows = []
    for tool, extra, what, event in (
            ("pyoffcpu", [], "pyoffcpu, pipe ping-pong (a switch per hop), native stacks on",
             "Python switch"),
            ("pyoffcpu", ["--extra=--no-native"], "the same, --no-native", "Python switch"),
            ("pygil", [], "pygil, 4 threads contending", "GIL wait episode (its futex "
             "waits, the holder's stack walked at each)")):
        out, cmd = run("tool_overhead.py", [tool] + extra, common)
        ratio, per_ev, user = find(r"median throughput ratio traced/untraced %s .*?per Python "
                                   r"event: median %s ns;.*?CPU median %s%%" % (NUM, NUM, NUM),
                                   out)
        rows.append((what, "throughput ratio %s; BPF %s ns per %s; tool %s%% of a CPU"
                     % (ratio, per_ev, event, user), cmd))
    return rows


def scale_rows(common):
    out, cmd = run("scale.py", ["--only", "system"], common)
    total = find(r"^profiler CPU user\+sys\s+(.*?)\s*$", out)[0]
    # only when the run outlasted the window by a poll (not in --smoke)
    m = re.search(r"^  of which while sampling\s+(.*?)\s*$", out, re.M)
    cpu = "%s, in all %s" % (m.group(1) if m else "-", total)
    ns = find(r"^BPF sampling ns/sample\s+(\S+)", out)[0]
    procs = find(r"^workload\s+(.*?)\s*$", out)[0]
    return [("pyprofile system-wide, %s, 99 Hz" % procs,
             "profiler CPU while sampling %s; BPF %s ns per sample" % (cpu, ns), cmd)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default="-", help="markdown file (default stdout)")
    ap.add_argument("--rounds", type=int, help="rounds of each script (its own default)")
    smoke.option(ap)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root")
    common = ["--smoke"] if args.smoke else []
    rounds = ["--rounds", str(args.rounds)] if args.rounds else []
    start = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    try:
        for part in (native_rows, austin_rows, overhead_rows):
            rows += part(common + rounds)
        rows += scale_rows(common)  # one run: no --rounds
    except Missing as e:
        sys.exit("report: a script no longer prints what this reads: %s" % e)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    head = ("Measured %s UTC on %s (%s, %d CPUs, load average %s at the end), target "
            "interpreter %s, kernel %s%s.\n\n" % (
                start.strftime("%Y-%m-%d %H:%M"), platform.node(), platform.machine(),
                os.cpu_count(), load, PYTHON, platform.release(),
                " (--smoke: figures meaningless)" if args.smoke else ""))
    table = "| what | figure | command |\n|---|---|---|\n" + "".join(
        "| %s | %s | %s |\n" % r for r in rows)
    if args.output == "-":
        sys.stdout.write(head + table)
    else:
        with open(args.output, "w") as f:
            f.write(head + table)


if __name__ == "__main__":
    main()
