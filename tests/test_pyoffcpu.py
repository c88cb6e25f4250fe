"""pyoffcpu against real interpreters: blocked time per Python function
against the time the workload measured, histograms, filters, runnable
time kept apart, system-wide discovery and the errors users hit."""
import json
import os
import re
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import WORKLOADS
import interpreters
from profiling import (run_on_cue, start_tool, finish, parse_folded, frame_name, read_json, offcpu_times,
                       DURATION, duration_us)
from test_pyprofile import host_interp, go_pprof, pprof_cum_ms

WORKLOAD = os.path.join(WORKLOADS, "offcpu_known.py")
FUNCS = ("nap_in_sleep", "wait_on_pipe", "wait_in_select")
TOLERANCE = 0.10  # relative, per function


def run_known(interp, pyoffcpu, tmp_path, args, cycles=20, use_tid=False, calls=False):
    """Runs offcpu_known.py under pyoffcpu (started before the workload's
    measured part, ended by the workload's exit). Returns (report text,
    stderr, truth seconds per function: blocked, neither on a CPU nor
    runnable, by the scheduler's accounting, which the workload reads
    through a descriptor of /proc that it inherits); with CALLS, fourth,
    the blocked seconds of each call, per function."""
    def target(state, pid):
        return list(args) + (["-t", str(state["select_tid"])] if use_tid else ["-p", str(pid)])

    proc_fd = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
    try:
        text, err, truth = run_on_cue(interp, pyoffcpu, WORKLOAD, tmp_path, target,
                                      workload_args=[str(cycles), str(proc_fd)],
                                      truth=("state.json", "truth"), pass_fds=(proc_fd,))
    finally:
        os.close(proc_fd)
    if calls:
        return text, err, truth["truth"], truth["calls"]
    return text, err, truth["truth"]


def blocked_by_leaf_function(rows):
    """Microseconds per innermost Python function of each folded row."""
    per = {}
    for frames, _, us in rows:
        python = [f for f in frames if f.endswith(")") and not f.endswith("_[k]")
                  and " (" in f]
        if python:
            name = frame_name(python[-1])
            per[name] = per.get(name, 0) + us
    return per


def test_blocked_time_matches_truth(interp, pyoffcpu, tmp_path):
    """Each function's blocked microseconds are within 10% of the time the
    workload measured its blocking calls (time.sleep, os.read on a pipe,
    select) blocked, charged to the Python function that called the C
    code."""
    text, err, truth = run_known(interp, pyoffcpu, tmp_path, ["--format", "folded"])
    rows = parse_folded(text)
    per = blocked_by_leaf_function(rows)
    for f in FUNCS:
        want = truth[f] * 1e6
        got = per.get(f, 0)
        assert want > 500000, truth
        assert abs(got - want) <= TOLERANCE * want, \
            "%s: %d us blocked, truth %d us\n%s\n%s" % (f, got, want, per, err)
    # kernel frames end each stack, with the scheduler innermost, and
    # then why it waited: nap_in_sleep slept, except for the GIL waits as
    # time.sleep returns (the other threads may hold it then)
    nap = [(fr, us) for fr, _, us in rows if any(frame_name(x) == "nap_in_sleep" for x in fr)]
    assert nap and all(fr[-1].startswith("[") and fr[-2].endswith("_[k]") for fr, _ in nap), nap[:2]
    slept = sum(us for fr, us in nap if fr[-1] == "[sleep]")
    assert slept >= 0.95 * sum(us for _, us in nap), nap
    nap = [fr for fr, _ in nap]
    assert any("schedule_[k]" in fr[-2] for fr in nap), nap[:2]
    # never the tracing machinery's own frames (some kernels put the
    # tracepoint's iterator above __schedule)
    assert not any(f.startswith(("__traceiter_", "__bpf_trace_", "bpf_trace_run"))
                   for fr in nap for f in fr), nap[:2]
    # the line is the blocking call's line in the workload
    leaf = [x for x in nap[0] if frame_name(x) == "nap_in_sleep"][0]
    assert "offcpu_known.py:" in leaf
    assert not any("[runnable" in f for fr, _, _ in rows for f in fr)
    # the summary in units for people, the blocked time the stacks' sum
    times = offcpu_times(err)
    assert times, err
    total = sum(us for _, _, us in rows)
    assert abs(times[0] - total) <= max(0.005 * total, 1000), (times, total, err)


