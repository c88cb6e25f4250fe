#!/usr/bin/env python3
"""Lab 4: the catalog service stopped answering.

A catalog service keeps product prices in a cache in front of its
database. Three background threads keep it fresh: a refresher reloads
stale cache entries from the database, a writer applies price changes to
the database (and drops the cached copies), a price feed reads updates
from an upstream server. After a few seconds the service stops answering:
no errors, no CPU. Find out with pydump why, without restarting it.

    python3 catalog_service.py [--truth FILE]

--truth FILE is for the instructor and the tests: once the service is
stuck it writes what each thread holds and waits for (thread ids, the
locks' addresses, the feed's socket ports) to FILE (JSON).
Runs on Python 3.8+.
"""
import argparse
import json
import os
import socket
import threading
import time


class Database:
    def __init__(self):
        self.lock = threading.Lock()
        self.prices = {"sku-%d" % i: 100 + i for i in range(50)}

    def read(self, sku):
        with self.lock:
            return self.prices[sku]

    def apply_change(self, sku, price, cache):
        with self.lock:
            self.prices[sku] = price
            time.sleep(0.3)         # the write takes a while
            cache.invalidate(sku)   # the cached copy is stale now


class Cache:
    def __init__(self, db):
        self.db = db
        self.lock = threading.Lock()
        self.entries = {}

    def refresh(self, skus):
        with self.lock:
            for sku in skus:
                time.sleep(0.1)
                self.entries[sku] = self.db.read(sku)

    def invalidate(self, sku):
        with self.lock:
            self.entries.pop(sku, None)


def refresher(cache, seen):
    seen["refresher"] = threading.get_native_id()
    while True:
        cache.refresh(["sku-%d" % i for i in range(10)])
        time.sleep(1)


def writer(db, cache, seen):
    seen["writer"] = threading.get_native_id()
    time.sleep(0.05)
    while True:
        db.apply_change("sku-3", 99, cache)
        time.sleep(1)


def price_feed(address, seen):
    seen["price_feed"] = threading.get_native_id()
    conn = socket.create_connection(address)
    seen["feed_ports"] = (conn.getsockname()[1], conn.getpeername()[1])
    while True:
        conn.sendall(b"SUBSCRIBE prices\n")
        update = conn.recv(4096)    # no timeout
        if not update:
            break


def upstream_server(listener):
    """Accepts the feed's connection and never sends anything."""
    conn, _ = listener.accept()
    while conn.recv(4096):
        pass


def write_truth(path, db, cache, seen):
    truth = {
        "pid": os.getpid(),
        "main": threading.get_native_id(),
        "threads": {name: seen[name] for name in ("refresher", "writer", "price_feed")},
        # the refresher holds cache.lock and waits for db.lock; the writer
        # holds db.lock and waits for cache.lock
        "locks": {"cache.lock": "0x%x" % id(cache.lock), "db.lock": "0x%x" % id(db.lock)},
        "objects": {"cache": "0x%x" % id(cache), "db": "0x%x" % id(db)},
        "feed_ports": seen["feed_ports"],
    }
    tmp = path + ".tmp"
    with open(tmp, "w") as fp:
        json.dump(truth, fp)
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--truth", help="write what each thread holds and waits for here")
    args = ap.parse_args()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    db = Database()
    cache = Cache(db)
    seen = {}
    threads = [
        threading.Thread(target=upstream_server, args=(listener,), name="upstream", daemon=True),
        threading.Thread(target=refresher, args=(cache, seen), name="refresher", daemon=True),
        threading.Thread(target=writer, args=(db, cache, seen), name="writer", daemon=True),
        threading.Thread(target=price_feed, args=(listener.getsockname(), seen),
                         name="price-feed", daemon=True),
    ]
    for t in threads:
        t.start()
    print("catalog service running, pid %d" % os.getpid(), flush=True)
    if args.truth:
        # stuck for good: both locks held for 1.5 s on end (a write holds
        # the database's lock for 0.3 s, a refresh the cache's for 1 s)
        held_since = None
        while held_since is None or time.monotonic() - held_since < 1.5:
            both = cache.lock.locked() and db.lock.locked() and "feed_ports" in seen
            held_since = (held_since or time.monotonic()) if both else None
            time.sleep(0.05)
        write_truth(args.truth, db, cache, seen)
    for t in threads[1:]:
        t.join()


if __name__ == "__main__":
    main()
