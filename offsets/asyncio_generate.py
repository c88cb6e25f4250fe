#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write (or check) the asyncio reader's built-in offsets, lib/cpython/asyncio_table.inc.

Two sources, so no number is typed by hand:
  - the interpreter's structs (types, dicts, sets, generators, frames, thread
    and interpreter states): offsetof() compiled against each version's own
    headers, like offsets/generate.py;
  - _asyncio's own structs (FutureObj, TaskObj, futureiterobject), which live
    in Modules/_asynciomodule.c and no header: read from the DWARF of a build
    of the _asyncio extension that has it (pyenv builds do), with gdb.
3.14+ publish _asyncio's offsets themselves (section AsyncioDebug), so their
rows hold the interpreter's structs only.

Usage:
    offsets/asyncio_generate.py [--check] VERSION=INCLUDE_DIR[,ASYNCIO_SO] ...
e.g.
    offsets/asyncio_generate.py \\
      3.11=/root/.pyenv/versions/3.11.7/include/python3.11,/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_asyncio.cpython-311-x86_64-linux-gnu.so \\
      3.12=... 3.13=... 3.14=/tmp/deb/usr/include/python3.14 3.15=/tmp/deb/usr/include/python3.15

--check compares the given versions' rows instead of writing (the others
are left alone) and exits 1 on a difference. See
offsets/README.md (asyncio section) for where the headers came from.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEST = os.path.join(os.path.dirname(HERE), "lib", "cpython", "asyncio_table.inc")

# (field, first minor, last minor, C expression) for the interpreter's structs
INTERP_FIELDS = [
    ("interp_modules", 11, 11, "offsetof(PyInterpreterState, modules)"),
    ("interp_modules", 12, 99, "offsetof(PyInterpreterState, imports.modules)"),
    ("tstate_dict", 11, 99, "offsetof(PyThreadState, dict)"),
    ("tstate_running_loop", 13, 99, "offsetof(_PyThreadStateImpl, asyncio_running_loop)"),
    ("tstate_running_task", 14, 99, "offsetof(_PyThreadStateImpl, asyncio_running_task)"),
    ("tstate_tasks_head", 14, 99, "offsetof(_PyThreadStateImpl, asyncio_tasks_head)"),
    ("interp_tasks_head", 14, 99, "offsetof(PyInterpreterState, asyncio_tasks_head)"),
    ("llist_next", 14, 99, "offsetof(struct llist_node, next)"),
    ("gen_frame_state", 11, 99, "offsetof(PyGenObject, gi_frame_state)"),
    ("gen_iframe", 11, 99, "offsetof(PyGenObject, gi_iframe)"),
    ("frame_stacktop", 11, 13, "offsetof(_PyInterpreterFrame, stacktop)"),
    ("frame_stackpointer", 14, 99, "offsetof(_PyInterpreterFrame, stackpointer)"),
    ("frame_localsplus", 11, 99, "offsetof(_PyInterpreterFrame, localsplus)"),
]

# _asyncio's structs, from DWARF (3.11-3.13): (field, gdb expression)
ASYNCIO_FIELDS = [
    ("fut_loop", "(long)&((FutureObj*)0)->fut_loop"),
    ("fut_state", "(long)&((FutureObj*)0)->fut_state"),
    ("task_fut_waiter", "(long)&((TaskObj*)0)->task_fut_waiter"),
    ("task_coro", "(long)&((TaskObj*)0)->task_coro"),
    ("task_name", "(long)&((TaskObj*)0)->task_name"),
    ("task_size", "(long)sizeof(TaskObj)"),
    ("futureiter_future", "(long)&((futureiterobject*)0)->future"),
]
# 3.11 only: the running loop sits in a holder object in the thread's dict
HOLDER_FIELD = ("running_holder_loop", "(long)&((PyRunningLoopHolder*)0)->rl_loop")

HEADERS = ["internal/pycore_pystate.h", "internal/pycore_runtime.h", "internal/pycore_interp.h",
           "internal/pycore_frame.h", "internal/pycore_dict.h", "internal/pycore_moduleobject.h",
           "internal/pycore_genobject.h", "internal/pycore_tstate.h", "internal/pycore_llist.h",
           "internal/pycore_interpframe.h", "internal/pycore_long.h"]


