#!/usr/bin/env python3
"""pyprofile side by side with austin, the sampler Debian packages (a
benchmark, not a test; it prints figures).

    sudo bench/peer_austin.py [--rounds N] [--seconds S] [--rates 99,999]

Both profile the same CPU-bound workload (bench/shares_go.py: burn_a and
burn_b in one thread, which measures each one's CPU time itself) run by
Debian's /usr/bin/python3.11, at the same rate. For each rate, rounds of three runs in rotating order: no
profiler, pyprofile -p, austin -s -p (CPU time only, as pyprofile). The
timed window opens once the profiler is attached. Figures per profiler:

  slowdown   workload throughput profiled / unprofiled, same round
  CPU        the profiler process's CPU time during the window (all its
             threads, from /proc/PID/task/*/schedstat: nanoseconds, where
             the tick counts of /proc/PID/stat are 10 ms), plus
             (pyprofile) the run time of its BPF programs, in % of a CPU
  accuracy   each function's share of the samples minus its share of the
             workload's CPU time (points)
  samples    taken, and expected (workload CPU seconds x rate)

austin comes from Debian sid (its package there cannot be installed while
sid's python3 is 3.14, so its .deb is unpacked into /opt/austin of the sid
chroot: `setup.sh austin` does that). It runs on the host through the
chroot's dynamic loader and libraries (it needs a newer glibc than
bookworm's). Inside the chroot it refuses sid's python3.13 ("not a Python
process"), so the common target is the host's python3.11.
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools")
CHROOT = os.path.join(os.environ.get("PYBPF_CACHE", "/var/cache/pybpf-tools"), "chroots", "sid")
AUSTIN = "/opt/austin/root/usr/bin/austin"
PYTHON = "/usr/bin/python3.11"
WORKLOAD = os.path.join(REPO, "bench", "shares_go.py")
FUNCS = ("burn_a", "burn_b")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smoke  # noqa: E402
from bpf_progs import bpf_stats, prog_fds  # noqa: E402


def cpu_ns(pid):
    """CPU time of every thread of pid so far, in nanoseconds."""
    total = 0
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            total += int(open("/proc/%d/task/%s/schedstat" % (pid, task)).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just ended
    return total


def host(path):
    return os.path.join(CHROOT, path.lstrip("/"))


def prepare():
    if not os.access(host(AUSTIN), os.X_OK):
        sys.exit("no austin in %s: run `sudo ./setup.sh austin` first" % host(AUSTIN))
    if not os.access(PYTHON, os.X_OK):
        sys.exit("no %s" % PYTHON)


def start_profiler(kind, pid, hz, out):
    """Starts the profiler on pid; returns its Popen once it is attached."""
    if kind == "pyprofile":
        p = subprocess.Popen([os.path.join(BUILD, "pyprofile"), "-F", str(hz), "--format",
                              "folded", "-o", out, "-p", str(pid)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
        header = p.stdout.readline()
        if not header.startswith("Sampling"):
            p.kill()
            sys.exit("pyprofile did not start: %s%s" % (header, p.stderr.read()))
        return p
    interval = max(1, round(1e6 / hz))
    libs = ":".join(host(d) for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"))
    p = subprocess.Popen([host("/lib64/ld-linux-x86-64.so.2"), "--library-path", libs,
                          host(AUSTIN), "-s", "-i", "%dus" % interval, "-p", str(pid),
                          "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    time.sleep(1.0)  # austin prints nothing when attached; give it a second
    if p.poll() is not None:
        sys.exit("austin did not start: %s" % p.stderr.read())
    return p


def shares_pyprofile(path, pid):
    counts, total = dict.fromkeys(FUNCS, 0), 0
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        n = int(n)
        total += n
        for f in FUNCS:
            if ";%s (" % f in stack:
                counts[f] += n
    return counts, total


def shares_austin(path):
    """austin -s writes 'P<pid>;T<..>;file:func:line;... <us>' lines;
    samples are its lines' count of stacks (one per sample), the weight
    their CPU microseconds."""
    counts, total, samples = dict.fromkeys(FUNCS, 0), 0, 0
    for line in open(path, errors="replace"):
        if not line.startswith("P"):
            continue
        stack, _, us = line.rstrip("\n").rpartition(" ")
        try:
            us = int(us)
        except ValueError:
            continue
        total += us
        samples += 1
        for f in FUNCS:
            if ":%s:" % f in stack:
                counts[f] += us
    return counts, total, samples


def run(kind, hz, seconds, tmp):
    wl = subprocess.Popen([PYTHON, WORKLOAD, str(seconds)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          universal_newlines=True)
    assert wl.stdout.readline().strip() == "ready"
    out = os.path.join(tmp, "%s-%d.out" % (kind, hz))
    prof = start_profiler(kind, wl.pid, hz, out) if kind != "none" else None
    ppid = prof.pid if prof else None
    if prof:
        c0, b0 = cpu_ns(ppid), sum(p[2] for p in prog_fds(ppid))
    t0 = time.monotonic()
    wl.stdin.write("go\n")
    wl.stdin.flush()
    line = wl.stdout.readline()
    t1 = time.monotonic()
    res = dict(zip(("rate", "cpu_burn_a", "cpu_burn_b"),
                   map(float, re.findall(r" ([\d.]+)", line))))
    if prof:
        c1, b1 = cpu_ns(ppid), sum(p[2] for p in prog_fds(ppid))
        res["cpu"] = ((c1 - c0) + (b1 - b0)) / 1e9 / (t1 - t0)
        res["bpf"] = (b1 - b0) / 1e9 / (t1 - t0)
        prof.send_signal(signal.SIGINT)
        try:
            prof.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            prof.kill()
            prof.communicate()
    wl.stdin.close()
    wl.wait()
    truth = res["cpu_burn_a"] + res["cpu_burn_b"]
    if kind == "pyprofile":
        counts, total = shares_pyprofile(out, wl.pid)
        res["samples"] = total
    elif kind == "austin":
        counts, total, res["samples"] = shares_austin(out)
    if kind != "none":
        res["error"] = max(abs(100 * counts[f] / max(total, 1) - 100 * res["cpu_" + f] / truth)
                           for f in FUNCS)
        res["expected"] = truth * hz
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--rates", default="99,999")
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), rounds=1, seconds=0.5)
    prepare()
    kinds = ["none", "pyprofile", "austin"]
    with tempfile.TemporaryDirectory() as tmp:
        for hz in map(int, args.rates.split(",")):
            got = {k: [] for k in kinds}
            for r in range(args.rounds):
                order = kinds[r % 3:] + kinds[:r % 3]
                round_res = {k: run(k, hz, args.seconds, tmp) for k in order}
                for k in kinds:
                    got[k].append(round_res[k])
                base = round_res["none"]["rate"]
                print("%d Hz round %d (%s): " % (hz, r + 1, ",".join(order)) + "; ".join(
                    "%s %.2f/s" % (k, round_res[k]["rate"]) + (
                        " (x%.3f, CPU %.2f%%, err %.1f pts, %d samples of %.0f)"
                        % (round_res[k]["rate"] / base, 100 * round_res[k]["cpu"],
                           round_res[k]["error"], round_res[k]["samples"],
                           round_res[k]["expected"]) if k != "none" else "")
                    for k in kinds), flush=True)
            med = {}
            for k in ("pyprofile", "austin"):
                ratios = [g["rate"] / b["rate"] for g, b in zip(got[k], got["none"])]
                med[k] = {"slow": 1 - statistics.median(ratios),
                          "cpu": statistics.median(g["cpu"] for g in got[k]),
                          "err": statistics.median(g["error"] for g in got[k]),
                          "bpf": statistics.median(g.get("bpf", 0) for g in got[k])}
                print("  %-9s %4d Hz: slowdown %5.1f%%, profiler CPU %6.2f%% of a CPU "
                      "(BPF %.2f%%), accuracy error %.1f pts (medians of %d rounds)"
                      % (k, hz, 100 * med[k]["slow"], 100 * med[k]["cpu"],
                         100 * med[k]["bpf"], med[k]["err"], args.rounds))
            print("  %4d Hz: austin CPU / pyprofile CPU = %.1fx; slowdown austin %.1f%% vs "
                  "pyprofile %.1f%%\n" % (hz, med["austin"]["cpu"] / max(med["pyprofile"]["cpu"],
                                                                         1e-9),
                                          100 * med["austin"]["slow"],
                                          100 * med["pyprofile"]["slow"]), flush=True)


if __name__ == "__main__":
    with bpf_stats():
        main()
