#!/usr/bin/env python3
"""One asyncio TaskGroup whose N tasks each wait in the group's own
__aexit__: every task awaits every task of its group (N * (N - 1) awaits
edges), the shape a hostile program can give pydump --async.

Usage: python taskgroup_waiters.py OUT.json N
Writes OUT.json ({"pid", "tasks": N + 1, "group": N}) once every task is
parked, then waits forever (the main task in the group's __aexit__ too).
Runs on Python 3.11+.
"""
import asyncio
import json
import os
import sys


async def wait_for_group(tg, ready, n):
    ready[0] += 1
    await tg.__aexit__(None, None, None)


async def main(out, n):
    ready = [0]
    async with asyncio.TaskGroup() as tg:
        for i in range(n):
            tg.create_task(wait_for_group(tg, ready, n), name="member-%d" % i)
        while ready[0] < n:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # every member parked in __aexit__
        tmp = out + ".tmp"
        with open(tmp, "w") as fp:
            json.dump({"pid": os.getpid(), "tasks": n + 1, "group": n}, fp)
        os.rename(tmp, out)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
