#!/usr/bin/env python3
"""Lab 5: the chat gateway's latency spikes.

An asyncio chat gateway: three session tasks relay messages (a little
network wait, a little rendering), an audit task records what happened,
a thumbnail task prepares previews of shared images, and a heartbeat task
checks every 20 ms that the event loop is responsive. Most of the time
messages go through in a millisecond, but every half second everything
freezes for a tenth of a second. Find out with the --async modes of
pyprofile, pyoffcpu and pydump which task stalls the event loop.

    python3 gateway.py [--seconds N] [--truth FILE]

--truth FILE is for the instructor and the tests: it writes, every second
and at the end, the CPU the thumbnail task and the whole process used,
the time the audit task spent blocked and the heartbeat's lateness,
measured by the program itself, to FILE (JSON).
Runs on Python 3.11+ (the tools read asyncio tasks from 3.11 on).
"""
import argparse
import asyncio
import json
import os
import time

steps = {"thumbnailer_cpu": 0.0, "audit_blocked": 0.0, "process_cpu": 0.0,
         "sessions_cpu": 0.0, "lag_max": 0.0}


def render(message):
    return "<p>%s</p>" % "".join(reversed(message))


async def session(name):
    n = 0
    while True:
        await asyncio.sleep(0.02)                 # waiting for the next message
        t0 = time.thread_time()
        for _ in range(50):
            render("%s message %d" % (name, n))
        steps["sessions_cpu"] += time.thread_time() - t0
        n += 1


def write_audit_record(record):
    """The audit log's client library: synchronous, it waits for the
    storage to confirm the write."""
    time.sleep(0.08)
    return len(record)


async def audit():
    while True:
        await asyncio.sleep(0.5)
        t0 = time.perf_counter()
        write_audit_record("sessions ok at %f" % time.time())
        steps["audit_blocked"] += time.perf_counter() - t0


def make_thumbnail(pixels):
    """Scales an image down by averaging 4x4 blocks, in pure Python."""
    side = int(len(pixels) ** 0.5)
    out = []
    for y in range(0, side, 4):
        for x in range(0, side, 4):
            total = 0
            for dy in range(4):
                row = (y + dy) * side + x
                total += pixels[row] + pixels[row + 1] + pixels[row + 2] + pixels[row + 3]
            out.append(total // 16)
    return out


async def thumbnailer(image):
    while True:
        await asyncio.sleep(0.5)
        t0 = time.thread_time()
        make_thumbnail(image)
        steps["thumbnailer_cpu"] += time.thread_time() - t0


async def heartbeat():
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + 0.02
        await asyncio.sleep(0.02)
        steps["lag_max"] = max(steps["lag_max"], loop.time() - due)


async def write_truth(path, start):
    while True:
        await asyncio.sleep(1)
        dump_truth(path, start)


def dump_truth(path, start):
    steps["process_cpu"] = time.process_time()
    tmp = path + ".tmp"
    with open(tmp, "w") as fp:
        json.dump({"pid": os.getpid(), "seconds": steps, "wall": time.monotonic() - start}, fp)
    os.rename(tmp, path)


async def main(args):
    asyncio.current_task().set_name("main")
    start = time.monotonic()
    async with asyncio.TaskGroup() as tg:
        for i in range(3):
            tg.create_task(session("session-%d" % i), name="session-%d" % i)
        tg.create_task(audit(), name="audit")
        tg.create_task(thumbnailer(args.image), name="thumbnailer")
        tg.create_task(heartbeat(), name="heartbeat")
        if args.truth:
            tg.create_task(write_truth(args.truth, start), name="truth")
        if args.seconds:
            await asyncio.sleep(args.seconds)
            raise SystemExit(0)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0, help="run this long (default: forever)")
    ap.add_argument("--truth", help="write the measured times here")
    args = ap.parse_args()
    args.image = [(i * 7) % 256 for i in range(1280 * 1280)]  # a shared photo
    try:
        asyncio.run(main(args))
    except (KeyboardInterrupt, SystemExit):
        pass
    print("heartbeat late by up to %.0f ms" % (1000 * steps["lag_max"]))
