#!/usr/bin/env python3
"""A small asyncio service to try pydump --async, pyprofile --async and
pyoffcpu --async on (Python 3.11+).

Three crawlers fetch pages (simulated I/O: asyncio.sleep) and parse them
(CPU: parse() costs 1, 2 and 3 units for crawler-1, -2, -3); an indexer
waits for a queue the crawlers fill; a metrics task calls a blocking
function (time.sleep) inside a coroutine now and then: the classic bug
that stalls every other task of the loop. Runs until Ctrl-C.

    python3 examples/demo/async_demo.py
"""
import asyncio
import time

UNIT = 40000


def parse(page, units):
    words = 0
    for i in range(units * UNIT):
        words += (i ^ len(page)) & 1
    return words


async def fetch(url):
    await asyncio.sleep(0.01)  # the network
    return "<html>%s</html>" % url


async def crawl(name, units, queue):
    n = 0
    while True:
        page = await fetch("https://example.org/%s/%d" % (name, n))
        await queue.put(parse(page, units))
        n += 1


async def index(queue):
    total = 0
    while True:
        total += await queue.get()


def report_metrics():
    time.sleep(0.05)  # a blocking call where an await was meant


async def metrics():
    while True:
        await asyncio.sleep(0.5)
        report_metrics()


async def main():
    asyncio.current_task().set_name("main")
    queue = asyncio.Queue()
    async with asyncio.TaskGroup() as tg:
        for i in (1, 2, 3):
            tg.create_task(crawl("crawler-%d" % i, i, queue), name="crawler-%d" % i)
        tg.create_task(index(queue), name="indexer")
        tg.create_task(metrics(), name="metrics")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