def header_version(include_dir):
    text = open(os.path.join(include_dir, "patchlevel.h")).read()
    m = re.search(r'#define\s+PY_VERSION\s+"([^"]+)"', text)
    if not m:
        sys.exit("no PY_VERSION in %s/patchlevel.h" % include_dir)
    return m.group(1)


def interp_values(include_dir, minor, cc):
    lines = ["#define Py_BUILD_CORE 1", "#include <Python.h>"]
    lines += ["#include <%s>" % h for h in HEADERS if os.path.exists(os.path.join(include_dir, h))]
    lines += ["#include <stddef.h>", "#include <stdio.h>", "int main(void) {"]
    for name, lo, hi, expr in INTERP_FIELDS:
        if lo <= minor <= hi:
            lines.append('    printf("%%s %%zu\\n", "%s", (size_t)%s);' % (name, expr))
    lines += ["    return 0;", "}"]
    # Debian splits pyconfig.h out under the multiarch directory
    incs = ["-I", include_dir, "-I", os.path.dirname(include_dir)]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run([cc, "-w"] + incs + [src, "-o", exe], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return [tuple(line.split()) for line in out.splitlines()]


def asyncio_values(so, minor):
    fields = ASYNCIO_FIELDS + ([HOLDER_FIELD] if minor == 11 else [])
    argv = ["gdb", "-batch", "-nx", "-iex", "set auto-load off"]
    for _, expr in fields:
        argv += ["-ex", "print %s" % expr]
    out = subprocess.run(argv + [so], check=True, capture_output=True, text=True).stdout
    values = re.findall(r"^\$\d+ = (\d+)$", out, re.M)
    if len(values) != len(fields):
        sys.exit("gdb could not resolve every _asyncio field in %s:\n%s" % (so, out))
    return [(name, v) for (name, _), v in zip(fields, values)]


def row(minor, version, so, values):
    """One version as a C string: "version 3.N" then "field value" lines."""
    origin = "headers of %s" % version + (", DWARF of %s" % os.path.basename(so) if so else "")
    out = ["\t/* 3.%d: %s */" % (minor, origin), '\t"version 3.%d\\n"' % minor]
    out += ['\t"%s %s\\n"' % (name, value) for name, value in values]
    out[-1] += ","
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="+", metavar="VERSION=INCLUDE_DIR[,ASYNCIO_SO]")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("-o", "--output", default=DEST)
    args = ap.parse_args()

    header = ["/* SPDX-License-Identifier: Apache-2.0 */",
              "/* Generated by offsets/asyncio_generate.py; do not edit. */"]
    rows = {}
    for spec in args.versions:
        want, _, paths = spec.partition("=")
        include_dir, _, so = paths.partition(",")
        version = header_version(include_dir)
        minor = int(version.split(".")[1])
        if want != "3.%d" % minor:
            sys.exit("%s: the headers are %s" % (spec, version))
        values = interp_values(include_dir, minor, args.cc)
        if so:
            values += asyncio_values(so, minor)
        rows[minor] = row(minor, version, so, values)
    if args.check:
        # the given versions' values against the file's rows for them
        # (the comment naming the sources' exact versions aside)
        old = open(args.output).read() if os.path.exists(args.output) else ""
        bad = []
        for minor, lines in sorted(rows.items()):
            m = re.search(r'\t"version 3\.%d\\n"\n(?:\t"[^\n]*\n)*' % minor, old)
            want = "\n".join(lines[1:]) + "\n"
            if not m or m.group(0) != want:
                bad.append(minor)
                sys.stdout.write("3.%d should be:\n%s" % (minor, want))
        if bad:
            sys.exit("%s differs from what the sources say for %s" % (
                args.output, ", ".join("3.%d" % m for m in bad)))
        print("%s matches for %s" % (args.output, ", ".join("3.%d" % m for m in sorted(rows))))
        return
    text = header
    for minor in sorted(rows):
        text += rows[minor]
    text = "\n".join(text) + "\n"
    with open(args.output, "w") as f:
        f.write(text)
    print("wrote %s" % args.output)


if __name__ == "__main__":
    main()
