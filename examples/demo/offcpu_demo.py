#!/usr/bin/env python3
"""Off-CPU demo for pyoffcpu: a tiny request loop that mostly waits.

The main thread serves requests, one after another:

    wait_for_request   reads a pipe; a client thread sends a request
                       every 20 ms (so it blocks for most of that)
    query_backend      sends the request over a socket pair to a backend
                       thread, which sleeps 5 ms before it answers
    save_result        appends to a list under a lock that a flusher
                       thread holds for 10 ms every 100 ms

    python3 offcpu_demo.py [--seconds N]     (default: run until killed)

At the end it prints how many requests it served. Runs on Python 3.8+.
"""
import argparse
import os
import socket
import threading
import time

results = []
results_lock = threading.Lock()


def send_requests(w, stop):
    """Client: one request every 20 ms."""
    while not stop.is_set():
        time.sleep(0.020)
        os.write(w, b"r")


def serve_backend(sock):
    """Backend: answers each query after 5 ms of 'database' time."""
    while sock.recv(1):
        time.sleep(0.005)
        sock.sendall(b"a")


def flush_cache(stop):
    """Flusher: holds the results lock for 10 ms every 100 ms."""
    while not stop.is_set():
        time.sleep(0.090)
        with results_lock:
            time.sleep(0.010)
            del results[:]


def wait_for_request(r):
    return os.read(r, 1)


def query_backend(sock, request):
    sock.sendall(request)
    return sock.recv(1)


def save_result(answer):
    with results_lock:
        results.append(answer)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop after this many seconds (default: forever)")
    args = ap.parse_args()
    stop = threading.Event()
    r, w = os.pipe()
    front, back = socket.socketpair()
    threading.Thread(target=send_requests, args=(w, stop), name="client", daemon=True).start()
    threading.Thread(target=serve_backend, args=(back,), name="backend", daemon=True).start()
    threading.Thread(target=flush_cache, args=(stop,), name="flusher", daemon=True).start()
    end = None if args.seconds is None else time.monotonic() + args.seconds
    served = 0
    while end is None or time.monotonic() < end:
        request = wait_for_request(r)
        answer = query_backend(front, request)
        save_result(answer)
        served += 1
    stop.set()
    print("requests_served %d" % served)


if __name__ == "__main__":
    main()
