"""pymem --census against real interpreters: one workload per interpreter
(tests/workloads/census_leak.py) serves every assertion. Quiescent, a
one-shot census counts leaky.Node, leaky.Pair and leaky.Outer.Leak
exactly as len([o for o in gc.get_objects() if type(o) is T]) measured
by the workload; then, while it keeps 2000 leaky.Outer.Leak a second and
two threads allocate and free, `--census -i 1` reports the nested class
by its qualified name in what grew, each count and delta within 2% of
what the workload's log of its bursts says it held during the walks."""
import bisect
import json
import os
import subprocess
import time

import pytest

from conftest import WORKLOADS
from profiling import finish, read_json

WORKLOAD = os.path.join(WORKLOADS, "census_leak.py")
LEAK = "leaky.Outer.Leak"
SECONDS = 5      # of leaking, 2000 a second in bursts of 200
TOLERANCE = 0.02  # the bound


def census_rows(doc):
    return {r["type"]: r["count"] for r in doc["rows"]}


@pytest.fixture(scope="module")
def census_run(interp, pymem, tmp_path_factory):
    """(truth at the quiescent moment, its one-shot census, the -i series,
    the workload's burst log)."""
    tmp = str(tmp_path_factory.mktemp("census"))
    script = interp.place(WORKLOAD)
    scratch = interp.scratch(tmp)
    series = os.path.join(tmp, "series.json")
    proc = interp.spawn([script, scratch.proc, str(SECONDS)])
    try:
        state = read_json(scratch.host_path("state.json"), key="ready", timeout=60)
        one = subprocess.run([pymem, "--census", "--all", "--format", "json", "-p",
                              str(proc.pid)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        assert one.returncode == 0, one.stderr
        running = subprocess.Popen([pymem, "--census", "-i", "1", "--all", "--format", "json",
                                    "-p", str(proc.pid), "-o", series, str(SECONDS + 1)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   universal_newlines=True)
        time.sleep(0.3)
        with open(scratch.host_path("go"), "w"):
            pass
        rc, _, err = finish(running, timeout=120)
        assert rc == 0, err
        leak = read_json(scratch.host_path("leak.json"), key="done", timeout=60)
    finally:
        proc.kill()
        scratch.cleanup()
    with open(series, encoding="utf-8") as fp:
        docs = [json.loads(line) for line in fp if line.strip()]
    return state["truth"], json.loads(one.stdout), docs, leak


def test_one_shot_census_matches_gc_get_objects(census_run):
    truth, one, _, _ = census_run
    assert one["complete"], one["why"]
    got = census_rows(one)
    for name, count in truth.items():
        assert got.get(name, 0) == count, (name, got.get(name), count)


def held_between(leak, start, end):
    """The fewest and most Leak instances the workload held at some moment
    of [start, end]: bursts finished by start, bursts begun by end."""
    bursts = leak["bursts"]
    done = [b[1] for b in bursts]
    begun = [b[0] for b in bursts]
    counts = [0] + [b[2] for b in bursts]
    return counts[bisect.bisect_right(done, start)], counts[bisect.bisect_right(begun, end)]


def test_growth_names_the_nested_class_within_two_percent(census_run):
    _, _, docs, leak = census_run
    checked = 0
    for prev, doc in zip(docs, docs[1:]):
        if not (prev["complete"] and doc["complete"]):
            continue
        lo, hi = held_between(leak, doc["time"] - doc["walk_seconds"], doc["time"])
        plo, phi = held_between(leak, prev["time"] - prev["walk_seconds"], prev["time"])
        count = census_rows(doc).get(LEAK, 0)
        assert lo * (1 - TOLERANCE) <= count <= hi * (1 + TOLERANCE), (count, lo, hi)
        if hi == 0 or lo - phi <= 0:
            continue  # nothing leaked between these two for certain
        grew = {g["type"]: g for g in doc["growth"]}
        assert LEAK in grew, sorted(grew)
        delta = grew[LEAK]["count_delta"]
        truth_lo, truth_hi = lo - phi, hi - plo
        assert truth_lo * (1 - TOLERANCE) <= delta <= truth_hi * (1 + TOLERANCE), \
            (delta, truth_lo, truth_hi)
        checked += 1
    complete = sum(d["complete"] for d in docs)
    # 7 censuses over 6 s, the leak in 5 of them: most pairs must be vouched for
    assert checked >= 3, "only %d intervals checked, %d of %d censuses complete: %s" % (
        checked, complete, len(docs), [d["why"] for d in docs])


@pytest.mark.serial  # (conftest.py: every Python process)
def test_census_needs_a_process(pymem):
    run = subprocess.run([pymem, "--census"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=30)
    assert run.returncode == 2
    assert "needs -p PID" in run.stderr
