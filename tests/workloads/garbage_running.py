#!/usr/bin/env python3
"""Busy threads whose in-memory frame chains and names are corrupted while
they keep running, for the samplers (pyprofile, pyoffcpu, pygil): unlike
garbage.py's parked threads, these are on and off CPU all the time.

Usage: python garbage_running.py DIR

Threads (each loops forever in its leaf: a little arithmetic, then a 2 ms
sleep, counting its rounds):
  intact   intact_outer -> intact_leaf          (left alone)
  nowhere  nowhere_outer -> nowhere_leaf        (the leaf's link to its
           caller points at address 0x10, never mapped: PyFrameObject.f_back
           on 3.8-3.10, _PyInterpreterFrame.previous on 3.11+)
  loop     loop_outer -> loop_leaf              (the leaf's link to its
           caller points at the leaf itself)
  huge     huge_outer -> <unique name>          (the name string's length
           field is set to 2**60)
  main     counts, checks a sum, and rewrites DIR/state.json every 50 ms

DIR/state.json: {"pid", "version", "ready", "rounds": {thread: n},
"ticks": n, "sum_ok": bool, "tids": {thread: native id},
"leaf_lines": {thread: [first, last] line of the leaf's body},
"huge_name", "done": {kind: bool}, "why": {kind: text}}. "ready" is written
once every corruption was made (or found impossible, see "done"/"why").

Every corruption is checked first (the field read back must hold the value
it is known to hold), so nothing is written at a wrong offset. A corrupted
leaf never returns, and nothing looks at those frames again: the cyclic GC
is disabled (3.14's GC walks thread stacks), no tracebacks, no
sys._current_frames() after corrupting. Python 3.8+ (GIL builds, 64-bit).
"""
import ctypes
import gc
import json
import os
import sys
import threading
import time

gc.disable()

DIR = sys.argv[1]
ROUNDS = {"intact": 0, "nowhere": 0, "loop": 0, "huge": 0}
TIDS = {}
STARTED = threading.Semaphore(0)
NOWHERE = 0x10  # below vm.mmap_min_addr: never mapped
SPIN = 8000  # about 1 ms of arithmetic per round


def native_id():
    return threading.get_native_id() if hasattr(threading, "get_native_id") else 0


def intact_leaf():
    TIDS["intact"] = native_id()
    STARTED.release()
    while True:
        x = 0
        for i in range(SPIN):
            x += i * i
        ROUNDS["intact"] += 1
        time.sleep(0.002)


def intact_outer():
    intact_leaf()


def nowhere_leaf():
    TIDS["nowhere"] = native_id()
    STARTED.release()
    while True:
        x = 0
        for i in range(SPIN):
            x += i * i
        ROUNDS["nowhere"] += 1
        time.sleep(0.002)


def nowhere_outer():
    nowhere_leaf()


def loop_leaf():
    TIDS["loop"] = native_id()
    STARTED.release()
    while True:
        x = 0
        for i in range(SPIN):
            x += i * i
        ROUNDS["loop"] += 1
        time.sleep(0.002)


def loop_outer():
    loop_leaf()


def _huge_template():
    TIDS["huge"] = native_id()
    STARTED.release()
    while True:
        x = 0
        for i in range(SPIN):
            x += i * i
        ROUNDS["huge"] += 1
        time.sleep(0.002)


# A name built at run time: not interned, not shared with anything else, so
# garbling its length harms no one but this function.
HUGE_NAME = "".join(["huge_named_", str(os.getpid()), "_", str(time.monotonic_ns())])
_code = _huge_template.__code__
if hasattr(_code, "co_qualname"):
    _code = _code.replace(co_name=HUGE_NAME, co_qualname=HUGE_NAME)
else:
    _code = _code.replace(co_name=HUGE_NAME)
HUGE_FUNC = type(_huge_template)(_code, globals(), HUGE_NAME)
del _code


def huge_outer():
    HUGE_FUNC()


LEAVES = {"intact": intact_leaf, "nowhere": nowhere_leaf, "loop": loop_leaf,
          "huge": _huge_template}


def body_lines(func):
    import dis
    lines = [l for _, l in dis.findlinestarts(func.__code__) if l is not None]
    return [min(lines), max(lines)]


