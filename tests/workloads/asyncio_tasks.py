#!/usr/bin/env python3
"""asyncio tasks with a known structure; writes what it sees of itself as ground truth.

Usage:
  python asyncio_tasks.py OUT.json
      Builds the tasks below, lets every one reach its await, writes OUT.json,
      then the task "spinner" spins forever (the running task of the main
      thread's loop). The process stays until killed.
  python asyncio_tasks.py OUT.json cpu
      Tasks burn CPU between awaits in shares about 1:2:3, forever, each
      measuring its own CPU (time.thread_time() around each burst). Like
      cpu_shares.py: OUT.json ({"pid", "ready"}) is rewritten every 0.2 s;
      SIGUSR1 opens the measured window, SIGUSR2 closes it ("frozen": true,
      "spent": CPU seconds per task, "calls": bursts per task).
  python asyncio_tasks.py OUT.json block
      Tasks blocker-1 and blocker-2 block the event loop in time.sleep (10
      and 20 ms at a time) between awaits; OUT.json and the window as in
      cpu mode, with "blocked": seconds each task spent in time.sleep.

park's tasks (parent -> the tasks it awaits):
  main      (asyncio.run's task) -> TaskGroup: crawler-1..3, spinner
  crawler-N -> nothing: crawl -> helper -> helper -> sleep_forever -> asyncio.sleep
  chain-a -> chain-b -> chain-c (sleeps)                       a chain
  top -> gather(left, right); left -> bottom; right -> bottom   a diamond
  gatherer -> gather(gather-1, gather-2)
  py-waiter -> py-sleeper: both asyncio.tasks._PyTask, the pure-Python Task
  (thread "other") other-main -> other-sleeper, on a second event loop

OUT.json (park, the default):
  {"pid", "version", "threads": {"main": native_id, "other": native_id},
   "spin_line": line of the spinner's spin_forever() call,
   "tasks": [{"name", "thread", "python_task", "done", "chain": [[qualname,
              file, line], ...innermost first], "stack": Task.get_stack() as
              [[qualname, file, line], ...], "awaits": [names of the tasks it
              awaits, by construction]}]}
The chain follows cr_await from the task's coroutine as far as coroutines go.
Runs on Python 3.11+.
"""
import asyncio
import json
import os
import random
import signal
import sys
import threading
import time

FOREVER = 3600 * 24


def qualname(code):
    return getattr(code, "co_qualname", code.co_name)


def coroutine_chain(coro):
    """The coroutines a task is suspended in, innermost first."""
    out = []
    while coro is not None:
        frame = getattr(coro, "cr_frame", getattr(coro, "gi_frame", None))
        if frame is None:
            break
        out.append([qualname(frame.f_code), frame.f_code.co_filename, frame.f_lineno])
        coro = getattr(coro, "cr_await", getattr(coro, "gi_yieldfrom", None))
    return out[::-1]


def write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as fp:
        json.dump(data, fp, indent=1)
    os.rename(tmp, path)


# ------------------------------------------------------------------ park mode

AWAITS = {}            # task name -> names of the tasks it awaits (by construction)
TASK_THREADS = {}      # task name -> native id of the thread whose loop runs it
ALL_TASKS = []         # every task, both loops
OTHER_READY = threading.Event()


def spin_forever():
    n = 0
    while True:
        n += 1


async def sleep_forever():
    await asyncio.sleep(FOREVER)


async def helper(depth):
    if depth:
        await helper(depth - 1)
    else:
        await sleep_forever()


async def crawl(i):
    await helper(1)


async def wait_for(task):
    await task


async def gather_of(*tasks):
    await asyncio.gather(*tasks)


def named(coro, name, awaits=(), python_task=False):
    if python_task:
        task = asyncio.tasks._PyTask(coro, name=name)
    else:
        task = asyncio.get_running_loop().create_task(coro, name=name)
    AWAITS[name] = [t.get_name() for t in awaits]
    TASK_THREADS[name] = threading.get_native_id()
    ALL_TASKS.append(task)
    return task


