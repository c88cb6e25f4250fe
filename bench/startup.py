#!/usr/bin/env python3
"""What pyprofile costs before its first sample (a benchmark, not a test;
it prints figures).

    sudo bench/startup.py [--procs N] [--rounds R] [--only p|system]
                          [--build DIR ...] [--rt]

For each build directory (default: this checkout's build; give several to
compare, e.g. a build of an older commit) and each case, R rounds of:

  p       pyprofile -p PID on one Python process (/usr/bin/python3.11)
  system  pyprofile with no -p while N Python processes run (default 100;
          each has 4 threads that sleep)

once with an empty BPF image cache ("cold": the compiler runs, as on the
first run after an install or a kernel update) and once with the cache the
cold run left ("warm": every later run). Builds without the cache compile
every time.

Figures per run: seconds from exec to the first run of the sampling program
(seen in /proc/PID/fdinfo, with the kernel's accounting on for the run), CPU seconds
used until then (the tool and the compiler child it waited for, from
/proc/PID/stat, 10 ms ticks), the tool's peak RSS until then (VmHWM), and
the peak RSS of the tool or its compiler child over the run (ru_maxrss).
The tool is stopped (SIGINT) once it samples. The machine's load average
is printed too: on a shared machine, read figures as ratios within one run,
or give --rt: pyprofile then runs with a real-time priority (SCHED_FIFO 10),
ahead of the machine's other work, which shows its own cost on a busy
machine (its CPU time is the same either way).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpf_progs  # noqa: E402
import smoke  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3.11"
CLK_TCK = os.sysconf("SC_CLK_TCK")
WORKER = ("import os, sys, threading, time\n"
          "def nap():\n"
          "    while True: time.sleep(1)\n"
          "for _ in range(3): threading.Thread(target=nap, daemon=True).start()\n"
          "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
          "while os.read(0, 4096): pass\n")

WORKERS = []


def start_workers(n):
    rd, wr = os.pipe()
    for _ in range(n):
        WORKERS.append(subprocess.Popen([PY, "-c", WORKER], stdin=rd, stdout=subprocess.PIPE,
                                        start_new_session=True))
    os.close(rd)
    for w in WORKERS[-n:]:
        w.stdout.readline()
    return wr


def stop_workers(wr):
    os.close(wr)
    for w in WORKERS:
        try:
            os.killpg(w.pid, signal.SIGKILL)
        except OSError:
            pass
        w.wait()
    del WORKERS[:]


def sampled(pid):
    """Whether the perf-event program of pid has run."""
    return any(p.prog_type == bpf_progs.PERF_EVENT and p.run_cnt > 0
               for p in bpf_progs.prog_fds(pid))


def cpu_s(pid):
    """utime + stime + cutime + cstime of pid, in seconds."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def vm_hwm_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def realtime():
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))


def one_run(tool, args, env, rt):
    cmd = [tool, "-f", "-o", os.devnull] + args + ["30"]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                         preexec_fn=realtime if rt else None)
    first = cpu = hwm = None
    while p.poll() is None and time.monotonic() - t0 < 120:
        if sampled(p.pid):
            first = time.monotonic() - t0
            cpu = cpu_s(p.pid)
            hwm = vm_hwm_mb(p.pid)
            break
        time.sleep(0.002)
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if first is None:
        sys.exit("%s did not sample (rc %s):\n%s" % (" ".join(cmd), p.returncode, err))
    return {"first": first, "cpu": cpu, "hwm": hwm, "maxrss": ru.ru_maxrss / 1024.0}


def fmt(v, f):
    return "-" if v is None else f % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=("p", "system"))
    ap.add_argument("--build", action="append",
                    help="build directory (default: build); repeat to compare")
    ap.add_argument("--rt", action="store_true",
                    help="run pyprofile with a real-time priority (SCHED_FIFO 10)")
    smoke.option(ap)
    a = smoke.apply(ap.parse_args(), rounds=1, procs=3)
    if os.geteuid() != 0:
        sys.exit("run as root")
    builds = a.build or [os.path.join(REPO, "build")]
    cases = [c for c in ("p", "system") if not a.only or a.only == c]
    print("load average before: %s%s" % (" ".join(open("/proc/loadavg").read().split()[:3]),
                                         ", pyprofile at SCHED_FIFO 10" if a.rt else ""))
    print("%-34s %-7s %-5s %9s %8s %10s %12s" % ("build", "case", "cache", "1st sample",
                                               "CPU s", "tool MB", "max RSS MB"))
    for case in cases:
        nworkers = 1 if case == "p" else a.procs
        wr = start_workers(nworkers)
        args = ["-p", str(WORKERS[0].pid)] if case == "p" else []
        try:
            for build in builds:
                tool = os.path.join(build, "tools", "pyprofile")
                for r in range(a.rounds):
                    cache = tempfile.mkdtemp(prefix="pybpf-cache-")
                    os.chmod(cache, 0o700)
                    env = dict(os.environ, PYBPF_BPF_CACHE=os.path.join(cache, "bpf"))
                    for state in ("cold", "warm"):
                        res = one_run(tool, args, env, a.rt)
                        print("%-34s %-7s %-5s %8ss %8s %10s %12s" % (
                            build[-34:], case if case == "p" else "sys%d" % a.procs, state,
                            fmt(res["first"], "%.2f"), fmt(res["cpu"], "%.2f"),
                            fmt(res["hwm"], "%.0f"), fmt(res["maxrss"], "%.0f")))
                        sys.stdout.flush()
                    shutil.rmtree(cache, ignore_errors=True)
        finally:
            stop_workers(wr)
    print("load average after: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    with bpf_progs.bpf_stats():
        main()