def test_histogram_of_blocked_durations(pyoffcpu, tmp_path):
    """-H: bcc's log2 layout, the select() waits (50 ms each) all in the
    32768 -> 65535 slot, as many as the select loop ran."""
    text, err, truth = run_known(host_interp(), pyoffcpu, tmp_path, ["-H", "--top", "20"])
    blocks = text.split("\n\n")
    at = [i for i, b in enumerate(blocks) if "\n    wait_in_select (" in b]
    assert at, text
    header = blocks[at[0]]
    m = re.match(r"python[\d.]* \((\d+)\): (\d+) us in (\d+) waits, at", header)
    assert m, header
    waits = int(m.group(3))
    assert abs(int(m.group(2)) - truth["wait_in_select"] * 1e6) <= 0.1 * truth["wait_in_select"] * 1e6
    hist = blocks[at[0] + 1]
    assert hist.splitlines()[0].split() == ["usecs", ":", "count", "distribution"]
    slots = {}
    for line in hist.splitlines()[1:]:
        lo, hi, count = re.match(r"\s*(\d+) -> (\d+)\s*: (\d+)\s*\|", line).groups()
        slots[(int(lo), int(hi))] = int(count)
    assert list(slots)[0] == (0, 1) and (32768, 65535) in slots
    assert slots[(32768, 65535)] >= 0.9 * waits and sum(slots.values()) == waits
    # about one wait per 50 ms of truth
    assert abs(waits - truth["wait_in_select"] / 0.05) <= 3, (waits, truth)


def test_min_and_max_block_time(pyoffcpu, tmp_path):
    """-m 35000 drops the 30 ms pipe waits and keeps the 40 ms naps; -M
    35000 keeps the pipe waits and drops the naps and 50 ms selects. On a
    loaded machine a pipe wait lasts longer than 30 ms (its writer waits
    for a CPU): each call's own blocked time says which side of 35 ms it
    fell on, and the calls within 2 ms of it may fall either way."""
    py = host_interp()
    text, err, _, calls = run_known(py, pyoffcpu, tmp_path, ["--format", "folded", "-m", "35000"],
                                    calls=True)
    per = blocked_by_leaf_function(parse_folded(text))
    assert per.get("nap_in_sleep", 0) > 500000 and per.get("wait_in_select", 0) > 500000, per
    pipe = calls["wait_on_pipe"]
    surely = sum(d for d in pipe if d >= 0.037) * 1e6
    maybe = sum(d for d in pipe if d > 0.033) * 1e6
    # idle, every pipe wait is 30-31 ms: none may be counted
    assert 0.85 * surely <= per.get("wait_on_pipe", 0) <= 1.15 * maybe, (per, pipe)
    assert "intervals outside -m/-M not counted" in err
    text, err, _, calls = run_known(py, pyoffcpu, tmp_path, ["--format", "folded", "-M", "35000"],
                                    calls=True)
    per = blocked_by_leaf_function(parse_folded(text))
    short = sum(d for d in calls["wait_on_pipe"] if d <= 0.033) * 1e6
    assert short > 300000 and per.get("wait_on_pipe", 0) >= 0.85 * short, (per, calls["wait_on_pipe"])
    assert per.get("nap_in_sleep", 0) == 0 and per.get("wait_in_select", 0) == 0, per


def test_thread_filter(pyoffcpu, tmp_path):
    """-t TID: the select thread's waits only."""
    text, err, truth = run_known(host_interp(), pyoffcpu, tmp_path, ["--format", "folded"],
                                 use_tid=True)
    per = blocked_by_leaf_function(parse_folded(text))
    assert abs(per.get("wait_in_select", 0) - truth["wait_in_select"] * 1e6) \
        <= TOLERANCE * truth["wait_in_select"] * 1e6, per
    assert "nap_in_sleep" not in per and "wait_on_pipe" not in per, per


SPINNER = "import sys, time\ndef spin_on_cpu(end):\n    while time.time() < end: pass\n" \
          "spin_on_cpu(time.time() + float(sys.argv[1]))\n"


