"""A sub-interpreter living next to the main one (3.12+).

    python subinterp.py STATE.json SECONDS

A thread of the main interpreter creates a sub-interpreter with its own
GIL (_xxsubinterpreters in 3.12, _interpreters from 3.13: both make
isolated interpreters by default) and runs in it code defining
burn_in_subinterpreter(), which spins there (one line, HOT_SUB). The
thread that runs it creates it: 3.12's run_string() borrows the thread
state of the interpreter's creator (gh-109860), whose thread id would be
another thread's. Meanwhile,
in the main interpreter, the main thread spins in burn_in_main() and a
second thread in contend_in_main(), so these two contend for the main
GIL while the sub-interpreter's thread has a GIL of its own. Writes
STATE.json ({"pid", "ready", "own_gil", "tids": {role: native id}})
once all three spin, then goes on for SECONDS, writes "done" and exits.
"""
import json
import os
import sys
import threading
import time

try:
    import _interpreters as interpreters  # 3.13+
except ImportError:
    import _xxsubinterpreters as interpreters  # 3.12

OUT, SECONDS = sys.argv[1], float(sys.argv[2])
SUB_CODE = '''
import time
def burn_in_subinterpreter(until):
    while time.time() < until:
        sum(range(100000))  # HOT_SUB
burn_in_subinterpreter(time.time() + {seconds})
'''
tids = {}
until = time.time() + SECONDS + 3


def burn_in_main():
    while time.time() < until:
        sum(range(100000))


def contend_in_main():
    tids["contender"] = threading.get_native_id()
    while time.time() < until:
        sum(range(100000))


def run_sub(made):
    interp_id = interpreters.create()
    made.append(own_gil(interp_id))
    tids["sub"] = threading.get_native_id()
    interpreters.run_string(interp_id, SUB_CODE.format(seconds=SECONDS + 3))


def own_gil(interp_id):
    try:
        return interpreters.get_config(interp_id).gil == "own"
    except AttributeError:  # 3.12: isolated (own GIL) unless asked otherwise
        return True


def main():
    made = []
    tids["main"] = threading.get_native_id()
    threads = [threading.Thread(target=run_sub, args=(made,), name="sub"),
               threading.Thread(target=contend_in_main, name="contender")]
    for t in threads:
        t.start()
    while len(tids) < 3:
        time.sleep(0.01)
    time.sleep(0.3)
    with open(OUT + ".tmp", "w") as fp:
        json.dump({"pid": os.getpid(), "ready": True, "own_gil": made[0],
                   "tids": tids}, fp)
    os.rename(OUT + ".tmp", OUT)
    burn_in_main()
    for t in threads:
        t.join()


main()
