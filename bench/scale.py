#!/usr/bin/env python3
"""How pyprofile scales with many Python processes and many threads (a
benchmark, not a test; it prints figures).

    sudo bench/scale.py [--seconds S] [--procs N] [--threads T]
                        [--big-threads B] [--load CORES] [--only system|big]
                        [--python PATH] [--rt]

Two runs, each against a workload of /usr/bin/python3.11 processes (or
--python's) started by this script (all of them are killed at the end,
also on errors and Ctrl-C; a worker also exits by itself when this script
goes away):

  system  pyprofile with no -p at 99 Hz while N processes with T threads
          each run. In each process one thread burns CPU in burn() for a
          slice of every 100 ms (together about --load CPUs); the other
          threads sleep in time.sleep, select.select and Event.wait or do a
          little work now and then. Every process names its threads
          "pyw<i>", so distinct processes can be counted in the folded
          output.
  big     pyprofile -p PID at 999 Hz on one process with B threads: two spin
          in spin_hot(), the rest sleep (waking every few seconds). Every
          thread has its own name (spin<k>, t<nnnn>), so distinct threads
          seen can be counted.

pyprofile runs as `pyprofile -v -F HZ -f -o FILE [-p PID] SECONDS`: the
"Sampling ..." header then comes on stdout, the closing summary on stderr.
Figures: start-up (exec of pyprofile to its header, and to the first run of
its sampling program as seen in /proc/PID/fdinfo), samples (all runs of the
sampling program; samples of registered Python processes; those with Python
frames; samples expected from the workload's CPU time x HZ), processes
registered, truncated / unreadable / not counted / events lost, the
profiler's CPU time (user+sys from wait4) and BPF run time
(the kernel's accounting, turned on for the run, summed over all its programs' fdinfo), and its
peak RSS (ru_maxrss from wait4, and VmHWM as last polled).

Without --only, both runs are done, system first. Worker mode (internal):
scale.py --worker system|big ...
"""
import argparse
import atexit
import ctypes
import os
import random
import re
import select
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpf_progs  # noqa: E402
import smoke  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools")
PYPROFILE = os.path.join(BUILD, "pyprofile")
DEFAULT_PY = "/usr/bin/python3.11"
PY = DEFAULT_PY
CLK_TCK = os.sysconf("SC_CLK_TCK")
PERIOD = 0.1  # the burn() duty cycle of the system workload
EXTRA = []  # --extra: pyprofile's own arguments


# --------------------------------------------------------------- worker side

