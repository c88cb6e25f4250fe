#!/usr/bin/env python3
"""Workloads for test_faults.py: functions with distinctive names that burn
CPU and block (for pyprofile, pyoffcpu and pygil alike), and the faults
around them.

    python faults.py DIR MODE [SECONDS [PYTHON]]

Writes DIR/state.json ({"pid", "ready": true, ...}) once running and keeps
running its named function until the file DIR/go exists, then for SECONDS
more (default 2), then does what MODE says:

  exit         two threads in exit_soon_spin (they contend for the GIL);
               then exits with status 0
  exec-sleep   two threads in burn_before_exec; then os.execv (from the
               main thread, the other still running) into `sleep 10`
  exec-python  the same, but os.execv into PYTHON (default: this
               interpreter) running burn_after_exec in two threads for
               2.5 s (then it exits)
  children     parent_of_children; after DIR/go, twice: forks a child that
               runs forked_child_work 0.6 s, starts a child interpreter in
               spawned_child_work 0.6 s and one in short_child_work that
               lives about 0.3 s; records their pids ("children"), exits
  churn        threads in churn_thread_work start and end all the time (at
               most 4 at once, each about 2 ms); from DIR/go on, counts
               them ("threads", "seconds"), then exits
  forever      two threads in forever_spin until killed

Before exiting (or exec'ing), state.json is rewritten with "done": true.
Python 3.8+.
"""
import json
import os
import subprocess
import sys
import threading
import time

DIR, MODE = sys.argv[1], sys.argv[2]
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
GO = os.path.join(DIR, "go")

# One round: about 2 ms on CPU, then 1 ms asleep. Shared by the programs
# this one execs or starts (they get it as source).
CYCLE = '''
import time
def cycle(burn=0.002, nap=0.001):
    end = time.monotonic() + burn
    while time.monotonic() < end:
        sum(range(300))
    time.sleep(nap)
'''
_namespace = {}
exec(CYCLE, _namespace)
cycle = _namespace["cycle"]

AFTER_EXEC = CYCLE + '''
import threading
def burn_after_exec(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        cycle()
other = threading.Thread(target=burn_after_exec, args=(2.5,))
other.start()
burn_after_exec(2.5)
other.join()
'''

CHILD = CYCLE + '''
import sys
def spawned_child_work(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        cycle()
def short_child_work(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        cycle()
{"spawned_child_work": spawned_child_work,
 "short_child_work": short_child_work}[sys.argv[1]](float(sys.argv[2]))
'''

STATE = {"pid": os.getpid(), "mode": MODE}


def write_state(**extra):
    STATE.update(extra)
    tmp = os.path.join(DIR, "state.json.tmp.%d" % os.getpid())
    with open(tmp, "w") as fp:
        json.dump(STATE, fp)
    os.rename(tmp, os.path.join(DIR, "state.json"))


class Phase:
    """over() turns true SECONDS after DIR/go appeared."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.end = None

    def started(self):
        if self.end is None and os.path.exists(GO):
            self.end = time.monotonic() + self.seconds
        return self.end is not None

    def over(self):
        return self.started() and time.monotonic() >= self.end


def exit_soon_spin(phase):
    while not phase.over():
        cycle()


def burn_before_exec(phase):
    while not phase.over():
        cycle()


def forever_spin():
    while True:
        cycle()


def forked_child_work(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        cycle()


def parent_of_children(phase):
    kids = []
    while not phase.started():
        cycle()
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            try:
                forked_child_work(0.6)
            finally:
                os._exit(0)
        kids.append(pid)
        os.waitpid(pid, 0)
        for name, seconds in (("spawned_child_work", "0.6"), ("short_child_work", "0.3")):
            child = subprocess.Popen([sys.executable, "-c", CHILD, name, seconds])
            kids.append(child.pid)
            if child.wait() != 0:
                raise SystemExit("child %s failed" % name)
    return kids


def churn_thread_work():
    cycle(0.0015, 0.0005)


def churn(phase):
    alive = []
    count = 0
    t0 = None
    while not phase.over():
        if t0 is None and phase.started():
            t0, count = time.monotonic(), 0
        while len(alive) >= 4:
            alive.pop(0).join()
        t = threading.Thread(target=churn_thread_work)
        t.start()
        alive.append(t)
        count += 1
    for t in alive:
        t.join()
    return count, time.monotonic() - t0


def main():
    phase = Phase(SECONDS)
    if MODE == "exit":
        other = threading.Thread(target=exit_soon_spin, args=(phase,))
        other.start()
        write_state(ready=True)
        exit_soon_spin(phase)
        other.join()
        write_state(done=True)
    elif MODE in ("exec-sleep", "exec-python"):
        other = threading.Thread(target=burn_before_exec, args=(phase,), daemon=True)
        other.start()
        write_state(ready=True)
        burn_before_exec(phase)
        write_state(done=True)
        if MODE == "exec-sleep":
            os.execv("/bin/sleep", ["sleep", "10"])
        python = sys.argv[4] if len(sys.argv) > 4 else sys.executable
        os.execv(python, [python, "-c", AFTER_EXEC])
    elif MODE == "children":
        write_state(ready=True)
        kids = parent_of_children(phase)
        write_state(done=True, children=kids)
    elif MODE == "churn":
        write_state(ready=True)
        count, seconds = churn(phase)
        write_state(done=True, threads=count, seconds=seconds)
    elif MODE == "forever":
        threading.Thread(target=forever_spin, daemon=True).start()
        write_state(ready=True)
        forever_spin()
    else:
        raise SystemExit("unknown mode %r" % MODE)


main()
