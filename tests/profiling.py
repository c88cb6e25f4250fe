"""Helpers to run the BPF tools and read their folded output."""
import os
import subprocess
import threading
import time


def cpu_seconds(pid):
    """CPU time (user and system) process PID has had so far, in seconds."""
    with open("/proc/%d/stat" % pid) as fp:
        f = fp.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def start_tool(path, args, timeout=120, header_on="stdout"):
    """Starts a tool and waits for its header line ("Sampling..." or
    "Tracing...", printed once its probes are attached) on HEADER_ON
    (stdout, or stderr for modes that keep stdout for folded stacks).
    Fails, never blocks, if it does not come within timeout seconds."""
    popen = subprocess.Popen([path] + list(args), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
    stream = popen.stdout if header_on == "stdout" else popen.stderr
    seen = []

    def read_to_header():
        for line in iter(stream.readline, ""):
            seen.append(line)
            if line.startswith(("Sampling", "Tracing")):
                return

    reader = threading.Thread(target=read_to_header, daemon=True)
    reader.start()
    reader.join(timeout)
    started = bool(seen) and seen[-1].startswith(("Sampling", "Tracing"))
    if not started:
        popen.kill()  # also ends a reader still blocked in readline
        reader.join(30)
        out, err = popen.communicate(timeout=30)
        raise AssertionError("%s did not start: rc=%s\n%s%s%s" % (
            path, popen.returncode, "".join(seen), out, err))
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
               ready="state.json", truth=None, settle=0, timeout=120):
    """The set-up of a measured run: WORKLOAD (placed where INTERP sees it)
    starts with a scratch directory as its first argument (then
    WORKLOAD_ARGS), says it is ready ({"ready": true} in READY there),
    TOOL starts (TOOL_ARGS + -p PID -o OUT; TOOL_ARGS may instead be a
    function of (ready state, pid) that returns the whole target part),
    SETTLE seconds pass, "go" appears in the scratch directory, and the
    tool ends with the workload. Returns (OUT's text, the tool's stderr,
    TRUTH: a (file, key) of the scratch directory read before it goes, or
    None)."""
    import tempfile
    script = interp.place(workload)
    tmp = tempfile.mkdtemp(dir=str(tmp_path))  # one per run
    scratch = interp.scratch(tmp)
    out = os.path.join(tmp, "report")
    proc = interp.spawn([script, scratch.proc] + list(workload_args))
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
