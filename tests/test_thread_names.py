"""Thread identity: the BPF tools name a thread by its Python name
(threading.Thread.name), read from the target, with its TID beside it.
tests/workloads/named_threads.py runs two threads whose names are longer
than an OS name can be (so no tool can have them from the kernel), spinning
and contending for the GIL. One run of each tool at once per interpreter
serves every assertion: pygil's table and its --threads stacks, pyprofile's
--threads folded stacks and pprof's thread/thread_name labels, pyoffcpu's
per-thread reasons.
"""
import os
import re
import subprocess

import pytest

from conftest import WORKLOADS, tool_path
from profiling import parse_folded, read_json
from test_outputs import go_pprof
from test_pygil import host_tids

TIMEOUT = 120
TID_ROOT = re.compile(r"^\[TID (\d+) (.*)\]$")

RUNS = {
    # the table on stdout, the waiting stacks (rooted in their threads) in a file
    "pygil": ("pygil", ["--threads", "--format", "folded", "-o", "{dir}/gil.folded"]),
    "folded": ("pyprofile", ["-F", "199", "--threads", "-f"]),
    "pprof": ("pyprofile", ["-F", "199", "--format", "pprof", "-o", "{dir}/cpu.pb.gz"]),
    "pyoffcpu": ("pyoffcpu", []),
}


@pytest.fixture(scope="module")
def named(interp, tmp_path_factory):
    """(names {host tid: Python name}, main pid, {run: stdout}, files dir)."""
    script = interp.place(os.path.join(WORKLOADS, "named_threads.py"))
    scratch = interp.scratch(tmp_path_factory.mktemp("named"))
    proc = interp.spawn([script, scratch.proc])
    d = str(tmp_path_factory.mktemp("runs"))
    started = {}
    try:
        state = read_json(scratch.host_path("state.json"), key="ready", timeout=60)
        host = host_tids(proc.pid)
        names = {host.get(tid, tid): name for name, tid in state["threads"].items()}
        assert len(names) == 2 and all(names), state
        for run, (tool, args) in RUNS.items():
            argv = ([tool_path(tool)] + [a.format(dir=d) for a in args]
                    + ["-p", str(proc.pid), "2"])
            started[run] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            stdin=subprocess.DEVNULL, universal_newlines=True)
        out = {}
        for run, popen in started.items():
            stdout, stderr = popen.communicate(timeout=TIMEOUT)
            assert popen.returncode == 0, (run, stderr)
            out[run] = stdout
        yield names, proc.pid, out, d
    finally:
        for popen in started.values():
            if popen.poll() is None:
                popen.kill()
                popen.wait()
        proc.kill()
        scratch.cleanup()


def thread_roots(text):
    """{tid: set of names} of the [TID n name] frames of --threads folded
    output, and the frames under each tid."""
    names, frames = {}, {}
    for fr, _, _ in parse_folded(text):
        m = TID_ROOT.match(fr[1])
        assert fr[0].startswith("[PID ") and m, fr[:3]
        names.setdefault(int(m.group(1)), set()).add(m.group(2))
        frames.setdefault(int(m.group(1)), []).append(fr[2:])
    return names, frames


def test_pygil_table_names_threads(named):
    """Each thread's row: its TID and its Python name, the main thread's
    MainThread."""
    names, pid, out, _ = named
    rows = dict(re.findall(r"^ *(\d+) (\S+) +[\d.-]+ +[\d.]+ ", out["pygil"], re.M))
    for tid, name in names.items():
        assert rows.get(str(tid)) == name, (tid, name, out["pygil"])
    assert rows.get(str(pid)) == "MainThread", out["pygil"]
    assert re.search(r"^ +TID THREAD +WALL\(s\)", out["pygil"], re.M), out["pygil"]


def test_pygil_waiting_stacks_carry_tid_and_name(named):
    names, _, _, d = named
    with open(os.path.join(d, "gil.folded")) as fp:
        seen, frames = thread_roots(fp.read())
    for tid, name in names.items():
        assert seen.get(tid) == {name}, (tid, name, seen)
        assert any(any(f.startswith("crunch (") for f in st) for st in frames[tid]), tid


def test_pyprofile_threads_folded(named):
    names, pid, out, _ = named
    seen, frames = thread_roots(out["folded"])
    for tid, name in names.items():
        assert seen.get(tid) == {name}, (tid, name, seen)
        assert any(any(f.startswith("crunch (") for f in st) for st in frames[tid]), tid
    assert seen.get(pid, {"MainThread"}) == {"MainThread"}, seen


def test_pprof_labels(named, tmp_path):
    """Every sample of a named thread: thread (its TID) and thread_name (its
    Python name), as go tool pprof reads them."""
    names, _, _, d = named
    traces = go_pprof(["-traces", os.path.join(d, "cpu.pb.gz")], tmp_path)
    per_tid = {}
    for block in traces.split("-----------+")[1:]:
        labels = dict(re.findall(r"^\s*(\w+):\s+(.+?)\s*$", block, re.M))
        if "thread" in labels:
            per_tid.setdefault(int(labels["thread"]), set()).add(labels.get("thread_name"))
    for tid, name in names.items():
        assert per_tid.get(tid) == {name}, (tid, name, per_tid)


def test_pyoffcpu_reasons_by_thread(named):
    names, _, out, _ = named
    for tid, name in names.items():
        assert re.search(r"^  TID %d \(%s, PID \d+\): " % (tid, re.escape(name)),
                         out["pyoffcpu"], re.M), (tid, name, out["pyoffcpu"][-2000:])
