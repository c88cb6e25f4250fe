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
          line, HOT_INIT, called from the line marked CALL_INIT;
  init_block  the same with Sleeper objects, whose __init__ sleeps 2 ms on
          one line, HOT_INIT_BLOCK, called from CALL_INIT_BLOCK;
  gil     a thread spins in pure Python while another sleeps 0.5 ms at a
          time on one line, HOT_GIL, in wait_for_gil_on_one_line(): after
          each sleep it waits there for the GIL;
  long    as cpu, in a function whose name is longer than the characters
          the BPF walk reads with a str's header (64), on HOT_LONG.
Writes STATE.json ({"pid", "ready", "lines": {marker: line number}}) once
the loop runs, then goes on for SECONDS (default 60) and exits.
The markers are comments at the end of the lines; tests find the line
numbers the same way (lines_of()).
"""
import json
import os
import sys
import threading
import time

MARKERS = ("HOT_CPU", "HOT_BLOCK", "HOT_INIT", "CALL_INIT", "HOT_INIT_BLOCK",
           "CALL_INIT_BLOCK", "HOT_GIL", "HOT_LONG")


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


def burn_on_one_line_in_a_function_whose_name_is_longer_than_sixty_four_chars(until):
    while time.time() < until:
        sum(range(300000))  # HOT_LONG


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


class Sleeper:
    def __init__(self, seconds):
        time.sleep(seconds)  # HOT_INIT_BLOCK


def construct_sleepers(until):
    made = 0
    while time.time() < until:
        Sleeper(0.002)  # CALL_INIT_BLOCK
        made += 1
    return made


def spin(until):
    n = 0
    while time.time() < until:
        for i in range(200):
            n += i * i
    return n


def wait_for_gil_on_one_line(until):
    while time.time() < until:
        time.sleep(0.0005)  # HOT_GIL


def contend(until):
    spinner = threading.Thread(target=spin, args=(until,), name="spinner")
    spinner.start()
    wait_for_gil_on_one_line(until)
    spinner.join()


def main():
    out, mode = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
    fn = {"cpu": burn_on_one_line, "block": block_on_one_line, "init": construct_widgets,
          "init_block": construct_sleepers, "gil": contend,
          "long": burn_on_one_line_in_a_function_whose_name_is_longer_than_sixty_four_chars}[mode]
    fn(time.time() + 0.5)  # warm up (and specialise the calls)
    state = {"pid": os.getpid(), "ready": True, "lines": lines_of(__file__)}
    with open(out + ".tmp", "w") as fp:
        json.dump(state, fp)
    os.rename(out + ".tmp", out)
    fn(time.time() + seconds)


if __name__ == "__main__":
    main()
