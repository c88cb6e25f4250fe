#!/usr/bin/env python3
"""Parked threads, two of which get their in-memory structures corrupted.

Usage: python garbage.py OUT.json

Threads (all parked forever):
  intact   Bystander.run -> Lock.acquire            (left alone)
  garbled  garbled_caller -> <unique name>() parks  (the name string's length
           field is overwritten with a huge value)
  loop     loop_outer -> loop_inner parks           (loop_inner's link to its
           caller is pointed at itself: PyFrameObject.f_back on 3.8-3.10,
           _PyInterpreterFrame.previous on 3.11+)
  main     Event.wait

The reporter thread first records every stack with sys._current_frames()
(while all is intact), then corrupts, then writes OUT.json atomically:

  {"pid", "version", "threads": [... as in known_stacks.py ...],
   "garbled": {"thread": "garbled", "frame_index": 0, "name": ..., "done": bool,
               "why": ...},
   "loop": {"thread": "loop", "done": bool, "why": ...}}

Every corruption is checked first (the field read back must hold the value
it is known to hold), so nothing is written at a wrong offset. After
corrupting, nothing in this process may look at those objects again: the
cyclic GC is disabled (3.14's GC walks thread stacks) and everything parks.
Runs on Python 3.8+ (GIL builds, 64-bit).
"""
import ctypes
import gc
import json
import os
import sys
import threading
import time

FOREVER = threading.Event()
BLOCKED = threading.Lock()
BLOCKED.acquire()
PARKING = threading.Semaphore(0)

gc.disable()


def about_to_park():
    PARKING.release()


class Bystander:
    def run(self):
        about_to_park()
        BLOCKED.acquire()


def _garbled_template():
    about_to_park()
    BLOCKED.acquire()


# A function whose name is a str built at run time: not interned and not
# shared with anything else, so garbling it harms no one but this frame.
UNIQUE_NAME = "".join(["garbled_", str(os.getpid()), "_", str(time.monotonic_ns())])
_code = _garbled_template.__code__
if hasattr(_code, "co_qualname"):
    _code = _code.replace(co_name=UNIQUE_NAME, co_qualname=UNIQUE_NAME)
else:
    _code = _code.replace(co_name=UNIQUE_NAME)
GARBLED_FUNC = type(_garbled_template)(_code, globals(), UNIQUE_NAME)
del _code


def garbled_caller():
    GARBLED_FUNC()


def loop_inner():
    about_to_park()
    BLOCKED.acquire()


def loop_outer():
    loop_inner()


def frame_name(code):
    return getattr(code, "co_qualname", code.co_name)


def peek(addr):
    return ctypes.c_size_t.from_address(addr).value


def poke(addr, value):
    ctypes.c_size_t.from_address(addr).value = value


STR_LENGTH_OFFSET = 16      # PyASCIIObject.length (after refcnt, type)
HUGE_LENGTH = 1 << 60


def garble_name(code):
    """Sets a huge length on the str(s) the frame's name is read from."""
    strings = [code.co_name]
    if hasattr(code, "co_qualname") and code.co_qualname is not code.co_name:
        strings.append(code.co_qualname)
    for s in strings:
        if peek(id(s) + STR_LENGTH_OFFSET) != len(s):
            return False, "length of %r not at offset %d" % (s, STR_LENGTH_OFFSET)
    for s in strings:
        poke(id(s) + STR_LENGTH_OFFSET, HUGE_LENGTH)
    return True, "length set to %d on %d str object(s)" % (HUGE_LENGTH, len(strings))


def make_loop(frame):
    """Points frame's link to its caller at the frame itself."""
    caller = frame.f_back
    if caller is None:
        return False, "frame has no caller"
    if sys.version_info < (3, 11):
        # PyFrameObject: PyObject_VAR_HEAD (24 bytes), then f_back.
        if peek(id(frame) + 24) != id(caller):
            return False, "f_back not at offset 24"
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(frame))  # the new self-reference
        poke(id(frame) + 24, id(frame))
        return True, "PyFrameObject.f_back -> itself"
    # 3.11+: PyFrameObject is {PyObject_HEAD; f_back; f_frame; ...}, f_frame at 24
    # points at the _PyInterpreterFrame; its `previous` is at 48 on 3.11
    # (after f_func, f_globals, f_builtins, f_locals, f_code, frame_obj) and at
    # 8 on 3.12+ (after f_code / f_executable).
    prev_off = 48 if sys.version_info < (3, 12) else 8
    iframe = peek(id(frame) + 24)
    caller_iframe = peek(id(caller) + 24)
    if not iframe or not caller_iframe:
        return False, "f_frame not at offset 24"
    if peek(iframe + prev_off) != caller_iframe:
        return False, "_PyInterpreterFrame.previous not at offset %d" % prev_off
    poke(iframe + prev_off, iframe)
    return True, "_PyInterpreterFrame.previous -> itself"


def snapshot(exclude_ident):
    by_ident = {t.ident: t for t in threading.enumerate()}
    main_ident = threading.main_thread().ident
    threads = []
    for ident, f in sys._current_frames().items():
        if ident == exclude_ident:
            continue
        frames = []
        while f is not None:
            frames.append([frame_name(f.f_code), f.f_code.co_filename, f.f_lineno])
            f = f.f_back
        t = by_ident[ident]
        threads.append({"native_id": t.native_id, "ident": ident, "name": t.name,
                        "main": ident == main_ident, "frames": frames})
    threads.sort(key=lambda t: t["native_id"])
    return threads


def write_json_atomically(path, data):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as fp:
        json.dump(data, fp, ensure_ascii=False, indent=1)
        fp.flush()
        os.fsync(fp.fileno())
    os.rename(tmp, path)


def reporter(out, n_parked, loop_thread):
    for _ in range(n_parked):
        PARKING.acquire()
    time.sleep(0.5)
    data = {
        "pid": os.getpid(),
        "version": list(sys.version_info[:3]),
        "threads": snapshot(threading.get_ident()),
        "garbled": {"thread": "garbled", "frame_index": 0, "name": UNIQUE_NAME},
        "loop": {"thread": "loop"},
    }
    # Serialise now: afterwards UNIQUE_NAME (the very str object garbled) must
    # never be read again; json.loads gives back fresh copies.
    data = json.loads(json.dumps(data))
    loop_frame = sys._current_frames()[loop_thread.ident]
    assert loop_frame.f_code is loop_inner.__code__, loop_frame.f_code
    ok, why = garble_name(GARBLED_FUNC.__code__)
    data["garbled"].update(done=ok, why=why)
    ok, why = make_loop(loop_frame)
    data["loop"].update(done=ok, why=why)
    del loop_frame
    write_json_atomically(out, data)


def main():
    out = sys.argv[1]
    threads = [
        threading.Thread(target=Bystander().run, name="intact", daemon=True),
        threading.Thread(target=garbled_caller, name="garbled", daemon=True),
        threading.Thread(target=loop_outer, name="loop", daemon=True),
    ]
    for t in threads:
        t.start()
    threading.Thread(target=reporter, args=(out, len(threads) + 1, threads[2]),
                     name="reporter", daemon=True).start()
    about_to_park()
    FOREVER.wait()


if __name__ == "__main__":
    main()