def peek(addr):
    return ctypes.c_size_t.from_address(addr).value


def poke(addr, value):
    ctypes.c_size_t.from_address(addr).value = value


STR_LENGTH_OFFSET = 16      # PyASCIIObject.length (after refcnt, type)
HUGE_LENGTH = 1 << 60


def garble_name(code):
    strings = [code.co_name]
    if hasattr(code, "co_qualname") and code.co_qualname is not code.co_name:
        strings.append(code.co_qualname)
    for s in strings:
        if peek(id(s) + STR_LENGTH_OFFSET) != len(s):
            return False, "length of %r not at offset %d" % (s, STR_LENGTH_OFFSET)
    for s in strings:
        poke(id(s) + STR_LENGTH_OFFSET, HUGE_LENGTH)
    return True, "length set to %d on %d str object(s)" % (HUGE_LENGTH, len(strings))


def relink(frame, target):
    """Points frame's link to its caller at target (None: at the frame)."""
    caller = frame.f_back
    if caller is None:
        return False, "frame has no caller"
    if sys.version_info < (3, 11):
        # PyFrameObject: PyObject_VAR_HEAD (24 bytes), then f_back.
        if peek(id(frame) + 24) != id(caller):
            return False, "f_back not at offset 24"
        if target is None:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(frame))  # the new self-reference
            target = id(frame)
        poke(id(frame) + 24, target)
        return True, "PyFrameObject.f_back -> %#x" % target
    # 3.11+: PyFrameObject {PyObject_HEAD; f_back; f_frame; ...}: f_frame at 24
    # points at the _PyInterpreterFrame, whose `previous` is at 48 on 3.11 and
    # at 8 on 3.12+.
    prev_off = 48 if sys.version_info < (3, 12) else 8
    iframe = peek(id(frame) + 24)
    caller_iframe = peek(id(caller) + 24)
    if not iframe or not caller_iframe:
        return False, "f_frame not at offset 24"
    if peek(iframe + prev_off) != caller_iframe:
        return False, "_PyInterpreterFrame.previous not at offset %d" % prev_off
    if target is None:
        target = iframe
    poke(iframe + prev_off, target)
    return True, "_PyInterpreterFrame.previous -> %#x" % target


def write_state(state):
    tmp = os.path.join(DIR, "state.json.tmp")
    with open(tmp, "w", encoding="utf-8") as fp:
        json.dump(state, fp)
    os.rename(tmp, os.path.join(DIR, "state.json"))


def main():
    threads = {"intact": intact_outer, "nowhere": nowhere_outer, "loop": loop_outer,
               "huge": huge_outer}
    started = {}
    for name, target in threads.items():
        t = threading.Thread(target=target, name=name, daemon=True)
        t.start()
        started[name] = t
    for _ in threads:
        STARTED.acquire()
    time.sleep(0.1)
    state = {"pid": os.getpid(), "version": list(sys.version_info[:3]), "ready": False,
             "tids": dict(TIDS), "huge_name": HUGE_NAME,
             "leaf_lines": {n: body_lines(f) for n, f in LEAVES.items()},
             "done": {}, "why": {}}
    state = json.loads(json.dumps(state))  # HUGE_NAME is never read again
    frames = sys._current_frames()
    nowhere_frame = frames[started["nowhere"].ident]
    loop_frame = frames[started["loop"].ident]
    del frames
    ok = (nowhere_frame.f_code is nowhere_leaf.__code__
          and loop_frame.f_code is loop_leaf.__code__)
    if not ok:  # a thread was not in its leaf: never corrupt the wrong frame
        state["why"]["all"] = "threads not in their leaves"
    else:
        for kind, frame, target in (("nowhere", nowhere_frame, NOWHERE),
                                    ("loop", loop_frame, None)):
            state["done"][kind], state["why"][kind] = relink(frame, target)
        state["done"]["huge"], state["why"]["huge"] = garble_name(HUGE_FUNC.__code__)
    del nowhere_frame, loop_frame
    state["ready"] = True
    ticks = 0
    while True:
        ticks += 1
        state["ticks"] = ticks
        state["sum_ok"] = sum(range(1000)) == 499500
        state["rounds"] = dict(ROUNDS)
        write_state(state)
        time.sleep(0.05)


main()
