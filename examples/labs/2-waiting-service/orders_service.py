#!/usr/bin/env python3
"""Lab 2: the order service is slow, but its CPU is idle.

A small order service: a client thread sends it requests, the main thread
handles them one at a time. Each request needs the shop's configuration,
the customer's record and an entry in the audit log. The service answers
only about 20 requests a second, yet top shows it using a few percent of a
CPU. Find out with pyoffcpu where its time goes.

    python3 orders_service.py [--seconds N] [--truth FILE]

--truth FILE is for the instructor and the tests: it writes the seconds
the request handler really spent in each step, measured by the program
itself, to FILE (JSON) every second and at the end.
Runs on Python 3.8+.
"""
import argparse
import json
import os
import queue
import socket
import threading
import time

CONFIG_TTL = 30.0


class ConfigClient:
    """Fetches the shop's configuration from the config server and caches it."""

    def __init__(self, sock):
        self.sock = sock
        self.cached = None
        self.fetched_at = 0.0

    def get(self):
        age = time.monotonic() - self.fetched_at
        if self.cached is None or age < CONFIG_TTL:
            self.cached = self.fetch_remote_config()
            self.fetched_at = time.monotonic()
        return self.cached

    def fetch_remote_config(self):
        self.sock.sendall(b"config?\n")
        return self.sock.recv(64)


def config_server(sock):
    """The config server: a slow one, 25 ms per answer."""
    while sock.recv(64):
        time.sleep(0.025)
        sock.sendall(b"currency=EUR;vat=0.2")


CUSTOMERS = {i: {"id": i, "name": "customer-%d" % i} for i in range(1000)}
audit_lock = threading.Lock()
audit_log = []


def load_customer(customer_id):
    return dict(CUSTOMERS[customer_id % len(CUSTOMERS)])


def write_audit(entry):
    with audit_lock:
        audit_log.append(entry)


def flush_audit_log(stop):
    """Every 200 ms, 'writes' the audit log to slow storage (30 ms) while
    holding the lock, so that no entry is lost meanwhile."""
    while not stop.is_set():
        time.sleep(0.2)
        with audit_lock:
            time.sleep(0.030)
            del audit_log[:]


def handle(request, config, steps):
    t0 = time.perf_counter()
    settings = config.get()
    t1 = time.perf_counter()
    customer = load_customer(request)
    t2 = time.perf_counter()
    write_audit((request, customer["name"], settings[:12]))
    t3 = time.perf_counter()
    steps["get_config"] += t1 - t0
    steps["load_customer"] += t2 - t1
    steps["write_audit"] += t3 - t2


def client(requests, stop):
    n = 0
    while not stop.is_set():
        requests.put(n)
        n += 1
        time.sleep(0.010)


def write_truth(path, steps, served, wall):
    tmp = path + ".tmp"
    with open(tmp, "w") as fp:
        json.dump({"pid": os.getpid(), "seconds": steps, "served": served, "wall": wall}, fp)
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0, help="run this long (default: forever)")
    ap.add_argument("--truth", help="write the measured seconds per step here")
    args = ap.parse_args()
    ours, theirs = socket.socketpair()
    stop = threading.Event()
    requests = queue.Queue(maxsize=100)
    for target, arg in ((config_server, theirs), (flush_audit_log, stop), (client, stop)):
        threading.Thread(target=target, args=(requests, stop) if target is client else (arg,),
                         name=target.__name__, daemon=True).start()
    config = ConfigClient(ours)
    steps = {"get_config": 0.0, "load_customer": 0.0, "write_audit": 0.0}
    start = last = time.monotonic()
    served = 0
    while not args.seconds or time.monotonic() - start < args.seconds:
        handle(requests.get(), config, steps)
        served += 1
        if args.truth and time.monotonic() - last >= 1:
            write_truth(args.truth, steps, served, time.monotonic() - start)
            last = time.monotonic()
    stop.set()
    if args.truth:
        write_truth(args.truth, steps, served, time.monotonic() - start)
    print("%.1f requests/s" % (served / (time.monotonic() - start)))


if __name__ == "__main__":
    main()
