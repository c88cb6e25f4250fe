"""C threads calling Python back, each call with a thread state of its own.

    python c_callbacks.py STATE.json LIBRARY.so THREADS SECONDS

LIBRARY.so is c_callbacks_pool.c, built by the test. Its run_pool()
starts THREADS pthreads (through the C library functions handed to it, so
that the library links to nothing and loads under any glibc), and each
thread calls a ctypes callback again and again until it returns nonzero,
allocating memory between calls. ctypes enters Python for each call with
PyGILState_Ensure() and leaves with PyGILState_Release(), which creates
and frees a thread state every time. The callback burns CPU on one line
(HOT_CALLBACK) in burn_in_callback(). Writes STATE.json ({"pid",
"ready", "line"}) once callbacks have run for a while, then goes on for
SECONDS and exits.
"""
import ctypes
import json
import os
import sys
import time

OUT, LIBRARY = sys.argv[1], sys.argv[2]
THREADS, SECONDS = int(sys.argv[3]), float(sys.argv[4])
HOT_LINE = next(i for i, text in enumerate(open(__file__, encoding="utf-8"), 1)
                if text.rstrip().endswith("# HOT_CALLBACK"))
state = {"until": time.time() + 0.5, "written": False}


def burn_in_callback():
    sum(range(100000))  # HOT_CALLBACK


def callback(index):
    if time.time() >= state["until"]:
        if state["written"]:
            return 1
        # warmed up: say so, and go on for SECONDS
        state["written"] = True
        state["until"] = time.time() + SECONDS
        with open(OUT + ".tmp", "w") as fp:
            json.dump({"pid": os.getpid(), "ready": True, "line": HOT_LINE}, fp)
        os.rename(OUT + ".tmp", OUT)
    burn_in_callback()
    return 0


def c_function(name):
    for lib in (None, "libpthread.so.0", "libc.so.6"):
        try:
            return ctypes.cast(getattr(ctypes.CDLL(lib), name), ctypes.c_void_p)
        except (OSError, AttributeError):
            continue
    raise OSError("no %s" % name)


def main():
    pool = ctypes.CDLL(LIBRARY)
    CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)
    pool.run_pool.argtypes = [ctypes.c_void_p] * 4 + [CALLBACK, ctypes.c_int]
    pool.run_pool.restype = ctypes.c_int
    keep = CALLBACK(callback)
    rc = pool.run_pool(c_function("pthread_create"), c_function("pthread_join"),
                       c_function("malloc"), c_function("free"), keep, THREADS)
    sys.exit(rc)


main()
