"""Helpers to run the BPF tools and read their folded output."""
import concurrent.futures
import os
import signal
import subprocess
import sys
import threading
import time


def cpu_seconds(pid):
    """CPU time (user and system) process PID has had so far, in seconds."""
    with open("/proc/%d/stat" % pid) as fp:
        f = fp.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def start_tool(path, args, timeout=120, header_on="stdout",
               header=("Sampling", "Tracing")):
    """Starts a tool and waits for its header line ("Sampling..." or
    "Tracing...", printed once its probes are attached; or a line starting
    with another of HEADER) on HEADER_ON (stdout, or stderr for modes that
    keep stdout for folded stacks). Fails, never blocks, if it does not
    come within timeout seconds."""
    popen = subprocess.Popen([path] + list(args), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
    stream = popen.stdout if header_on == "stdout" else popen.stderr
    seen = []

    def read_to_header():
        for line in iter(stream.readline, ""):
            seen.append(line)
            if line.startswith(header):
                return

    reader = threading.Thread(target=read_to_header, daemon=True)
    reader.start()
    reader.join(timeout)
    started = bool(seen) and seen[-1].startswith(header)
    if not started:
        popen.kill()  # also ends a reader still blocked in readline
        reader.join(30)
        out, err = popen.communicate(timeout=30)
        raise AssertionError("%s did not start: rc=%s\n%s%s%s" % (
            path, popen.returncode, "".join(seen), out, err))
    popen.before_header = "".join(seen)  # what the stream said up to it
    return popen


def finish(popen, timeout=120):
    """Waits for the tool; one that overruns is killed and fails the test."""
    try:
        out, err = popen.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        popen.kill()
        out, err = popen.communicate(timeout=30)
        raise AssertionError("tool still running after %ss:\n%s" % (timeout, err))
    return popen.returncode, out, err


def schedstat(pid):
    """(seconds on a CPU, seconds waiting for one) of PID's main thread."""
    with open("/proc/%d/schedstat" % pid) as fp:
        on_cpu, waiting = fp.read().split()[:2]
    return int(on_cpu) / 1e9, int(waiting) / 1e9


def wall_seconds(pid):
    """The wall clock, as a clock of run_until."""
    return time.monotonic()


def blocked_seconds(pid):
    """A clock of the time PID's main thread is blocked: it moves as the
    wall clock does, except while the thread is on a CPU or waits for one."""
    on_cpu, waiting = schedstat(pid)
    return time.monotonic() - on_cpu - waiting


def run_until(tool, args, pid, clock, amount, cap, started=None, stopping=None):
    """Runs TOOL -v ARGS (ARGS name the target; CAP seconds at most) from
    -v's start-up line (as it starts sampling or tracing; STARTED() is
    called then) until CLOCK(PID) (cpu_seconds, blocked_seconds, wall_seconds)
    moved on by AMOUNT, then (STOPPING() called just before) stops it as
    Ctrl-C does: the run lasts as long as the workload takes to have what a
    test needs, however loaded the machine, and a truth the workload
    measures between STARTED() and STOPPING() covers the tool's window,
    however long the tool then takes to report.
    Returns (stdout, stderr, how far CLOCK moved); fails unless it exits
    with 0."""
    name = os.path.basename(tool)
    running = start_tool(tool, ["-v"] + list(args) + [str(cap)], timeout=180,
                         header_on="stderr", header=(name + ": start-up ",))
    start = now = clock(pid)
    if started:
        started()
    while running.poll() is None and now - start < amount:
        time.sleep(0.05)
        now = clock(pid)
    if stopping:
        stopping()
    if running.poll() is None:
        running.send_signal(signal.SIGINT)  # it reports what it saw, exits 0
    rc, out, err = finish(running, timeout=cap + 60)
    err = running.before_header + err
    assert rc == 0, err
    return out, err, now - start


def at_once(calls):
    """Runs each of CALLS ({name: function}) in a thread of its own, all at
    once; {name: its future}, once all are done."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(calls)) as pool:
        futures = {name: pool.submit(fn) for name, fn in calls.items()}
    return futures


def failed(exc):
    future = concurrent.futures.Future()
    future.set_exception(exc)
    return future


def parse_folded(text):
    """[(frames list without comm, comm, count)]"""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        rows.append((frames[1:], frames[0], int(count)))
    return rows


def frame_name(frame):
    """'qualname (file:line)' -> 'qualname'"""
    return frame.rsplit(" (", 1)[0]


def read_json(path, timeout=20, key=None):
    import json
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as fp:
                data = json.load(fp)
            if key is None or data.get(key):
                return data
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise AssertionError("no usable %s within %ss" % (path, timeout))


def run_on_cue(interp, tool, workload, tmp_path, tool_args, workload_args=(),
               ready="state.json", truth=None, settle=0, timeout=120, pass_fds=()):
    """The set-up of a measured run: WORKLOAD (placed where INTERP sees it)
    starts with a scratch directory as its first argument (then
    WORKLOAD_ARGS), says it is ready ({"ready": true} in READY there),
    TOOL starts (TOOL_ARGS + -p PID -o OUT; TOOL_ARGS may instead be a
    function of (ready state, pid) that returns the whole target part),
    SETTLE seconds pass, "go" appears in the scratch directory, and the
    tool ends with the workload. Returns (OUT's text, the tool's stderr,
    TRUTH: a (file, key) of the scratch directory read before it goes, or
    None). The workload inherits the descriptors PASS_FDS."""
    import tempfile
    script = interp.place(workload)
    tmp = tempfile.mkdtemp(dir=str(tmp_path))  # one per run
    scratch = interp.scratch(tmp)
    out = os.path.join(tmp, "report")
    proc = interp.spawn([script, scratch.proc] + list(workload_args), pass_fds=pass_fds)
    try:
        state = read_json(scratch.host_path(ready), key="ready", timeout=60)
        target = (tool_args(state, proc.pid) if callable(tool_args)
                  else list(tool_args) + ["-p", str(proc.pid)])
        running = start_tool(tool, target + ["-o", out])
        time.sleep(settle)
        with open(scratch.host_path("go"), "w"):
            pass
        rc, _, err = finish(running, timeout=timeout)
        assert rc == 0, err
        got = read_json(scratch.host_path(truth[0]), key=truth[1], timeout=30) if truth else None
    finally:
        proc.kill()
        scratch.cleanup()
    with open(out, encoding="utf-8") as fp:
        return fp.read(), err, got


DURATION = r"\d+(?:\.\d+)? (?:us|ms|s)|\d+ min \d+ s|\d+ h \d+ min"


def duration_us(text):
    """'950 us', '12.3 ms', '4.52 s', '21 min 47 s', '3 h 05 min' ->
    microseconds (as precise as the text)."""
    import re
    m = re.fullmatch(r"(\d+) h (\d+) min", text)
    if m:
        return (int(m.group(1)) * 3600 + int(m.group(2)) * 60) * 10 ** 6
    m = re.fullmatch(r"(\d+) min (\d+) s", text)
    if m:
        return (int(m.group(1)) * 60 + int(m.group(2))) * 10 ** 6
    value, unit = text.split()
    return float(value) * {"us": 1, "ms": 1e3, "s": 1e6}[unit]


def offcpu_times(err):
    """(blocked, runnable) microseconds from pyoffcpu's closing summary, or
    None."""
    import re
    m = re.search(r"pyoffcpu: (%s) blocked; (%s) runnable waiting for a CPU" % (DURATION, DURATION),
                  err)
    return (duration_us(m.group(1)), duration_us(m.group(2))) if m else None


def intervals_not_placed(err, ended_at_wakeup=False):
    """From pyoffcpu's summary: the intervals it could not place (the
    kernel reported neither their return to a CPU nor their wake-up), and
    with ENDED_AT_WAKEUP also those it ended at their wake-up (the runnable
    time after it not seen)."""
    import re
    lines = [r"(\d+) intervals? not counted \(preempted"]
    if ended_at_wakeup:
        lines.append(r"(\d+) blocked intervals? ended at (?:its|their) wake-up")
    return sum(int(m.group(1)) for m in (re.search(x, err) for x in lines) if m)


def switches_unseen(err):
    """From pyoffcpu's summary: the runs of its BPF programs the kernel
    skipped (a switch off CPU it did not see loses that interval whole,
    with nothing left to count it by) and the intervals it could not place
    (intervals_not_placed). Off-CPU time may fall short of the truth only
    when this is not 0."""
    import re
    m = re.search(r"the kernel skipped (\d+) runs? of the tool", err)
    return (int(m.group(1)) if m else 0) + intervals_not_placed(err)


# Forks the tool from a fresh, small interpreter: a process's peak RSS
# (ru_maxrss) carries over exec, so a tool started straight from pytest
# would report pytest's own memory as its peak.
_MEASURE = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fp:
    fp.write("%d %d" % (ru.ru_maxrss, status))
"""


