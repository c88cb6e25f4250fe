#!/usr/bin/env python3
"""Demo workload for pybpf-tools: CPU-bound work with known shares.

The main thread repeats a 100 ms cycle of three phases, each given a fixed
budget of its own CPU time (time.thread_time), so the split is known:

    parse_records   50 %   split/convert CSV-like lines
    compute_stats   30 %   group, sort(key=...), mean/median
    render_report   20 %   string formatting and joining

A second thread sleeps in select() on a pipe nobody writes to (off-CPU).

    python3 demo_workload.py [--seconds N]     (default: run until killed)
Runs on Python 3.8+.
"""
import argparse
import os
import random
import select
import threading
import time

CYCLE = 0.100                                   # seconds of CPU per cycle
SHARES = {"parse": 0.50, "stats": 0.30, "render": 0.20}
CITIES = ["Lisbon", "Oslo", "Quito", "Hanoi", "Accra", "Perth", "Lima", "Riga"]


def make_lines(n=2000):
    rnd = random.Random(42)
    return ["%d, %s ,%s,%.2f,%d" % (i, "user%04d" % rnd.randrange(9999),
                                    rnd.choice(CITIES), rnd.uniform(1, 500),
                                    1700000000 + i * 37) for i in range(n)]


def parse_records(lines, budget):
    """Turns text lines into dicts, over and over, for `budget` CPU seconds."""
    deadline = time.thread_time() + budget
    records = []
    while time.thread_time() < deadline:
        records = []
        for line in lines[:200]:
            ident, name, city, amount, stamp = line.split(",")
            records.append({"id": int(ident), "name": name.strip().title(),
                            "city": city.lower(), "amount": float(amount),
                            "ts": int(stamp)})
    return records


def compute_stats(records, budget):
    """Per-city count, total, mean, median and top spenders."""
    deadline = time.thread_time() + budget
    stats = {}
    while time.thread_time() < deadline:
        by_city = {}
        for r in records:
            by_city.setdefault(r["city"], []).append(r)
        for city, rows in by_city.items():
            amounts = sorted(r["amount"] for r in rows)
            top = sorted(rows, key=lambda r: (-r["amount"], r["name"]))[:3]
            stats[city] = (len(rows), sum(amounts), sum(amounts) / len(amounts),
                           amounts[len(amounts) // 2], [r["name"] for r in top])
    return stats


def render_report(stats, budget):
    """Formats the stats as a fixed-width text table."""
    deadline = time.thread_time() + budget
    text = ""
    while time.thread_time() < deadline:
        rows = ["%-8s %5s %10s %8s %8s  %s" % ("city", "n", "total", "mean", "median", "top")]
        for city in sorted(stats):
            n, total, mean, median, top = stats[city]
            rows.append("%-8s %5d %10.2f %8.2f %8.2f  %s" % (
                city.capitalize(), n, total, mean, median, ", ".join(top)))
        text = "\n".join(rows).upper().replace(" ", ".")
    return text


def wait_for_events():
    """Off-CPU: blocks in select() forever (nobody writes to the pipe)."""
    r, w = os.pipe()
    select.select([r], [], [])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop after this many seconds (default: forever)")
    args = ap.parse_args()
    threading.Thread(target=wait_for_events, name="events", daemon=True).start()
    lines = make_lines()
    end = None if args.seconds is None else time.monotonic() + args.seconds
    while end is None or time.monotonic() < end:
        records = parse_records(lines, CYCLE * SHARES["parse"])
        stats = compute_stats(records, CYCLE * SHARES["stats"])
        render_report(stats, CYCLE * SHARES["render"])


if __name__ == "__main__":
    main()
