"""Workloads whose hot line is known exactly, for line-number tests.

    python known_lines.py STATE.json MODE [SECONDS]

MODE is one of
  cpu     burn_on_one_line(): every call's CPU time is spent on one line
          (a sum() of a range), marked HOT_CPU below;
  block   block_on_one_line(): sleeps 20 ms at a time on one line,
          marked HOT_BLOCK;
  init    construct_widgets() builds Widget objects in a hot loop (so
          the call gets specialised: 3.13+ push an internal cleanup frame
          between the caller and __init__), each __init__ burning on one
          line, HOT_INIT, called from the line marked CALL_INIT.
Writes STATE.json ({"pid", "ready", "lines": {marker: line number}}) once
the loop runs, then goes on for SECONDS (default 60) and exits.
The markers are comments at the end of the lines; tests find the line
numbers the same way (lines_of()).
"""
import json
import os
import sys
import time

MARKERS = ("HOT_CPU", "HOT_BLOCK", "HOT_INIT", "CALL_INIT")


def lines_of(path):
    """{marker: line number} of the marked lines of this file."""
    found = {}
    with open(path, encoding="utf-8") as fp:
        for number, text in enumerate(fp, 1):
            for m in MARKERS:
                if text.rstrip().endswith("# " + m):
                    found[m] = number
    return found


def burn_on_one_line(until):
    while time.time() < until:
        sum(range(300000))  # HOT_CPU


def block_on_one_line(until):
    while time.time() < until:
        time.sleep(0.02)  # HOT_BLOCK


class Widget:
    def __init__(self, n):
        self.total = sum(range(n))  # HOT_INIT


def construct_widgets(until):
    made = 0
    while time.time() < until:
        Widget(20000)  # CALL_INIT
        made += 1
    return made


def main():
    out, mode = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
    fn = {"cpu": burn_on_one_line, "block": block_on_one_line,
          "init": construct_widgets}[mode]
    fn(time.time() + 0.5)  # warm up (and specialise the calls)
    state = {"pid": os.getpid(), "ready": True, "lines": lines_of(__file__)}
    with open(out + ".tmp", "w") as fp:
        json.dump(state, fp)
    os.rename(out + ".tmp", out)
    fn(time.time() + seconds)


if __name__ == "__main__":
    main()
