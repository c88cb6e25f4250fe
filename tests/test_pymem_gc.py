"""pymem --gc against real interpreters: a workload that runs collections
of known size with automatic collection off, timing each with gc.callbacks
(tests/workloads/gc_collections.py); one run per interpreter serves every
assertion. Where the interpreter has CPython's gc__start/gc__done probes
(Debian's builds: the host's 3.11, bullseye's 3.9, sid's 3.13-3.15, in
their chroots and PID namespaces) every collection is counted, with its
generation, objects collected and the stack that asked for it, and its
pause within the callbacks' interval. pyprofile marks the samples of a
collecting thread with a [gc] frame, on every interpreter."""
import json
import os

import pytest

from conftest import tool_path, WORKLOADS
from profiling import run_on_cue, parse_folded

WORKLOAD = os.path.join(WORKLOADS, "gc_collections.py")
ROUNDS = 45  # gc_collections.py's known mode


def has_probes(interp):
    """Debian's interpreters are built --with-dtrace; pyenv's are not."""
    return interp.kind in ("host", "chroot")


@pytest.fixture(scope="module")
def known_run(interp, pymem, tmp_path_factory):
    """The report (json) of one run of the known mode, the tool's stderr,
    and the workload's own log of its collections."""
    # without probes, the sampled method: the heavy mode, mostly collecting
    text, err, truth = run_on_cue(interp, pymem, WORKLOAD, tmp_path_factory.mktemp("gc"),
                                  ["--gc", "--format", "json"],
                                  ["known" if has_probes(interp) else "heavy", "3"],
                                  truth=("truth.json", "done"))
    report = json.loads(text)
    assert len(report["processes"]) == 1, text[:2000]
    proc = report["processes"][0]
    mine = [c for c in report["collections"] if c["pid"] == proc["pid"]]
    return proc, mine, report, err, truth


def exact_only(interp):
    if not has_probes(interp):
        pytest.skip("no gc__start/gc__done probes in pyenv builds (built without --with-dtrace)")


def test_every_collection_counted(interp, known_run):
    exact_only(interp)
    proc, mine, report, err, truth = known_run
    assert proc["method"] == "exact", proc
    assert report["lost"] == 0 and report["not_kept"] == 0
    assert len(truth["collections"]) == ROUNDS
    assert len(mine) == ROUNDS, (len(mine), err)
    assert proc["collections"] == ROUNDS
    gens = [c["generation"] for c in truth["collections"]]
    assert [c["generation"] for c in mine] == gens
    assert proc["by_generation"] == [gens.count(g) for g in range(3)]
    # collected + uncollectable, as the callbacks saw them
    assert [c["collected"] for c in mine] == [c["collected"] for c in truth["collections"]]
    assert proc["collected"] == sum(c["collected"] for c in truth["collections"])


def test_pauses_match_the_callbacks(interp, known_run):
    exact_only(interp)
    proc, mine, report, err, truth = known_run
    theirs = truth["collections"]
    for got, cb in zip(mine, theirs):
        # the callbacks run around the probes: each pause is inside its interval
        assert got["pause_us"] * 1e3 <= cb["duration_ns"] + 1000, (got, cb)
    total = sum(c["pause_us"] for c in mine)
    truth_us = sum(c["duration_ns"] for c in theirs) / 1e3
    assert abs(total - truth_us) <= 0.2 * truth_us, (total, truth_us)
    assert abs(proc["paused_us"] - total) <= 0.01 * total + 1
    assert sum(proc["hist_usecs_log2"]) == ROUNDS


def test_triggering_stack(interp, known_run):
    exact_only(interp)
    proc, mine, report, err, truth = known_run
    for c in mine:
        assert c["stack"] and c["stack"][0].startswith("collect_generation ("), c
        assert any(f.startswith("known (") for f in c["stack"]), c


def test_sampled_without_probes(interp, known_run):
    """pyenv's builds: the report says "sampled" and why, and the time
    collecting on CPU is within what the run allows: at most the callbacks'
    time and the collecting thread's CPU time, at least its CPU time less
    the time it spent outside collections, each give or take 3 sqrt(n) + 2
    samples (another thread hashing on CPU meanwhile is not counted)."""
    if has_probes(interp):
        pytest.skip("this interpreter has the probes: exact, not sampled")
    proc, mine, report, err, truth = known_run
    assert proc["method"] == "sampled", proc
    assert "--with-dtrace" in proc["why"], proc
    assert not mine  # no collections listed: only the probes see them
    period_us = 1e6 / proc["sample_hz"]
    n = proc["samples"]
    slack = (3 * n ** 0.5 + 2) * period_us
    gc_us = sum(c["duration_ns"] for c in truth["collections"]) / 1e3
    cpu_us, wall_us = truth["cpu_s"] * 1e6, truth["wall_s"] * 1e6
    high = min(gc_us, cpu_us) + slack
    low = cpu_us - (wall_us - gc_us) - slack
    assert low <= proc["paused_us"] <= high, (proc, low, high, truth["cpu_s"], truth["wall_s"])
    assert n >= 20, proc  # enough samples for the bound to mean something


@pytest.fixture(scope="module")
def heavy_profile(interp, tmp_path_factory):
    """pyprofile -f of the heavy mode (gc.collect() over a large live heap
    in a loop), and the workload's own log."""
    text, err, truth = run_on_cue(interp, tool_path("pyprofile"), WORKLOAD,
                                  tmp_path_factory.mktemp("gcprof"),
                                  ["-F", "199", "--format", "folded"], ["heavy", "3"],
                                  truth=("truth.json", "done"))
    return parse_folded(text), err, truth


def test_pyprofile_marks_gc(interp, heavy_profile):
    """pyprofile marks the samples of the collecting thread with [gc]: at
    least 80% of the loop's samples (on CPU the loop does little but
    collect); and not those of a thread on CPU meanwhile without the
    GIL."""
    stacks, err, truth = heavy_profile
    in_loop = [(s, n) for s, _, n in stacks if any(f.startswith("collect_loop (") for f in s)]
    total = sum(n for _, n in in_loop)
    marked = sum(n for s, n in in_loop if "[gc]" in s)
    gc_share = sum(c["duration_ns"] for c in truth["collections"]) / 1e9 / truth["wall_s"]
    # most of its wall time in gc.collect() (the rest, on a busy machine,
    # mostly waiting for a CPU or for the GIL from the hashing thread: no
    # samples); on CPU, all but a few bytecodes a collection
    assert gc_share >= 0.5, gc_share
    assert total >= 20, (total, err)  # enough samples for a share to mean something
    assert marked >= 0.8 * total, (marked, total, err)
    # the hashing thread runs no collection, on CPU while the main thread
    # collects: its samples are not marked (but for a sample that races
    # with a collection's end and the GIL's hand-over)
    hashing = [(s, n) for s, _, n in stacks if any(f.startswith("hash_loop (") for f in s)]
    hash_total = sum(n for _, n in hashing)
    hash_marked = sum(n for s, n in hashing if "[gc]" in s)
    assert hash_total >= 10, (hash_total, err)
    assert hash_marked <= 0.01 * hash_total + 1, (hash_marked, hash_total)
    # [gc] sits on top of the user frames, below the kernel's
    for s, _ in in_loop:
        if "[gc]" in s:
            assert all(not f.endswith("_[k]") for f in s[:s.index("[gc]")]), s
