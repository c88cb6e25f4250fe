#!/usr/bin/env python3
"""Lab 7: the render service's memory grows until it is killed.

A small page-rendering service: a client thread sends it requests, the
main thread renders each page, compresses it, attaches a thumbnail from a
cache and "sends" the result. Its resident memory grows by most of a
megabyte a second, for ever. Find out with pymem --alloc what holds the
memory, and which of the service's allocations do not matter.

    python3 render_service.py [--seconds N] [--truth FILE]

--truth FILE is for the instructor and the tests: it writes the bytes
each part of the service holds, as the program itself counts them, to
FILE (JSON) every second and at the end.
Runs on Python 3.8+.
"""
import argparse
import collections
import json
import os
import queue
import threading
import time
import zlib

PAGE_SIZE = 16 * 1024        # a rendered page
THUMB_SIZE = 32 * 1024       # a thumbnail
THUMBS_KEPT = 64             # the thumbnail cache's capacity
REQUESTS_PER_SECOND = 50


class ThumbnailCache:
    """The last THUMBS_KEPT thumbnails, least recently used out first."""

    def __init__(self):
        self.entries = collections.OrderedDict()

    def get(self, key):
        if key in self.entries:
            self.entries.move_to_end(key)
            return self.entries[key]
        thumb = self.make_thumbnail(key)
        self.entries[key] = thumb
        if len(self.entries) > THUMBS_KEPT:
            self.entries.popitem(last=False)
        return thumb

    def make_thumbnail(self, key):
        return bytearray(THUMB_SIZE)

    def held(self):
        return len(self.entries) * THUMB_SIZE


class Sender:
    """Sends pages; keeps each sent page in case the client asks again."""

    def __init__(self):
        self.sent = {}

    def send(self, request_id, page):
        body = zlib.compress(page, 6)
        self.remember_for_retry(request_id, page)
        return len(body)

    def remember_for_retry(self, request_id, page):
        self.sent[request_id] = page

    def held(self):
        return len(self.sent) * PAGE_SIZE


def render_page(request_id):
    page = bytearray(PAGE_SIZE)
    page[:16] = b"page %10d\n" % request_id
    return page


def handle(request_id, thumbs, sender):
    page = render_page(request_id)
    thumb = thumbs.get(request_id % (2 * THUMBS_KEPT))
    page[16:32] = thumb[:16]
    return sender.send(request_id, page)


def client(requests, stop):
    n = 0
    while not stop.is_set():
        requests.put(n)
        n += 1
        time.sleep(1.0 / REQUESTS_PER_SECOND)


def write_truth(path, held, wall):
    tmp = path + ".tmp"
    with open(tmp, "w") as fp:
        json.dump({"pid": os.getpid(), "held": held, "wall": wall}, fp)
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0, help="run this long (default: forever)")
    ap.add_argument("--truth", help="write the bytes each part holds here")
    args = ap.parse_args()
    stop = threading.Event()
    requests = queue.Queue(maxsize=1000)
    threading.Thread(target=client, args=(requests, stop), name="client", daemon=True).start()
    thumbs, sender = ThumbnailCache(), Sender()
    start = last = time.monotonic()
    while not args.seconds or time.monotonic() - start < args.seconds:
        try:
            handle(requests.get(timeout=0.1), thumbs, sender)
        except queue.Empty:
            pass
        now = time.monotonic()
        if args.truth and now - last >= 1.0:
            last = now
            write_truth(args.truth, {"sent": sender.held(), "thumbnails": thumbs.held()},
                        now - start)
    stop.set()
    if args.truth:
        write_truth(args.truth, {"sent": sender.held(), "thumbnails": thumbs.held()},
                    time.monotonic() - start)


if __name__ == "__main__":
    main()
