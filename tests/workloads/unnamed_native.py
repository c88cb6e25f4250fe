"""Python functions whose time goes to C code that Debian's stripped
interpreter leaves unnamed, for the tests of unnamed native frames. The
main thread calls, in turn:

  re_scan     a regular expression over a long text: the _sre engine,
              built into the interpreter (its functions are static)
  json_parse  json.loads of a document: the _json module's scanner
  py_sum      a loop in Python, for a function with its own time

Runs for SECONDS (default 60).

    python unnamed_native.py [SECONDS]
"""
import json
import re
import sys
import time

TEXT = " ".join("user%d@host%d.example.com said %d things" % (i, i % 97, i * 7)
                for i in range(4000))
PATTERN = re.compile(r"(\w+)@(\w+)\.example\.com said (\d+)")
DOC = json.dumps([{"id": i, "name": "item %d" % i, "tags": ["a", "b"], "x": i / 7}
                  for i in range(4000)])


def re_scan():
    return len(PATTERN.findall(TEXT))


def json_parse():
    return len(json.loads(DOC))


def py_sum():
    s = 0
    for i in range(60000):
        s += i % 7
    return s


end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 60)
while time.time() < end:
    re_scan()
    json_parse()
    py_sum()
