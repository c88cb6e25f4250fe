"""Helpers to run the BPF tools and read their folded output."""
import os
import subprocess
import time


def start_tool(path, args, timeout=120):
    """Starts a tool writing folded stacks to a file; waits for its header
    (printed once sampling is attached). Returns (popen, out_path)."""
    popen = subprocess.Popen([path] + list(args), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
    deadline = time.monotonic() + timeout
    line = ""
    while time.monotonic() < deadline:
        line = popen.stdout.readline()
        if line.startswith(("Sampling", "Tracing")) or not line:
            break
    if not line:
        out, err = popen.communicate(timeout=30)
        raise AssertionError("%s did not start: rc=%s\n%s" % (path, popen.returncode, err))
    return popen


def finish(popen, timeout=120):
    out, err = popen.communicate(timeout=timeout)
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
