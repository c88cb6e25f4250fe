"""A server that forks workers, for --children (and a process outside it).

    python forking_server.py DIR            the master
    python forking_server.py DIR outsider   a busy process outside the tree

The master forks early_worker at once (alive when the tool starts), writes
DIR/state.json ({"ready": true, "pid"}) and waits for the file DIR/go. Then
it forks forked_worker, and starts spawned_worker as a new interpreter
(subprocess, like multiprocessing's spawn), waits for the three and exits.
Each worker burns about 1 s of CPU in its own function, in 50 chunks, and
writes DIR/<function>.json with the CPU time it spent (chunks x the
median chunk, immune to a hypervisor pause charged to one chunk).

The outsider burns CPU in outsider_spin until DIR/done exists (the master
writes it at its end) or 120 s pass.
"""
import json
import os
import subprocess
import sys
import time

CHUNKS = 50
DIR = sys.argv[1]


def burn(chunk_s):
    spent = []
    for _ in range(CHUNKS):
        t0 = time.thread_time()
        while time.thread_time() - t0 < chunk_s:
            sum(range(200))
        spent.append(time.thread_time() - t0)
    return sorted(spent)[CHUNKS // 2] * CHUNKS


def write(name, data):
    path = os.path.join(DIR, name)
    with open(path + ".tmp", "w") as fp:
        json.dump(data, fp)
    os.rename(path + ".tmp", path)


def wait_for(name, timeout=120):
    deadline = time.monotonic() + timeout
    while not os.path.exists(os.path.join(DIR, name)) and time.monotonic() < deadline:
        time.sleep(0.02)


def early_worker():
    wait_for("go")
    write("early_worker.json", {"cpu": burn(0.02)})


def forked_worker():
    write("forked_worker.json", {"cpu": burn(0.02)})


def spawned_worker():
    write("spawned_worker.json", {"cpu": burn(0.02)})


def outsider_spin():
    deadline = time.monotonic() + 120
    while not os.path.exists(os.path.join(DIR, "done")) and time.monotonic() < deadline:
        sum(range(200))


def fork(work):
    pid = os.fork()
    if pid == 0:
        try:
            work()
        finally:
            os._exit(0)
    return pid


def master():
    kids = [fork(early_worker)]
    write("state.json", {"ready": True, "pid": os.getpid()})
    wait_for("go")
    kids.append(fork(forked_worker))
    spawned = subprocess.Popen([sys.executable, os.path.abspath(__file__), DIR, "spawned"])
    for pid in kids:
        os.waitpid(pid, 0)
    spawned.wait()
    write("done", {})


if __name__ == "__main__":
    role = sys.argv[2] if len(sys.argv) > 2 else "master"
    {"master": master, "spawned": spawned_worker, "outsider": outsider_spin}[role]()
