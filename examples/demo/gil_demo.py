#!/usr/bin/env python3
"""GIL contention demo for pygil: CPU-bound threads that take turns.

    python3 gil_demo.py [--seconds N] [--threads 4] [--io] [--spin-only]
                        [--go-on-stdin]

Starts --threads worker threads (default 4) that spin in pure Python, like
the "spinners" of tests/workloads/gil_contention.py: even-numbered workers
in crunch_numbers(), odd-numbered ones in build_strings(); with --spin-only
all of them in crunch_numbers(). Only one thread can run Python at a time,
so with N workers each waits for the GIL up to (N-1)/N of the time, however
many CPUs there are. With --io, one more thread, "poller", does a 1 ms
select() in a loop: after each one it has to wait for the GIL again.

At the end it prints the work done, in loop iterations per second of all
workers together (used to measure what pygil costs a contended program).
With --go-on-stdin it starts the threads, prints "ready", waits for a line
on standard input before they start working, and after printing its
results waits for the end of standard input before it exits (so a
benchmark can attach a tracer first and read the tracer's counters before
the process is gone). Runs on Python 3.8+.
"""
import argparse
import select
import sys
import threading
import time

go = threading.Event()
stop = threading.Event()
done = {}


def crunch_numbers(name):
    go.wait()
    n = iterations = 0
    while not stop.is_set():
        for i in range(200):
            n += i * i
        iterations += 1
    done[name] = iterations


def build_strings(name):
    go.wait()
    iterations = 0
    while not stop.is_set():
        words = []
        for i in range(50):
            words.append(str(i))
        "-".join(words)
        iterations += 1
    done[name] = iterations


def poll_socket(name):
    go.wait()
    polls = 0
    while not stop.is_set():
        select.select([], [], [], 0.001)
        polls += 1
    done[name] = polls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop after this many seconds (default: forever)")
    ap.add_argument("--threads", type=int, default=4, help="worker threads (default 4)")
    ap.add_argument("--io", action="store_true", help="add a thread doing 1 ms selects")
    ap.add_argument("--spin-only", action="store_true",
                    help="every worker in crunch_numbers() (same work per iteration)")
    ap.add_argument("--go-on-stdin", action="store_true",
                    help="wait for a line on stdin to start, for its end to exit")
    args = ap.parse_args()
    threads = []
    for i in range(args.threads):
        fn = crunch_numbers if i % 2 == 0 or args.spin_only else build_strings
        name = "worker-%d" % i
        threads.append(threading.Thread(target=fn, args=(name,), name=name))
    if args.io:
        threads.append(threading.Thread(target=poll_socket, args=("poller",), name="poller"))
    for t in threads:
        t.start()
    if args.go_on_stdin:
        print("ready", flush=True)
        sys.stdin.readline()
    t0 = time.monotonic()
    go.set()
    if args.seconds is None:
        threading.Event().wait()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    work = sum(v for k, v in done.items() if k.startswith("worker"))
    print("iterations_per_second %.1f" % (work / elapsed))
    if args.io:
        print("polls_per_second %.1f" % (done["poller"] / elapsed))
    sys.stdout.flush()
    if args.go_on_stdin:
        sys.stdin.read()


if __name__ == "__main__":
    main()
