#!/usr/bin/env python3
"""Memory growth of known size in two named functions, for pymem's tests.

    python memory_growth.py DIR [STRINGS [BUFFER_MB]]

Writes DIR/state.json ({"pid", "ready": true}) and waits for DIR/go; then
grow_strings keeps STRINGS distinct strings of 100 characters in a list
(default 800,000: about 130 MB) and grow_buffer a bytearray of BUFFER_MB
MiB (default 64), each writing every page it gets. Then state.json is
rewritten with "done": true, the bytes each function holds as CPython's
allocator sizes them ("strings_bytes": each string's size rounded up to
the allocator's 16 bytes, and the list's, a lower bound: CPython may leave
a string's block larger when it shrinks it; "buffer_bytes") and the
process's own VmRSS before, between and after the two ("rss_before",
"rss_mid", "rss_after"; its peak where /proc is not mounted: the same
between and after, as the process only grows then, but not before, when
its start-up peak may be above it), and, unless DIR/linger exists, it
exits at once (os._exit: no teardown).
Python 3.8+.
"""
import json
import os
import resource
import sys
import time

DIR = sys.argv[1]
STRINGS = int(sys.argv[2]) if len(sys.argv) > 2 else 800000
BUFFER = (int(sys.argv[3]) if len(sys.argv) > 3 else 64) << 20
kept = []


def write_state(**extra):
    state = {"pid": os.getpid()}
    state.update(extra)
    tmp = os.path.join(DIR, "state.json.tmp")
    with open(tmp, "w") as fp:
        json.dump(state, fp)
    os.rename(tmp, os.path.join(DIR, "state.json"))


def rss():
    """VmRSS; in a chroot without /proc, the peak resident size."""
    try:
        with open("/proc/self/status") as fp:
            for line in fp:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def grow_strings(n):
    strings = ["%0100d" % i for i in range(n)]
    kept.append(strings)
    size = sys.getsizeof(strings)
    for s in strings:
        size += (sys.getsizeof(s) + 15) // 16 * 16
    return size


def grow_buffer(n):
    buf = bytearray(n)  # zeroed by CPython: every page written
    kept.append(buf)
    return n


write_state(ready=True)
while not os.path.exists(os.path.join(DIR, "go")):
    time.sleep(0.01)
before = rss()
strings_bytes = grow_strings(STRINGS)
mid = rss()
if os.path.exists(os.path.join(DIR, "pause")):
    # the test reads VmRSS from the host's /proc between the two functions
    write_state(mid=True)
    while not os.path.exists(os.path.join(DIR, "go2")):
        time.sleep(0.01)
buffer_bytes = grow_buffer(BUFFER)
after = rss()
write_state(done=True, strings_bytes=strings_bytes, buffer_bytes=buffer_bytes,
            rss_before=before, rss_mid=mid, rss_after=after)
while os.path.exists(os.path.join(DIR, "linger")):
    time.sleep(0.05)
os._exit(0)
