#!/usr/bin/env python3
"""Lab 6: the nightly import is slow, and the CPU profile says it is parsing.

A batch job imports orders: for each batch it fetches the orders from a
partner's API, parses them, and stores them in the database. It takes
about 15 seconds for 30 batches, yet it uses only a few seconds of CPU. A
CPU profile points at the parser; speeding the parser up would hardly
help. Run the job under pyprofile, and then under pyprofile --wall, which
counts the time spent waiting as well as the time on CPU.

    python3 import_job.py [--batches N] [--truth FILE]

--truth FILE is for the instructor and the tests: at the end it writes the
wall-clock and CPU seconds each step really took, measured by the program
itself, to FILE (JSON).
Runs on Python 3.8+.
"""
import argparse
import json
import os
import socket
import threading
import time

db_lock = threading.Lock()


def partner_api(conn):
    """The partner's API: 150 ms per answer."""
    while conn.recv(64):
        time.sleep(0.15)
        conn.sendall(b"[" + b",".join(b'{"id": %d, "qty": %d}' % (i, i % 7) for i in range(2000)) + b"]")


def backup(stop):
    """The database's backup: locks it for 120 ms every 200 ms."""
    while not stop.is_set():
        with db_lock:
            time.sleep(0.12)
        time.sleep(0.08)


def fetch_batch(conn, n):
    conn.sendall(b"GET /orders?batch=%d\n" % n)
    data = b""
    while not data.endswith(b"]"):
        data += conn.recv(65536)
    return data


def parse_batch(data):
    orders = []
    for _ in range(100):           # a cautious parser: it checks every batch 100 times
        orders = json.loads(data)
        for order in orders:
            if not (isinstance(order["id"], int) and order["qty"] >= 0):
                raise ValueError(order)
    return orders


def store_batch(orders, table):
    with db_lock:
        table.extend(orders)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--truth", help="write the measured seconds per step here")
    args = ap.parse_args()
    ours, theirs = socket.socketpair()
    stop = threading.Event()
    threading.Thread(target=partner_api, args=(theirs,), name="partner-api", daemon=True).start()
    threading.Thread(target=backup, args=(stop,), name="backup", daemon=True).start()
    steps = {s: {"wall": 0.0, "cpu": 0.0} for s in ("fetch_batch", "parse_batch", "store_batch")}
    table = []
    start = time.monotonic()
    for n in range(args.batches):
        data = None
        for step in ("fetch_batch", "parse_batch", "store_batch"):
            w0, c0 = time.perf_counter(), time.thread_time()
            if step == "fetch_batch":
                data = fetch_batch(ours, n)
            elif step == "parse_batch":
                data = parse_batch(data)
            else:
                store_batch(data, table)
            steps[step]["wall"] += time.perf_counter() - w0
            steps[step]["cpu"] += time.thread_time() - c0
    stop.set()
    took = time.monotonic() - start
    print("imported %d orders in %.1f s (%.1f s of CPU)"
          % (len(table), took, time.process_time()))
    if args.truth:
        with open(args.truth + ".tmp", "w") as fp:
            json.dump({"pid": os.getpid(), "seconds": steps, "wall": took}, fp)
        os.rename(args.truth + ".tmp", args.truth)


if __name__ == "__main__":
    main()
