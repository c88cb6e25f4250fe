#!/usr/bin/env python3
"""Lab 1: the nightly sales report got slow.

Builds the same sales report over and over (as a batch job would for many
shops) and prints how many reports per second it manages. Nothing in it
looks expensive. Find out with pyprofile where the CPU goes.

    python3 report.py [--seconds N] [--orders N] [--truth FILE]

--truth FILE is for the instructor and the tests: it writes the CPU
seconds this thread really spent in each step, measured by the program
itself, to FILE (JSON) every second and at the end.
Runs on Python 3.8+.
"""
import argparse
import json
import os
import random
import time


def load_orders(count, seed=7):
    rng = random.Random(seed)
    return [{"id": i,
             "customer": "customer-%04d" % rng.randrange(10000),
             "card": "%016d" % rng.randrange(10 ** 15, 10 ** 16),
             "total": rng.randrange(100, 10 ** 6) / 100}
            for i in range(count)]


def mask_card(number):
    """The card number as printed on the report: every digit scrambled."""
    return "".join(chr(48 + (ord(digit) - 48 + 7 * i) % 10)
                   for i, digit in enumerate(number))


def largest_first(orders):
    return sorted(orders, key=lambda order: order["total"], reverse=True)


class Report:
    def __init__(self, title):
        self.text = title + "\n"

    def add_row(self, order, masked):
        self.text += "%6d  %-14s %s %12.2f\n" % (order["id"], order["customer"], masked,
                                                 order["total"])


def build_report(orders, steps):
    """One report. STEPS gets the CPU seconds of each step added to it."""
    t0 = time.thread_time()
    ordered = largest_first(orders)
    t1 = time.thread_time()
    masked = [mask_card(order["card"]) for order in ordered]
    t2 = time.thread_time()
    report = Report("Sales, largest orders first")
    for order, card in zip(ordered, masked):
        report.add_row(order, card)
    t3 = time.thread_time()
    steps["largest_first"] += t1 - t0
    steps["mask_card"] += t2 - t1
    steps["add_row"] += t3 - t2
    return report.text


def write_truth(path, steps, reports, wall):
    tmp = path + ".tmp"
    with open(tmp, "w") as fp:
        json.dump({"pid": os.getpid(), "cpu": steps, "reports": reports, "wall": wall}, fp)
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0, help="run this long (default: forever)")
    ap.add_argument("--orders", type=int, default=2000)
    ap.add_argument("--truth", help="write the measured CPU seconds per step here")
    args = ap.parse_args()
    orders = load_orders(args.orders)
    steps = {"largest_first": 0.0, "mask_card": 0.0, "add_row": 0.0}
    start = last = time.monotonic()
    reports = 0
    while not args.seconds or time.monotonic() - start < args.seconds:
        build_report(orders, steps)
        reports += 1
        if args.truth and time.monotonic() - last >= 1:
            write_truth(args.truth, steps, reports, time.monotonic() - start)
            last = time.monotonic()
    if args.truth:
        write_truth(args.truth, steps, reports, time.monotonic() - start)
    print("%.1f reports/s" % (reports / (time.monotonic() - start)))


if __name__ == "__main__":
    main()