def snapshot(path):
    spin_line = None
    with open(__file__) as fp:
        for no, line in enumerate(fp, 1):
            if line.strip().endswith("# SPIN_LINE"):
                spin_line = no
    tasks = []
    for task in ALL_TASKS:
        name = task.get_name()
        tasks.append({
            "name": name,
            "thread": TASK_THREADS[name],
            "python_task": not isinstance(task, asyncio.tasks._CTask),
            "done": task.done(),
            "chain": coroutine_chain(task.get_coro()),
            "stack": [[qualname(f.f_code), f.f_code.co_filename, f.f_lineno]
                      for f in task.get_stack()],
            "awaits": AWAITS[name],
        })
    write_json(path, {
        "pid": os.getpid(),
        "version": list(sys.version_info[:3]),
        "threads": {"main": threading.main_thread().native_id, "other": OTHER_NATIVE[0]},
        "spin_line": spin_line,
        "tasks": tasks,
    })


async def spin(path):
    OTHER_READY.wait(10)
    await asyncio.sleep(0.5)   # every other task reaches its await
    snapshot(path)
    spin_forever()  # SPIN_LINE


OTHER_NATIVE = [None]


async def other_main():
    asyncio.current_task().set_name("other-main")
    TASK_THREADS["other-main"] = threading.get_native_id()
    ALL_TASKS.append(asyncio.current_task())
    sleeper = named(sleep_forever(), "other-sleeper")
    AWAITS["other-main"] = ["other-sleeper"]
    OTHER_READY.set()
    await sleeper


def other_thread():
    OTHER_NATIVE[0] = threading.get_native_id()
    asyncio.run(other_main())


async def park_main(path):
    asyncio.current_task().set_name("main")
    TASK_THREADS["main"] = threading.get_native_id()
    ALL_TASKS.append(asyncio.current_task())
    threading.Thread(target=other_thread, name="other", daemon=True).start()

    c = named(sleep_forever(), "chain-c")
    b = named(wait_for(c), "chain-b", [c])
    named(wait_for(b), "chain-a", [b])

    bottom = named(sleep_forever(), "bottom")
    left = named(wait_for(bottom), "left", [bottom])
    right = named(wait_for(bottom), "right", [bottom])
    named(gather_of(left, right), "top", [left, right])

    g1 = named(sleep_forever(), "gather-1")
    g2 = named(sleep_forever(), "gather-2")
    named(gather_of(g1, g2), "gatherer", [g1, g2])

    py_sleeper = named(sleep_forever(), "py-sleeper", python_task=True)
    named(wait_for(py_sleeper), "py-waiter", [py_sleeper], python_task=True)

    async with asyncio.TaskGroup() as tg:
        kids = []
        for i in (1, 2, 3):
            kids.append(tg.create_task(crawl(i), name="crawler-%d" % i))
        kids.append(tg.create_task(spin(path), name="spinner"))
        for t in kids:
            TASK_THREADS[t.get_name()] = threading.get_native_id()
            AWAITS[t.get_name()] = []
            ALL_TASKS.append(t)
        AWAITS["main"] = [t.get_name() for t in kids]


# ------------------------------------------------------------------ cpu mode

UNIT = 20000                      # loop iterations of one unit of work
WINDOW = {"open": True, "frozen": False}
CALLS = {}                        # task name -> [(units, CPU seconds)] of its bursts


def burn(units):
    x = 0
    for _ in range(units * UNIT):
        x += 1
    return x


async def burst(units):
    """One measured burst, one coroutine below the task's own."""
    t0 = time.thread_time()
    burn(units)
    return time.thread_time() - t0


