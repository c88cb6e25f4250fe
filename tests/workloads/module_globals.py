"""Module globals with known values for pydump --globals: data of each
kind shown, and what it leaves out (modules, functions, classes, dunder
names). Says "ready" on stdout, then sleeps in work()."""
import json
import sys
import time

COUNTER = 42
CONFIG = {"name": "svc", "port": 8080}
NAME = "gateway"
_pending = [1, 2, 3]
RATIO = 0.5
ENABLED = True


class Handler:
    pass


def work():
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    time.sleep(1000)


json.dumps(CONFIG)
work()
