#!/usr/bin/env python3
"""A small order service that gets stuck, for pydump (see pydump_example.txt).

Five threads, each stuck in its own way:
  transfer-1, transfer-2  move stock between two warehouses and lock them in
                          opposite orders: a deadlock
  db-client               waits for a reply from its database (a local TCP
                          server that never answers)
  scheduler               sleeps until the next run, an hour from now
  report                  computes a report, on CPU the whole time
and the main thread waits for the service to stop.

Usage: python3 stuck_demo.py [--crash]   (Ctrl-C or kill to stop)

With --crash, a sixth thread ("exporter") reads address 0 through ctypes
after five seconds: the process dies of SIGSEGV (and dumps core where
ulimit -c and /proc/sys/kernel/core_pattern allow), for pydump --core.
"""
import socket
import sys
import threading
import time


class Warehouse:
    def __init__(self, name, stock):
        self.name = name
        self.stock = stock
        self.lock = threading.Lock()


def transfer(source, target, amount):
    with source.lock:
        time.sleep(0.2)            # long enough for the other transfer to start
        with target.lock:
            source.stock -= amount
            target.stock += amount


def query_database(conn, sql):
    conn.sendall(sql.encode())
    return conn.recv(65536)        # the server never answers


def scheduler(interval):
    while True:
        time.sleep(interval)


def report(orders):
    totals = {}
    while True:
        for customer, amount in orders:
            totals[customer] = totals.get(customer, 0) + amount


def export(delay):
    import ctypes
    time.sleep(delay)
    ctypes.string_at(0)            # a bug in a C extension, say


def main():
    north, south = Warehouse("north", 120), Warehouse("south", 80)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    conn = socket.create_connection(server.getsockname())
    peer, _ = server.accept()       # a "database" that reads and never replies
    orders = [("acme", 12.5), ("globex", 7.0), ("initech", 3.25)] * 1000
    threads = [
        threading.Thread(target=transfer, args=(north, south, 10), name="transfer-1"),
        threading.Thread(target=transfer, args=(south, north, 5), name="transfer-2"),
        threading.Thread(target=query_database, args=(conn, "SELECT * FROM stock"),
                         name="db-client"),
        threading.Thread(target=scheduler, args=(3600,), name="scheduler"),
        threading.Thread(target=report, args=(orders,), name="report"),
    ]
    if "--crash" in sys.argv:
        threads.append(threading.Thread(target=export, args=(5,), name="exporter"))
    for t in threads:
        t.daemon = True
        t.start()
    stop = threading.Event()
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    peer.close()


if __name__ == "__main__":
    main()