async def burner(name, nominal, seed):
    """Bursts of random size (seeded, 0.5-1.5 x nominal: no fixed period for
    the sampling timer to fall in step with), each followed by an await."""
    rng = random.Random(seed)
    CALLS[name] = []
    while True:
        units = rng.randint(max(1, nominal * 5), nominal * 15)
        spent = await burst(units)
        if WINDOW["open"]:
            CALLS[name].append((units, spent))
        await asyncio.sleep(0)


async def child_of(name, nominal, seed):
    child = asyncio.get_running_loop().create_task(burner(name, nominal, seed), name=name)
    await child


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if v else 0.0


def write_state(path, ready):
    # units x median CPU per unit: immune to the hypervisor pauses that
    # inflate one burst's thread_time (see cpu_shares.py)
    spent = {k: sum(u for u, _ in v) * median([s / u for u, s in v]) for k, v in CALLS.items()}
    write_json(path, {"pid": os.getpid(), "ready": ready, "frozen": WINDOW["frozen"],
                      "version": list(sys.version_info[:3]),
                      "calls": {k: len(v) for k, v in CALLS.items()}, "spent": spent})


async def reporter(path):
    start = time.monotonic()
    while True:
        await asyncio.sleep(0.2)
        write_state(path, time.monotonic() - start > 1.0)


def open_window(signum, frame):
    for v in CALLS.values():
        v.clear()
    WINDOW["open"], WINDOW["frozen"] = True, False


def close_window(signum, frame):
    WINDOW["open"], WINDOW["frozen"] = False, True


async def cpu_main(path):
    asyncio.current_task().set_name("main")
    signal.signal(signal.SIGUSR1, open_window)
    signal.signal(signal.SIGUSR2, close_window)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(reporter(path), name="reporter")
        tg.create_task(burner("burner-1", 1, 1), name="burner-1")
        tg.create_task(burner("burner-2", 2, 2), name="burner-2")
        # burner-3 runs under a parent task that awaits it
        tg.create_task(child_of("burner-3", 3, 3), name="parent")


# ------------------------------------------------------------------ block mode

BLOCKED = {}   # task name -> seconds it spent in time.sleep, blocking its loop


async def blocker(name, seconds):
    """Blocks the event loop (time.sleep in a coroutine: the classic bug),
    one coroutine below the task's own, then lets the others run."""
    BLOCKED[name] = 0.0
    while True:
        spent = await block_once(seconds)
        BLOCKED[name] += spent  # read after the block: a window opened meanwhile counts
        await asyncio.sleep(0)


async def block_once(seconds):
    t0 = time.monotonic()
    time.sleep(seconds)
    return time.monotonic() - t0


def open_block_window(signum, frame):
    for k in BLOCKED:
        BLOCKED[k] = 0.0
    WINDOW["open"], WINDOW["frozen"] = True, False


async def block_reporter(path):
    start = time.monotonic()
    snap = dict(BLOCKED)
    while True:
        await asyncio.sleep(0.2)
        if not WINDOW["frozen"]:
            snap = dict(BLOCKED)
        write_json(path, {"pid": os.getpid(), "ready": time.monotonic() - start > 1.0,
                          "frozen": WINDOW["frozen"], "blocked": snap})


async def block_main(path):
    asyncio.current_task().set_name("main")
    signal.signal(signal.SIGUSR1, open_block_window)
    signal.signal(signal.SIGUSR2, close_window)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(block_reporter(path), name="reporter")
        tg.create_task(blocker("blocker-1", 0.01), name="blocker-1")
        tg.create_task(blocker("blocker-2", 0.02), name="blocker-2")


def main():
    path = sys.argv[1]
    if len(sys.argv) == 2:
        asyncio.run(park_main(path))
    elif sys.argv[2] == "cpu":
        asyncio.run(cpu_main(path))
    elif sys.argv[2] == "block":
        asyncio.run(block_main(path))
    else:
        sys.exit("usage: asyncio_tasks.py OUT.json [cpu|block]")


if __name__ == "__main__":
    main()
