"""A command for the tools to launch (TOOL -- python launched.py OUT STATUS).

Its very first statement calls first_work(), which burns about 0.6 s of
CPU in 30 chunks; then it writes OUT (JSON): "first_work_cpu", the CPU
time first_work spent (chunks x the median chunk: the median is immune to
a hypervisor pause charged to one chunk), and who it ran as (uid, gid,
groups, HOME). Then it exits with status STATUS, or, if STATUS is
"SIGTERM", kills itself with that signal.
"""
import time

CHUNKS = 30


def first_work(chunk_s):
    spent = []
    for _ in range(CHUNKS):
        t0 = time.thread_time()
        while time.thread_time() - t0 < chunk_s:
            sum(range(200))
        spent.append(time.thread_time() - t0)
    return sorted(spent)[CHUNKS // 2] * CHUNKS


CPU = first_work(0.02)

import json  # noqa: E402 - after the measured start on purpose
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402


def main():
    out, status = sys.argv[1], sys.argv[2]
    with open(out + ".tmp", "w") as fp:
        json.dump({"first_work_cpu": CPU, "uid": os.getuid(), "gid": os.getgid(),
                   "groups": sorted(os.getgroups()), "home": os.environ.get("HOME")}, fp)
    os.rename(out + ".tmp", out)
    if status == "SIGTERM":
        os.kill(os.getpid(), signal.SIGTERM)
    sys.exit(int(status))


main()