def set_comm(name):
    """Name the calling thread (threads started later inherit the name)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(15, name.encode()[:15], 0, 0, 0)
    except (OSError, AttributeError):
        pass


def burn(busy):
    end = time.perf_counter() + busy
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def burner(duty):
    time.sleep(random.uniform(0, PERIOD))
    busy = PERIOD * duty
    while True:
        t = time.perf_counter()
        burn(busy)
        rest = PERIOD - (time.perf_counter() - t)
        if rest > 0:
            time.sleep(rest)


def spin_hot():
    x = 0
    while True:
        x += 1


def nap_sleep(lo, hi):
    while True:
        time.sleep(random.uniform(lo, hi))


def nap_select(lo, hi):
    while True:
        select.select([], [], [], random.uniform(lo, hi))


def nap_event(lo, hi):
    ev = threading.Event()
    while True:
        ev.wait(random.uniform(lo, hi))


def light_work(lo, hi):
    while True:
        time.sleep(random.uniform(lo, hi))
        sum(i * i for i in range(2000))


SLEEPERS = (nap_sleep, nap_select, nap_event, light_work)


def named(name, fn, *a):
    def run():
        set_comm(name)
        fn(*a)
    return run


def worker(argv):
    ap = argparse.ArgumentParser(prog="scale.py --worker")
    ap.add_argument("kind", choices=("system", "big"))
    ap.add_argument("--index", type=int, default=0)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--duty", type=float, default=0.01)
    a = ap.parse_args(argv)
    threading.stack_size(256 * 1024)
    threads = []
    if a.kind == "system":
        set_comm("pyw%03d" % a.index)
        threads.append(threading.Thread(target=burner, args=(a.duty,), daemon=True))
        for i in range(a.threads - 1):
            threads.append(threading.Thread(target=SLEEPERS[i % len(SLEEPERS)],
                                            args=(0.5, 3.0), daemon=True))
    else:
        set_comm("pybig")
        nspin = min(2, a.threads)
        for k in range(nspin):
            threads.append(threading.Thread(target=named("spin%d" % k, spin_hot),
                                            daemon=True))
        for i in range(a.threads - nspin):
            threads.append(threading.Thread(
                target=named("t%04d" % i, SLEEPERS[i % len(SLEEPERS)], 1.0, 5.0),
                daemon=True))
    for t in threads:
        t.start()
    sys.stdout.write("ready %d %d\n" % (os.getpid(), threading.active_count()))
    sys.stdout.flush()
    # stdin is a pipe the driver never writes to: EOF means it went away
    while os.read(0, 4096):
        pass
    os._exit(0)


# --------------------------------------------------------------- driver side

WORKERS = []
PROFILERS = []
STDIN_FDS = []  # write ends of the workers' stdin pipes


def cleanup():
    for p in PROFILERS:
        if p.returncode is None:
            try:
                p.kill()
                p.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                pass
    for p in WORKERS:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
    for p in WORKERS:
        try:
            p.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            pass
    del WORKERS[:]
    while STDIN_FDS:
        os.close(STDIN_FDS.pop())


def start_workload(kind, nprocs, nthreads, duty, timeout=300):
    """Start nprocs workers; return ([pids], seconds to all ready)."""
    rd, wr = os.pipe()          # workers' stdout: one "ready" line each
    lrd, lwr = os.pipe()        # workers' stdin: EOF when the driver is gone
    t0 = time.monotonic()
    try:
        for i in range(nprocs):
            WORKERS.append(subprocess.Popen(
                [PY, os.path.abspath(__file__), "--worker", kind, "--index", str(i),
                 "--threads", str(nthreads), "--duty", str(duty)],
                stdin=lrd, stdout=wr, start_new_session=True))
    finally:
        os.close(wr)
        os.close(lrd)
    STDIN_FDS.append(lwr)
    pids, buf = [], b""
    with os.fdopen(rd, "rb") as f:
        while len(pids) < nprocs:
            if time.monotonic() - t0 > timeout:
                sys.exit("workers not ready after %d s" % timeout)
            line = f.readline()
            if not line:
                sys.exit("a worker died before it was ready")
            w = line.split()
            if w[0] == b"ready":
                pids.append(int(w[1]))
    return pids, time.monotonic() - t0


def prog_fds(pid):
    """{fd: (prog_type, run_time_ns, run_cnt)} of the BPF programs of pid."""
    return {p.fd: (p.prog_type, p.run_time_ns, p.run_cnt) for p in bpf_progs.prog_fds(pid)}


def cpu_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError):
        return 0


def vm_hwm_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def reader(stream, lines):
    for line in stream:
        lines.append((time.monotonic(), line))


PERF_EVENT_PROG = bpf_progs.PERF_EVENT
PYFRAME = re.compile(r" \(.*:\d+\)$")


RT = False  # --rt: pyprofile at SCHED_FIFO 10


def realtime():
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))


def profile(hz, seconds, workload_pids, target_pid=None):
    """pyprofile on target_pid (a string: one PID or a list), or else
    system-wide."""
    folded = "/tmp/scale-%d-%s.folded" % (os.getpid(), "big" if target_pid else "system")
    cmd = [PYPROFILE, "-v", "-F", str(hz), "-f", "-o", folded]
    if target_pid:
        cmd += ["-p", str(target_pid)]
    cmd += EXTRA
    cmd.append(str(seconds))
    res = {"cmd": " ".join(cmd)}
    out_lines, err_lines = [], []
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=realtime if RT else None,
                         universal_newlines=True)
    PROFILERS.append(p)
    readers = [threading.Thread(target=reader, args=(p.stdout, out_lines), daemon=True),
               threading.Thread(target=reader, args=(p.stderr, err_lines), daemon=True)]
    for r in readers:
        r.start()
    progs, hwm, first_sample, ticks = {}, 0, None, 0
    w_start = w_end = None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        now = time.monotonic()
        cur = prog_fds(p.pid)
        if cur:
            progs.update(cur)
        hwm = max(hwm, vm_hwm_kb(p.pid))
        ticks = max(ticks, cpu_ticks(p.pid))
        if first_sample is None and any(v[0] == PERF_EVENT_PROG and v[2] > 0
                                        for v in cur.values()):
            first_sample = now - t0
        if out_lines and w_start is None:
            w_start = (now, sum(cpu_ticks(q) for q in workload_pids), cpu_ticks(p.pid))
        if w_start and w_end is None and now - out_lines[0][0] >= seconds:
            w_end = (now, sum(cpu_ticks(q) for q in workload_pids), cpu_ticks(p.pid))
        time.sleep(0.1 if out_lines else 0.005)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    for r in readers:
        r.join(10)
    err = "".join(l for _, l in err_lines)
    res["rc"] = p.returncode
    res["stderr"] = err
    res["wall"] = wall
    res["header"] = out_lines[0][0] - t0 if out_lines else None
    res["first_sample"] = first_sample
    res["cpu"] = ru.ru_utime + ru.ru_stime
    res["cpu_user"], res["cpu_sys"] = ru.ru_utime, ru.ru_stime
    res["maxrss_kb"] = ru.ru_maxrss
    res["hwm_kb"] = hwm
    res["bpf_ns"] = sum(v[1] for v in progs.values())
    res["runs"] = sum(v[2] for v in progs.values() if v[0] == PERF_EVENT_PROG)
    res["bpf_sample_ns"] = sum(v[1] for v in progs.values() if v[0] == PERF_EVENT_PROG)
    if w_start and w_end:
        res["wl_cpu"] = (w_end[1] - w_start[1]) / CLK_TCK
        res["wl_window"] = w_end[0] - w_start[0]
        res["cpu_sampling"] = (w_end[2] - w_start[2]) / CLK_TCK
    m = re.search(r"(\d+) samples of (\d+) Python process(?:es)? \((\d+) exited during the "
                  r"run\); (\d+) with Python frames, (\d+) in threads without", err)
    if m:
        (res["py_samples"], res["procs"], res["exited"], res["pyframe_samples"],
         res["no_tstate"]) = map(int, m.groups())
    m = re.search(r"(\d+) stacks truncated at \d+ Python frames, (\d+) with an unreadable "
                  r"frame, (\d+) samples not counted \(maps full: (\d+) stacks\), (\d+) "
                  r"process events lost", err)
    if m:
        (res["truncated"], res["unreadable"], res["not_counted"], res["stack_full"],
         res["events_lost"]) = map(int, m.groups())
    m = re.search(r"BPF sampling program: (\d+) runs, (\d+) ns per run", err)
    if m:
        res["v_runs"], res["v_ns_per_run"] = map(int, m.groups())
    m = re.search(r"(\d+) Python process(?:es)? could not be profiled", err)
    res["refused"] = int(m.group(1)) if m else 0
    m = re.search(r"(\d+) frames of code objects that could not be named", err)
    res["unnamed"] = int(m.group(1)) if m else 0
    rows = []
    try:
        with open(folded) as f:
            for line in f:
                stack, _, n = line.rstrip("\n").rpartition(" ")
                frames = stack.split(";")
                rows.append((frames[0], frames[1:], int(n)))
        os.unlink(folded)
    except (OSError, ValueError):
        pass
    res["rows"] = rows
    return res


def fmt(v, spec="%d"):
    return "-" if v is None else spec % v


def summarize(kind, res, hz, seconds, nprocs, nthreads, ready_s):
    rows = res["rows"]
    mine = [r for r in rows if (r[0].startswith("pyw") if kind == "system"
                                else r[0] == "pybig" or re.match(r"(spin\d|t\d{4})$", r[0]))]
    hot = "burn" if kind == "system" else "spin_hot"
    py_rows = [r for r in mine if any(PYFRAME.search(f) for f in r[1])]
    py_n = sum(r[2] for r in py_rows)
    hot_n = sum(r[2] for r in py_rows if any(f.startswith(hot + " (") for f in r[1]))
    comms = {r[0] for r in mine}
    f = {}
    f["workload"] = ("%d procs x %d threads" % (nprocs, nthreads))
    f["rate / duration"] = "%d Hz, %d s" % (hz, seconds)
    f["workload ready after"] = "%.1f s" % ready_s
    f["start-up: exec->header"] = fmt(res["header"], "%.2f s")
    f["start-up: exec->1st sample"] = fmt(res["first_sample"], "%.2f s")
    f["pyprofile wall time"] = "%.2f s (rc %d)" % (res["wall"], res["rc"])
    f["samples total (BPF runs)"] = fmt(res.get("v_runs", res["runs"]))
    f["samples of Python procs"] = fmt(res.get("py_samples"))
    f["  with Python frames"] = fmt(res.get("pyframe_samples"))
    f["  no thread state"] = fmt(res.get("no_tstate"))
    f["samples of workload"] = "%d (%d with Py frames)" % (sum(r[2] for r in mine), py_n)
    if "wl_cpu" in res:
        f["  expected (its CPU s x Hz)"] = "%.0f (%.2f CPU s in %.1f s)" % (
            res["wl_cpu"] * hz, res["wl_cpu"], res["wl_window"])
    f["hot fn share of workload Py"] = "%s %s" % (
        hot, fmt(100.0 * hot_n / py_n if py_n else None, "%.1f%%"))
    f["processes registered"] = "%s (%s exited, %d refused)" % (
        fmt(res.get("procs")), fmt(res.get("exited")), res["refused"])
    if kind == "system":
        f["distinct in samples"] = "%d of %d procs" % (len(comms), nprocs)
    else:
        f["distinct in samples"] = "%d of %d threads" % (len(comms), nthreads + 1)
    f["truncated / unreadable"] = "%s / %s" % (fmt(res.get("truncated")),
                                               fmt(res.get("unreadable")))
    f["lost: not counted/stk/events"] = "%s / %s / %s" % (
        fmt(res.get("not_counted")), fmt(res.get("stack_full")), fmt(res.get("events_lost")))
    f["unnamed code frames"] = "%d" % res["unnamed"]
    f["profiler CPU user+sys"] = "%.2f+%.2f s (%.1f%% of wall)" % (
        res["cpu_user"], res["cpu_sys"], 100 * res["cpu"] / res["wall"])
    if "cpu_sampling" in res:
        f["  of which while sampling"] = "%.2f s (%.1f%% of a CPU)" % (
            res["cpu_sampling"], 100 * res["cpu_sampling"] / res["wl_window"])
    if res["bpf_ns"]:
        ns = res.get("v_runs", 0) * res.get("v_ns_per_run", 0) or res["bpf_sample_ns"]
        runs = res.get("v_runs", res["runs"])
        f["BPF time all progs"] = "%.3f s (%.2f%% of a CPU over %d s)" % (
            res["bpf_ns"] / 1e9, 100 * res["bpf_ns"] / 1e9 / seconds, seconds)
        f["BPF sampling ns/sample"] = fmt(ns / runs if runs else None, "%.0f")
    else:
        f["BPF time all progs"] = "- (no BPF accounting)"
    f["peak RSS (maxrss / VmHWM)"] = "%.1f / %.1f MiB" % (res["maxrss_kb"] / 1024,
                                                          res["hwm_kb"] / 1024)
    return f


def print_table(cols):
    names = list(cols)
    keys = []
    for c in names:
        for k in cols[c]:
            if k not in keys:
                keys.append(k)
    w0 = max(len(k) for k in keys)
    ws = [max(len(c), max(len(str(cols[c].get(k, ""))) for k in keys)) for c in names]
    print("%-*s  %s" % (w0, "", "  ".join("%-*s" % (w, c) for w, c in zip(ws, names))))
    for k in keys:
        print("%-*s  %s" % (w0, k, "  ".join("%-*s" % (w, cols[c].get(k, "-"))
                                              for w, c in zip(ws, names))))


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_case(kind, args):
    if kind == "system":
        nprocs, nthreads, hz = args.procs, args.threads, 99
    else:
        nprocs, nthreads, hz = 1, args.big_threads, 999
    duty = min(1.0, args.load / nprocs)
    print("[%s] starting %d worker(s) with %d threads each (load %s)..."
          % (kind, nprocs, nthreads, loadavg()), flush=True)
    try:
        pids, ready_s = start_workload(kind, nprocs, nthreads, duty)
        print("[%s] ready after %.1f s; %s" % (kind, ready_s, "running pyprofile"), flush=True)
        time.sleep(1)
        # --smoke: the system case profiles only its workload (-p PID,...),
        # not every Python process of a machine shared with other work
        target = pids[0] if kind == "big" else ",".join(map(str, pids)) if args.smoke else None
        res = profile(hz, args.seconds, pids, target)
    finally:
        cleanup()
    print("[%s] %s\n%s" % (kind, res["cmd"], "".join(
        "    " + l + "\n" for l in res["stderr"].splitlines())), end="", flush=True)
    return summarize(kind, res, hz, args.seconds, nprocs, nthreads, ready_s)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=10, help="each pyprofile run (10)")
    ap.add_argument("--procs", type=int, default=100, help="system run: processes (100)")
    ap.add_argument("--threads", type=int, default=20, help="system run: threads each (20)")
    ap.add_argument("--big-threads", type=int, default=1000, help="big run: threads (1000)")
    ap.add_argument("--load", type=float, default=1.0,
                    help="system run: CPUs the burn() threads use together (1.0)")
    ap.add_argument("--only", choices=("system", "big"))
    ap.add_argument("--extra", action="append", default=[], metavar="ARG",
                    help="an argument for pyprofile, before the duration (repeatable: "
                         "--extra=--no-native)")
    ap.add_argument("--python", default=DEFAULT_PY, metavar="PATH",
                    help="the workload's interpreter (%s)" % DEFAULT_PY)
    ap.add_argument("--rt", action="store_true",
                    help="pyprofile at real-time priority (SCHED_FIFO 10): its own cost on a "
                         "machine busy with other work")
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), seconds=1, procs=3, threads=3, big_threads=10)
    global RT, PY
    RT = args.rt
    PY = args.python
    EXTRA[:] = args.extra
    if os.geteuid() != 0:
        sys.exit("run as root")
    if not os.access(PYPROFILE, os.X_OK):
        sys.exit("no %s: ninja -C build" % PYPROFILE)
    atexit.register(cleanup)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    cols = {}
    for kind in ("system", "big"):
        if args.only in (None, kind):
            cols[kind] = run_case(kind, args)
    print("\n%d CPUs, load average %s after the runs" % (os.cpu_count(), loadavg()))
    print_table(cols)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        main()
    else:
        with bpf_progs.bpf_stats():
            main()
