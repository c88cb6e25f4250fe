"""Python functions whose time goes to known native code, for the native
stack tests. The main thread calls, in turn:

  do_zlib   zlib.compress at level 9: libz's deflate (and its static helpers)
  do_json   json.dumps of a list of dicts: the _json C encoder
  do_sort   sorted(key=key_of): the interpreter's sort calling back into
            Python, so key_of sits above native frames above do_sort

and a second thread, sleeper, sleeps in time.sleep (libc's clock_nanosleep
from 3.11 on, select before). Runs for SECONDS (default 60).

    python native_work.py [SECONDS]
"""
import json
import sys
import threading
import time
import zlib

DATA = b"".join(b"%d,%d;" % (i, i * i % 9973) for i in range(40000))
ROWS = [{"id": i, "name": "item %d" % i, "tags": ["a", "b"]} for i in range(30000)]


def do_zlib():
    return zlib.compress(DATA, 9)


def do_json():
    return json.dumps(ROWS)


def key_of(x):
    s = 0
    for i in range(20):
        s += i
    return -x


def do_sort():
    return sorted(range(40000), key=key_of)


def sleeper():
    while True:
        time.sleep(0.05)


threading.Thread(target=sleeper, daemon=True).start()
end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 60)
while time.time() < end:
    do_zlib()
    do_json()
    do_sort()