def test_runnable_time_is_reported_apart(pyoffcpu, tmp_path):
    """More spinning processes than CPUs: their time off CPU is runnable
    time, kept out of the stacks unless -R, and then marked at the leaf."""
    ncpu = os.cpu_count() or 2
    spinners = [subprocess.Popen([interpreters.HOST_PYTHON, "-c", SPINNER, "60"])
                for _ in range(ncpu + 1)]
    pids = ",".join(str(p.pid) for p in spinners)
    try:
        time.sleep(0.3)
        plain = subprocess.run([pyoffcpu, "-f", "-p", pids, "2"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=120, universal_newlines=True)
        shown = subprocess.run([pyoffcpu, "-f", "-R", "-p", pids, "2"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=120, universal_newlines=True)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    assert plain.returncode == 0 and shown.returncode == 0, plain.stderr + shown.stderr
    times = offcpu_times(plain.stderr)
    assert times and times[1] > 200000, plain.stderr
    assert "[runnable" not in plain.stdout
    marked = [(fr, us) for fr, _, us in parse_folded(shown.stdout)
              if fr[-1] == "[runnable: waiting for a CPU]"]
    assert sum(us for _, us in marked) > 200000, shown.stdout[-2000:]
    assert any(frame_name(f) == "spin_on_cpu" for fr, _ in marked for f in fr)


def test_blocked_time_ends_at_wakeup(pyoffcpu, tmp_path):
    """A niced process sleeping 2 ms at a time among CPU hogs waits for a
    CPU after each wakeup: that wait is runnable time (shown with -R,
    marked at the leaf), not blocked time, which matches the sleeps asked
    for."""
    ncpu = os.cpu_count() or 2
    state_path = str(tmp_path / "state.json")
    out = str(tmp_path / "out.folded")
    sleeper = subprocess.Popen(["nice", "-n", "19", interpreters.HOST_PYTHON,
                                os.path.join(WORKLOADS, "wake_latency.py"), state_path, "1000"])
    spinners = []
    try:
        # the hogs start once the niced sleeper is ready: among them it gets
        # a few per mille of a CPU, too little to start an interpreter in
        # seconds on a loaded machine
        read_json(state_path, timeout=60, key="ready")
        spinners = [subprocess.Popen([interpreters.HOST_PYTHON, "-c", SPINNER, "60"])
                    for _ in range(2 * ncpu + 2)]
        tool = start_tool(pyoffcpu, ["-R", "-p", str(sleeper.pid), "-o", out,
                                     "--format", "folded"])
        os.kill(sleeper.pid, signal.SIGUSR1)
        truth = read_json(state_path, timeout=60, key="done")
        rc, _, err = finish(tool)  # ends with its target
    finally:
        sleeper.kill()
        for p in spinners:
            p.kill()
            p.wait()
    assert rc == 0, err
    # the precondition: the sleeps really took longer than asked (0.3 s
    # of 2 s: enough to tell blocked time from the wait for a CPU)
    assert truth["wall"] >= 1.15 * truth["requested"], truth
    with open(out, encoding="utf-8") as fp:
        rows = parse_folded(fp.read())
    blocked = runnable = 0
    for frames, _, us in rows:
        if not any(frame_name(f) == "nap_briefly" for f in frames):
            continue
        if frames[-1] == "[runnable: waiting for a CPU]":
            runnable += us
        else:
            blocked += us
    requested, wall = truth["requested"] * 1e6, truth["wall"] * 1e6
    # blocked: the sleeps asked for, their timer slack (5%), and not the
    # wait for a CPU after them (at most half of that may be taken for it)
    asleep = 1.05 * requested
    assert 0.97 * requested <= blocked <= asleep + 0.5 * max(0, wall - asleep), (
        blocked, runnable, truth)
    # the rest of the sleeps' wall time waited for a CPU
    assert runnable >= 0.5 * (wall - blocked), (blocked, runnable, truth)


@pytest.mark.serial  # (conftest.py: every Python process)
def test_system_wide_finds_processes_started_later(pyoffcpu, tmp_path):
    out = str(tmp_path / "out.folded")
    tool = start_tool(pyoffcpu, ["-o", out, "--format", "folded", "5"])
    code = "import time\ndef nap_started_later():\n    for _ in range(20): time.sleep(0.05)\n" \
           "nap_started_later()\n"
    r = subprocess.run([interpreters.HOST_PYTHON, "-c", code], timeout=60)
    rc, _, err = finish(tool)
    assert r.returncode == 0 and rc == 0, err
    with open(out, encoding="utf-8") as fp:
        per = blocked_by_leaf_function(parse_folded(fp.read()))
    assert abs(per.get("nap_started_later", 0) - 1000000) <= 150000, per


def test_svg_and_speedscope_are_weighted_in_microseconds(pyoffcpu, tmp_path):
    py = host_interp()
    svg, _, _ = run_known(py, pyoffcpu, tmp_path, ["--format", "svg"], cycles=5)
    assert svg.startswith("<?xml") and "Off-CPU Time Flame Graph" in svg
    assert "nap_in_sleep" in svg and " us" in svg
    doc, _, _ = run_known(py, pyoffcpu, tmp_path, ["--format", "speedscope"], cycles=5)
    data = json.loads(doc)
    assert all(p["unit"] == "microseconds" for p in data["profiles"])
    names = [f["name"] for f in data["shared"]["frames"]]
    assert any(n.startswith("wait_on_pipe") for n in names)


@pytest.mark.serial  # (conftest.py: every Python process)
def test_errors(pyoffcpu):
    sleeper = subprocess.Popen(["sleep", "100"])
    try:
        r = subprocess.run([pyoffcpu, "-p", str(sleeper.pid), "1"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120, universal_newlines=True)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert r.returncode == 1 and "is this a Python process?" in r.stderr, r.stderr
    r = subprocess.run([pyoffcpu, "-k", "1"], stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 2 and "kernel threads run no Python" in r.stderr
    r = subprocess.run([pyoffcpu, "-m", "10", "-M", "5", "1"], stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert r.returncode == 2 and "above -M" in r.stderr
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        pyoffcpu, "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60, universal_newlines=True)
    assert r.returncode == 1 and "must be run as root" in r.stderr


def test_target_exiting_mid_run(pyoffcpu):
    code = "import time\nend = time.time() + 8\nwhile time.time() < end: time.sleep(0.05)\n"
    proc = subprocess.Popen([interpreters.HOST_PYTHON, "-c", code])
    try:
        time.sleep(0.2)
        r = subprocess.run([pyoffcpu, "-f", "-p", str(proc.pid), "30"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120, universal_newlines=True)
    finally:
        proc.kill()
        proc.wait()
    assert r.returncode == 0, r.stderr
    assert "every target process has exited" in r.stderr
    assert sum(us for _, _, us in parse_folded(r.stdout)) > 100000


def test_pprof_output_is_off_cpu_time(pyoffcpu, tmp_path):
    """--format pprof: go tool pprof reads blocked time per function."""
    text_path = tempfile.mkdtemp(dir=str(tmp_path))
    script = host_interp().place(WORKLOAD)
    proc = host_interp().spawn([script, text_path, "20"])
    out = os.path.join(text_path, "off.pb.gz")
    try:
        read_json(os.path.join(text_path, "state.json"), key="ready")
        tool = start_tool(pyoffcpu, ["-p", str(proc.pid), "-o", out, "--format", "pprof"])
        with open(os.path.join(text_path, "go"), "w"):
            pass
        rc, _, err = finish(tool)
        assert rc == 0, err
        truth = read_json(os.path.join(text_path, "state.json"), key="truth")["truth"]
    finally:
        proc.kill()
    top = go_pprof(["-top", "-nodecount=200", out], tmp_path)
    assert "Type: off_cpu" in top, top
    cum = pprof_cum_ms(top)
    for f in FUNCS:
        want = truth[f] * 1000
        assert abs(cum.get(f, 0) - want) <= TOLERANCE * want, (f, cum.get(f), want, top)


STUCK = os.path.join(WORKLOADS, "stuck_threads.py")


def python_leaf(frames):
    """The innermost 'qualname (file:line)' frame of a folded row."""
    python = [f for f in frames if f.endswith(")") and " (" in f and not f.endswith("_[k]")]
    return python[-1] if python else None


def test_blocked_past_the_end_of_the_run(interp, pyoffcpu, tmp_path):
    """A thread blocked on a lock since before the run (no context switch
    for BPF to see) and one that blocks on it during the run are charged up
    to the end, at the acquire line, their stacks ending in [still
    blocked]: the whole run for the first, from when it blocked for the
    second."""
    seconds = 3
    script = interp.place(STUCK)
    scratch = interp.scratch(tempfile.mkdtemp(dir=str(tmp_path)))
    proc = interp.spawn([script, scratch.proc, "lock"])
    out = os.path.join(str(tmp_path), "stuck.folded")
    try:
        state = read_json(scratch.host_path("state.json"), key="ready")
        tool = start_tool(pyoffcpu, ["-p", str(proc.pid), "-o", out, "--format", "folded",
                                     str(seconds)])
        started = time.monotonic()  # the run began just before (seeding aside)
        time.sleep(0.5)
        with open(scratch.host_path("go"), "w"):
            pass
        rc, _, err = finish(tool)
        late_since = read_json(scratch.host_path("state.json"), key="late_since")["late_since"]
    finally:
        proc.kill()
        scratch.cleanup()
    assert rc == 0, err
    with open(out, encoding="utf-8") as fp:
        rows = parse_folded(fp.read())
    per = {}
    for frames, _, us in rows:
        leaf = python_leaf(frames)
        if leaf and frame_name(leaf) in ("blocked_from_start", "blocked_after_go"):
            per.setdefault(frame_name(leaf), []).append((frames, leaf, us))
    assert set(per) == {"blocked_from_start", "blocked_after_go"}, rows
    lines = {"blocked_from_start": state["lines"]["from start"],
             "blocked_after_go": state["lines"]["after go"]}
    for name, found in per.items():
        # every row of it is open at the end, at the acquire line
        for frames, leaf, us in found:
            assert frames[-1] == "[still blocked]", (name, frames)
            assert leaf == "%s (%s:%d)" % (name, script, lines[name]), (leaf, lines[name])
    whole = sum(us for _, _, us in per["blocked_from_start"])
    assert abs(whole - seconds * 1e6) <= 0.05 * seconds * 1e6, (whole, err)
    late = sum(us for _, _, us in per["blocked_after_go"])
    truth = (started + seconds - late_since) * 1e6
    assert abs(late - truth) <= 0.05 * seconds * 1e6, (late, truth, err)
    # BPF took the kernel stack of the one that blocked during the run
    assert any(f.endswith("_[k]") for frames, _, _ in per["blocked_after_go"]
               for f in frames), per["blocked_after_go"]
    m = re.search(r"pyoffcpu: (\d+) threads were still blocked when the run ended "
                  r"\((\d+) since before it began\)", err)
    assert m and int(m.group(1)) >= 2 and int(m.group(2)) >= 1, err


MANY_STACKS = ("import time\n"
               "for i in range(60):\n"
               "    exec('def nap_%02d():\\n    time.sleep(0.002)\\n' % i)\n"
               "naps = [globals()['nap_%02d' % i] for i in range(60)]\n"
               "end = time.time() + float(__import__('sys').argv[1])\n"
               "while time.time() < end:\n"
               "    for nap in naps:\n"
               "        nap()\n")
TEXT_STACK_END = re.compile(r"^    -\s+\S.* \((\d+)\)\n        (\d+)$", re.M)


def test_text_output_is_bounded(pyoffcpu, tmp_path):
    """Text for people shows the 20 stacks with the most time and says how
    many it left out and with how much time (and how to see them); --top N
    and --all change that; folded output keeps every stack."""
    proc = subprocess.Popen([interpreters.HOST_PYTHON, "-c", MANY_STACKS, "600"])
    try:
        time.sleep(0.3)
        runs = {}
        for name, args in (("default", []), ("top5", ["--top", "5"]), ("all", ["--all"]),
                           ("folded", ["-f"])):
            runs[name] = subprocess.run([pyoffcpu, "-U", "-p", str(proc.pid)] + args + ["2"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        timeout=300, universal_newlines=True)
            assert runs[name].returncode == 0, runs[name].stderr
    finally:
        proc.kill()
        proc.wait()
    folded = parse_folded(runs["folded"].stdout)
    naps = {frame_name(python_leaf(fr)) for fr, _, _ in folded if python_leaf(fr)}
    assert len([n for n in naps if n.startswith("nap_")]) == 60, naps  # all of them
    for name, shown in (("default", 20), ("top5", 5)):
        out = runs[name].stdout
        values = [int(v) for _, v in TEXT_STACK_END.findall(out)]
        assert len(values) == shown, out[-3000:]
        assert values == sorted(values), values  # bcc's order: the most time last
        m = re.search(r"^\((\d+) more stacks with less time, (%s) in all \(([\d.]+)%%\), "
                      r"not shown: --all shows every stack" % DURATION, out, re.M)
        assert m, out[:2000]
        assert int(m.group(1)) >= 60 - shown, m.group(0)  # 60 naps, and more
        # shown and left out make the whole, and what was left out had less
        # time than anything shown
        omitted = duration_us(m.group(2))
        blocked = offcpu_times(runs[name].stderr)[0]
        assert abs(sum(values) + omitted - blocked) <= 0.01 * blocked, (values, omitted, blocked)
        # (both read from rounded figures)
        assert omitted / blocked == pytest.approx(float(m.group(3)) / 100, abs=0.01)
        assert omitted <= int(m.group(1)) * values[0], (omitted, values[0])
    everything = TEXT_STACK_END.findall(runs["all"].stdout)
    assert len(everything) > 60 and "more stacks" not in runs["all"].stdout
