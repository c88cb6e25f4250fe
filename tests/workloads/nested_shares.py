"""Two functions of known CPU shares, one calling the other, in two files
of one name (launched: pyprofile ... -- python nested_shares.py SCRATCH [SECONDS]).

It writes SCRATCH/srv/app.py, whose outer() burns CPU itself and then
calls inner() of SCRATCH/flask/app.py, which burns twice as long, imports
both by path and runs outer() until its calls have taken SECONDS of CPU
time (2.4). SCRATCH/truth.json
then gets the CPU time (time.thread_time()) of every outer() call
(outer_total), of every inner() call (inner, as inner() counts it), of the
whole process at the end (process, time.process_time()), and each
function's file and def line (defs).
"""
import importlib.util
import json
import os
import sys
import time

SCRATCH = sys.argv[1]
# outer takes a third of it itself, inner two thirds
CPU_SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 2.4
ROUND = 0.03       # outer's own part of one round

OUTER = '''import time


def outer(seconds, inner):
    c0 = time.thread_time()
    while time.thread_time() - c0 < seconds:
        sum(range(300))
    inner(2 * seconds)
'''

INNER = '''import time

SPENT = [0.0]


def inner(seconds):
    c0 = time.thread_time()
    while time.thread_time() - c0 < seconds:
        sum(range(300))
    SPENT[0] += time.thread_time() - c0
'''


def load(directory, source):
    """The module app of SCRATCH/DIRECTORY/app.py, written from source."""
    os.makedirs(os.path.join(SCRATCH, directory), exist_ok=True)
    path = os.path.join(SCRATCH, directory, "app.py")
    with open(path, "w") as fp:
        fp.write(source)
    spec = importlib.util.spec_from_file_location("%s_app" % directory, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def main():
    srv, srv_path = load("srv", OUTER)
    flask, flask_path = load("flask", INNER)
    spent = {"outer_total": 0.0}
    while spent["outer_total"] < CPU_SECONDS:
        c0 = time.thread_time()
        srv.outer(ROUND, flask.inner)
        spent["outer_total"] += time.thread_time() - c0
    spent["inner"] = flask.SPENT[0]
    spent["process"] = time.process_time()
    spent["defs"] = {"outer": [srv_path, srv.outer.__code__.co_firstlineno],
                     "inner": [flask_path, flask.inner.__code__.co_firstlineno]}
    with open(os.path.join(SCRATCH, "truth.json"), "w") as fp:
        json.dump(spent, fp)


main()
