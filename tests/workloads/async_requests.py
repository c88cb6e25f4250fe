#!/usr/bin/env python3
"""Per-request asyncio tasks, made one after another as a server makes one
per request: each new task's coroutine is often made where the last one's
was freed.

Usage: python async_requests.py DIR cpu|block N SECONDS [HANDLERS]

Writes DIR/state.json ({"pid", "ready": true}), then, until DIR/go
appears, its main task (named "main") burns a little CPU and blocks its
loop a little in turn, so that a tool sees a task before the requests
start. Then tasks req-0 .. req-(N-1) run one after another, each awaited
before the next is made, each spending SECONDS either on CPU (cpu:
time.thread_time() measured) or blocking its event loop in time.sleep
(block: time.monotonic() measured) in one step. With HANDLERS 2, the
odd requests run a second coroutine (admin_request) in place of request.
Each task spends through a function of its own, named after it (req_0 ..
req_(N-1)), so the frames of a sample say whose work it caught.
Writes DIR/truth.json ({"spent": {task name: seconds}, "coroutine": {task
name: its coroutine's qualified name}}) and exits.
"""
import asyncio
import json
import os
import sys
import time


def write_json(path, data):
    with open(path + ".tmp", "w") as fp:
        json.dump(data, fp)
    os.rename(path + ".tmp", path)


def burn(seconds):
    t0 = time.thread_time()
    n = 0
    while time.thread_time() - t0 < seconds:
        n += 1
    return time.thread_time() - t0


def block(seconds):
    t0 = time.monotonic()
    time.sleep(seconds)
    return time.monotonic() - t0


def on_behalf_of(task, spend):
    """SPEND as a function of its own code, named after TASK ("req-3":
    req_3), between the task's coroutine and SPEND."""
    def step(seconds):
        return spend(seconds)
    name = task.replace("-", "_")
    code = step.__code__.replace(co_name=name)
    if hasattr(code, "co_qualname"):  # 3.11+: what a traceback shows
        code = code.replace(co_qualname=name)
    return type(step)(code, step.__globals__, name, None, step.__closure__)


async def request(spend, seconds):
    return spend(seconds)


async def admin_request(spend, seconds):
    return spend(seconds)


async def main(scratch, mode, n, seconds, handlers):
    asyncio.current_task().set_name("main")
    spend = burn if mode == "cpu" else block
    write_json(os.path.join(scratch, "state.json"), {"pid": os.getpid(), "ready": True})
    while not os.path.exists(os.path.join(scratch, "go")):
        burn(0.005)
        block(0.005)
        await asyncio.sleep(0)
    spent, coroutine = {}, {}
    # kept to the end: a tool may name a frame's code after its task ended
    steps = []
    for i in range(n):
        name = "req-%d" % i
        handler = admin_request if handlers == 2 and i % 2 else request
        coroutine[name] = handler.__qualname__
        steps.append(on_behalf_of(name, spend))
        spent[name] = await asyncio.get_running_loop().create_task(
            handler(steps[-1], seconds), name=name)
    write_json(os.path.join(scratch, "truth.json"), {"spent": spent, "coroutine": coroutine})


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]),
                     int(sys.argv[5]) if len(sys.argv) > 5 else 1))