def run_measured(argv, timeout=120, memory_limit_mb=None):
    """Runs argv to its end; returns (exit status as subprocess gives it,
    stdout, stderr, seconds, peak RSS of the tool in MB). Past TIMEOUT
    seconds, or MEMORY_LIMIT_MB of RSS, the tool is killed (-9)."""
    import tempfile
    with tempfile.NamedTemporaryFile(prefix="rusage.") as report:
        t0 = time.monotonic()
        p = subprocess.Popen([sys.executable, "-S", "-c", _MEASURE, report.name] + list(argv),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
        out, err = [], []
        readers = [threading.Thread(target=lambda s=s, b=b: b.append(s.read()), daemon=True)
                   for s, b in ((p.stdout, out), (p.stderr, err))]
        for r in readers:
            r.start()
        while p.poll() is None:
            over = time.monotonic() - t0 > timeout
            if memory_limit_mb and not over:
                over = any(rss > memory_limit_mb for rss in _children_rss_mb(p.pid))
            if over:
                for pid in _children(p.pid):
                    try:
                        os.kill(pid, 9)
                    except ProcessLookupError:
                        pass
            time.sleep(0.05)
        for r in readers:
            r.join(30)
        seconds = time.monotonic() - t0
        text = report.read().decode().split()
    if len(text) != 2:
        return p.returncode, "".join(out), "".join(err), seconds, 0.0
    status = int(text[1])
    rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return rc, "".join(out), "".join(err), seconds, int(text[0]) / 1024


def _children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as fp:
            return [int(x) for x in fp.read().split()]
    except OSError:
        return []


def _children_rss_mb(pid):
    rss = []
    for child in _children(pid):
        try:
            with open("/proc/%d/statm" % child) as fp:
                rss.append(int(fp.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20)
        except (OSError, IndexError, ValueError):
            pass
    return rss
