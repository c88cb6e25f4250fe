"""pydump --async against real asyncio programs, over the interpreter matrix.

Ground truth comes from the workload itself (tests/workloads/asyncio_tasks.py):
its tasks, each one's coroutine chain (cr_await followed from the task's
coroutine), Task.get_stack(), and which tasks each awaits (by construction),
written to a JSON file before the task "spinner" spins forever. pydump's tree
must match it exactly. Run with:

    /usr/bin/python3 -m pytest -p no:cacheprovider -q tests/test_asyncio.py
"""
import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from profiling import intervals_not_placed

TIMEOUT = 20
WORKLOADS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads")

TASK_RE = re.compile(r"^(?P<indent>[│├└─ ]*)\(T\) (?P<name>\S+) \[(?P<state>[^\]]+)\]"
                     r"(?: awaiting (?P<awaits>task \S+|gather|TaskGroup|future))?"
                     r"(?P<py> \(Python Task\))?(?: \[(?P<ref>see above|cycle)\])?$")
FRAME_RE = re.compile(r"^[│ ]+(?P<frame>\S.* \(.*:(?:\d+|\?)\))$")
HEADER_RE = re.compile(r"^asyncio: (\d+) tasks?, (?:event loop running in thread ([\d, ]+)|"
                       r"no event loop running) \[offsets: (asyncio debug offsets|dwarf|table)\]$")


def run(argv):
    cp = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    return cp.returncode, cp.stdout.decode("utf-8"), cp.stderr.decode("utf-8", "replace")


class Tree:
    """pydump's task tree: each task line (first appearance and references)
    with its depth, parent and frames."""

    def __init__(self, text):
        lines = text.split("\n")
        start = [i for i, line in enumerate(lines) if line.startswith("asyncio: ")]
        assert len(start) == 1, "no single 'asyncio:' line in:\n" + text
        self.header = lines[start[0]]
        self.tasks = {}       # name -> first (non-reference) entry
        self.entries = []     # every task line, in order
        stack = []            # entries on the path to the current line
        for line in lines[start[0] + 1:]:
            if not line:
                continue
            m = TASK_RE.match(line)
            if m:
                depth = len(m.group("indent")) // 4 - 1  # the connector is 4 wide
                stack = stack[:depth]
                entry = {"name": m.group("name"), "state": m.group("state"),
                         "awaits": m.group("awaits"), "python": bool(m.group("py")),
                         "ref": m.group("ref"), "frames": [],
                         "parent": stack[-1]["name"] if stack else None}
                assert len(stack) == depth, "task line deeper than its parent: %r" % line
                self.entries.append(entry)
                if not entry["ref"]:
                    assert entry["name"] not in self.tasks, "task printed twice: %r" % line
                    self.tasks[entry["name"]] = entry
                stack.append(entry)
                continue
            m = FRAME_RE.match(line)
            assert m and stack, "neither a task nor a frame line: %r" % line
            stack[-1]["frames"].append(m.group("frame"))

    def edges(self):
        return {(e["parent"], e["name"]) for e in self.entries if e["parent"]}


def frame_line(frame):
    name, filename, lineno = frame
    return "%s (%s:%s)" % (name, filename, lineno)


@contextlib.contextmanager
def workload(interp, host_tmp, *args):
    """asyncio_tasks.py OUT.json [args] under interp; yields (proc, truth)."""
    scratch = interp.scratch(host_tmp)
    stderr_path = os.path.join(str(host_tmp), "workload.stderr")
    proc = None
    try:
        script = interp.place(os.path.join(WORKLOADS, "asyncio_tasks.py"))
        with open(stderr_path, "wb") as err:
            proc = interp.spawn([script, scratch.proc_path("out.json")] + list(args), stderr=err)
        out = scratch.host_path("out.json")
        deadline = time.monotonic() + TIMEOUT + (float(args[1]) if args else 0)
        while not os.path.exists(out):
            if not proc.alive() or time.monotonic() > deadline:
                with open(stderr_path, errors="replace") as fp:
                    pytest.fail("asyncio_tasks.py on %s wrote no %s; stderr:\n%s" % (
                        interp.id, out, fp.read()))
            time.sleep(0.05)
        with open(out, encoding="utf-8") as fp:
            truth = json.load(fp)
        proc.pid
        yield proc, truth
    finally:
        if proc is not None:
            proc.kill()
        scratch.cleanup()


def needs_asyncio_support(interp):
    if tuple(interp.version[:2]) < (3, 11):
        pytest.skip("asyncio tasks are read on 3.11+ (checked by test_old_versions_refused)")


@pytest.fixture(scope="module")
def parked(interp, pydump, tmp_path_factory):
    """The park workload under interp and pydump --async's view of it."""
    needs_asyncio_support(interp)
    with workload(interp, tmp_path_factory.mktemp("asyncio-" + interp.id)) as (proc, truth):
        rc, out, err = run([pydump, "--async", "-p", str(proc.pid)])
        yield proc, truth, rc, out, err


def test_pydump_async_succeeds(parked):
    proc, truth, rc, out, err = parked
    assert rc == 0, "pydump --async failed (rc %d):\n%s\n%s" % (rc, err, out)
    assert HEADER_RE.match(Tree(out).header), Tree(out).header


def test_every_task_listed_once(parked):
    """Exactly the tasks the program has, each printed in full once."""
    proc, truth, rc, out, err = parked
    tree = Tree(out)
    assert sorted(tree.tasks) == sorted(t["name"] for t in truth["tasks"]), out
    assert int(HEADER_RE.match(tree.header).group(1)) == len(truth["tasks"])


def test_await_edges_match(parked):
    """Who awaits whom: a chain (chain-a -> chain-b -> chain-c), a diamond (top ->
    left, right -> bottom, bottom printed once and referred to after), gather,
    a TaskGroup, pure-Python tasks, and a second event loop in another thread."""
    proc, truth, rc, out, err = parked
    tree = Tree(out)
    want = {(t["name"], a) for t in truth["tasks"] for a in t["awaits"]}
    assert tree.edges() == want, "edges differ:\nmissing %s\nextra %s\n%s" % (
        sorted(want - tree.edges()), sorted(tree.edges() - want), out)
    refs = [e["name"] for e in tree.entries if e["ref"]]
    assert refs == ["bottom"], "only the diamond's bottom is referred to again: %s" % refs
    assert [e["ref"] for e in tree.entries if e["ref"]] == ["see above"]


def test_await_kinds(parked):
    proc, truth, rc, out, err = parked
    tasks = Tree(out).tasks
    assert tasks["chain-a"]["awaits"] == "task chain-b"
    assert tasks["left"]["awaits"] == "task bottom"
    assert tasks["top"]["awaits"] == "gather"
    assert tasks["gatherer"]["awaits"] == "gather"
    assert tasks["main"]["awaits"] == "TaskGroup"
    assert tasks["py-waiter"]["awaits"] == "task py-sleeper"
    for name in ("crawler-1", "chain-c", "bottom", "gather-2", "py-sleeper", "other-sleeper"):
        assert tasks[name]["awaits"] == "future", name
    assert tasks["spinner"]["awaits"] is None


def test_coroutine_chains_match(parked):
    """Each suspended task's coroutines, innermost first, with the lines the
    program's own frames report (f_lineno), and the outermost one is what
    Task.get_stack() gives."""
    proc, truth, rc, out, err = parked
    tasks = Tree(out).tasks
    for t in truth["tasks"]:
        if t["name"] == "spinner":
            continue
        got = tasks[t["name"]]["frames"]
        assert got == [frame_line(f) for f in t["chain"]], "chain of %s:\n%s" % (t["name"], out)
        assert got[-1] == frame_line(t["stack"][0]), "get_stack() of %s" % t["name"]


def test_running_task_marked(parked):
    """The spinner runs on the main thread's loop (its line is where it spins);
    the other loop's thread runs none; both loops' threads are named."""
    proc, truth, rc, out, err = parked
    tree = Tree(out)
    spinner = tree.tasks["spinner"]
    assert spinner["state"] == "running in thread %d" % proc.pid, out
    spin = [t for t in truth["tasks"] if t["name"] == "spinner"][0]
    assert spinner["frames"] == ["spin (%s:%d)" % (spin["chain"][0][1], truth["spin_line"])]
    running = [e["name"] for e in tree.tasks.values() if e["state"].startswith("running")]
    assert running == ["spinner"], out
    loops = HEADER_RE.match(tree.header).group(2)
    assert loops is not None and len(loops.split(", ")) == 2, tree.header
    assert str(proc.pid) in loops.split(", ")
    for name, e in tree.tasks.items():
        if name != "spinner":
            assert e["state"] == "pending", (name, e["state"])


def test_python_tasks_marked(parked):
    proc, truth, rc, out, err = parked
    tasks = Tree(out).tasks
    for t in truth["tasks"]:
        assert tasks[t["name"]]["python"] == t["python_task"], t["name"]


def test_offsets_source(parked, interp):
    """3.14+ read _asyncio's own debug offsets; older builds the extension's
    DWARF (pyenv) or the generated table."""
    proc, truth, rc, out, err = parked
    source = HEADER_RE.match(Tree(out).header).group(3)
    if tuple(interp.version[:2]) >= (3, 14):
        assert source == "asyncio debug offsets"
    elif interp.kind == "pyenv":
        assert source == "dwarf"
    else:
        assert source == "table"


@pytest.mark.parametrize("code", ["import time; print('ready', flush=True); time.sleep(60)",
                                  "import asyncio, time; print('ready', flush=True); time.sleep(60)"],
                         ids=["no-asyncio", "asyncio-imported"])
def test_no_event_loop(interp, pydump, code):
    """A process without a running event loop or tasks: one line."""
    needs_asyncio_support(interp)
    proc = interp.spawn(["-c", code], stdout=subprocess.PIPE)
    try:
        assert proc.popen.stdout.readline().strip() == b"ready"
        rc, out, err = run([pydump, "--async", "-p", str(proc.pid)])
        assert rc == 0, err
        assert out.rstrip("\n").split("\n")[-1] == "asyncio: no event loop", out
        assert out.count("asyncio:") == 1
    finally:
        proc.kill()


def test_old_versions_refused(interp, pydump):
    """3.8-3.10: the thread stacks, then a clear refusal for the tasks."""
    if tuple(interp.version[:2]) >= (3, 11):
        pytest.skip("supported version")
    proc = interp.spawn(["-c", "import time; print('ready', flush=True); time.sleep(60)"],
                        stdout=subprocess.PIPE)
    try:
        assert proc.popen.stdout.readline().strip() == b"ready"
        rc, out, err = run([pydump, "--async", "-p", str(proc.pid)])
        assert rc == 1
        assert out.startswith("Process %d " % proc.pid)
        assert "asyncio tasks are read on CPython 3.11 and newer" in err
    finally:
        proc.kill()


# ----------------------------------------------------------------- pyprofile --async

SHARE_TOLERANCE = 0.07  # absolute share, per task
BURNERS = ("burner-1", "burner-2", "burner-3")
# what a burner's samples must be rooted in, outermost first, by frame name
ROOTS = {
    "burner-1": ["<task main>", "cpu_main", "TaskGroup.__aexit__", "<task burner-1>"],
    "burner-2": ["<task main>", "cpu_main", "TaskGroup.__aexit__", "<task burner-2>"],
    "burner-3": ["<task main>", "cpu_main", "TaskGroup.__aexit__", "<task parent>", "child_of",
                 "<task burner-3>"],
}


# pyprofile --async samples at 997 Hz until the workload has had 2 s of CPU
# time, however many other runs share the CPUs; 60 s at most. About 2,000
# samples, 1,600 when steal takes a fifth: SHARE_TOLERANCE is then 5.6
# standard deviations of the largest share (a half; at 398 Hz, 3.5)
PROFILE_HZ = 997
PROFILE_CPU = 2.0
RUN_CAP = 60


def profile_tasks(interp, pyprofile, host_tmp, extra, fmt="folded"):
    """pyprofile -F PROFILE_HZ [extra] on the cpu workload until it had
    PROFILE_CPU seconds of CPU; returns (folded rows, the workload's own CPU
    per task over the same window, stderr); in another format, the file's
    path in place of the rows."""
    from profiling import cpu_seconds, parse_folded, read_json, run_until
    script = interp.place(os.path.join(WORKLOADS, "asyncio_tasks.py"))
    scratch = interp.scratch(host_tmp)
    out = os.path.join(str(host_tmp), "out." + fmt)
    proc = interp.spawn([script, scratch.proc_path("state.json"), "cpu"])
    try:
        read_json(scratch.host_path("state.json"), key="ready")
        # the truth starts and ends with sampling
        _, err, _ = run_until(pyprofile, ["-F", str(PROFILE_HZ), "-p", str(proc.pid), "-o", out,
                                          "--format", fmt] + extra, proc.pid, cpu_seconds,
                              PROFILE_CPU, RUN_CAP,
                              started=lambda: os.kill(proc.pid, signal.SIGUSR1),
                              stopping=lambda: os.kill(proc.pid, signal.SIGUSR2))
        truth = read_json(scratch.host_path("state.json"), key="frozen")
    finally:
        proc.kill()
        scratch.cleanup()
    if fmt != "folded":
        return out, truth, err
    with open(out, encoding="utf-8") as fp:
        rows = parse_folded(fp.read())
    return rows, truth, err


def names(frames):
    """The Python frames' names and the markers, in order: the native frames
    between coroutines (PyIter_Send and the like, before 3.12) left out."""
    return [f.rsplit(" (", 1)[0] for f in frames
            if f.startswith(("<", "[")) or (f.endswith(")") and " (" in f)]


def task_of(frames):
    """The innermost <task ...> frame of a stack, or None."""
    tasks = [f for f in names(frames) if f.startswith("<task ")]
    return tasks[-1][len("<task "):-1] if tasks else None


@pytest.fixture(scope="module")
def profiled(async_runs):
    return async_runs["profiled"].result()


def test_pyprofile_async_roots_samples_in_tasks(profiled):
    """Every sample of a burner's burst is rooted in its task's await chain:
    the tasks awaiting it and their coroutines, then <task NAME>, then the
    task's own frames; the event loop's frames below a task are gone."""
    rows, truth, err = profiled
    burning = [(fr, c) for fr, _, c in rows if "burn" in names(fr)]
    assert sum(c for _, c in burning) >= 300, "too few samples:\n%s" % err
    unrooted = sum(c for fr, c in burning if task_of(fr) is None)
    assert unrooted <= 0.02 * sum(c for _, c in burning), (unrooted, err)
    for fr, c in burning:
        task = task_of(fr)
        if task is None:
            continue
        n = names(fr)
        want = ROOTS[task]
        got = [x for x in n[:n.index("<task %s>" % task) + 1]
               if x.startswith("<task ") or x in want]
        assert got == want, "root of %s: %s" % (task, fr)
        assert n[n.index("<task %s>" % task) + 1:][:3] == ["burner", "burst", "burn"], fr
        assert "Handle._run" not in n and "BaseEventLoop.run_forever" not in n, fr
    assert "--async:" in err and "asyncio tasks named" in err, err


def test_pyprofile_async_shares_match_truth(profiled, interp):
    """Each task's share of the burning samples is within a few points of the
    CPU the task measured itself."""
    rows, truth, err = profiled
    counted = {t: 0 for t in BURNERS}
    for fr, _, c in rows:
        if "burn" in names(fr) and task_of(fr) in counted:
            counted[task_of(fr)] += c
    total = sum(counted.values())
    spent = truth["spent"]
    assert min(truth["calls"][t] for t in BURNERS) >= 10, truth
    print("async shares %s: %d samples; %s" % (interp.id, total, ", ".join(
        "%s %.1f%%, truth %.1f%%" % (t, 100.0 * counted[t] / total,
                                     100.0 * spent[t] / sum(spent[x] for x in BURNERS))
        for t in BURNERS)))
    for t in BURNERS:
        got, want = counted[t] / total, spent[t] / sum(spent[x] for x in BURNERS)
        assert abs(got - want) <= SHARE_TOLERANCE, "%s: %.1f%% of samples, truth %.1f%% (%s, %s)" % (
            t, 100 * got, 100 * want, counted, spent)


def test_pyprofile_without_async_has_no_task_frames(interp, async_runs):
    """The same program without --async: stacks as before, from the loop."""
    needs_asyncio_support(interp)
    if interp.kind != "host":
        pytest.skip("one interpreter is enough for the default path")
    rows, truth, err = async_runs["plain"].result()
    assert not any(task_of(fr) for fr, _, _ in rows)
    assert "--async" not in err
    burning = [names(fr) for fr, _, _ in rows if "burn" in names(fr)]
    assert burning and all("Handle._run" in n for n in burning)


def test_pprof_samples_carry_their_task(interp, async_runs, tmp_path):
    """pprof with --async: every sample rooted in a task carries the label
    task with that task's name, as go tool pprof (default options) reads
    it; the burners' samples carry their own burner's."""
    needs_asyncio_support(interp)
    if interp.kind != "host":
        pytest.skip("one interpreter is enough: the label is the pprof writer's")
    go = shutil.which("go") or ("/usr/bin/go" if os.path.exists("/usr/bin/go") else None)
    if not go:
        pytest.skip("go tool pprof not installed (golang-go)")
    out, truth, err = async_runs["pprof"].result()
    env = dict(os.environ, HOME=str(tmp_path), GOCACHE=str(tmp_path / "gocache"), GOFLAGS="")
    r = subprocess.run([go, "tool", "pprof", "-traces", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    checked = 0
    for block in r.stdout.split("-----------+")[1:]:
        labels = dict(re.findall(r"^\s*(\w+):\s+(.+?)\s*$", block, re.M))
        frames = re.findall(r"^\s*(?:[\d.]+\w*\s+)?(\S.*?)\s*$", block, re.M)
        tasks = [f[len("<task "):-1] for f in frames if f.startswith("<task ")]
        if not tasks:
            assert "task" not in labels, block
            continue
        # -traces lists a stack leaf first: its first <task> is the innermost
        assert labels.get("task") == tasks[0], block
        if "burn" in frames:
            assert labels["task"] in BURNERS, block
            checked += 1
    assert checked >= 3, r.stdout[:3000]


# ----------------------------------------------------------------- pyoffcpu --async


def offcpu_tasks(interp, pyoffcpu, tmp_path):
    """pyoffcpu --async for 4 s on the block workload: (folded rows, the
    time each task measured itself blocked over the same window, stderr).
    The window's ends are signalled to the workload as tracing starts and
    just before it stops (not once the tool has reported, later on a loaded
    machine: with runs at once at load 20, the truth once covered 9.4 s of
    blocking, the 4 s traced 2.3 s, and the shares parted by 13 points)."""
    from profiling import parse_folded, read_json, run_until, wall_seconds
    script = interp.place(os.path.join(WORKLOADS, "asyncio_tasks.py"))
    scratch = interp.scratch(tmp_path)
    out = str(tmp_path / "off.folded")
    proc = interp.spawn([script, scratch.proc_path("state.json"), "block"])
    try:
        read_json(scratch.host_path("state.json"), key="ready")
        _, err, _ = run_until(pyoffcpu, ["--async", "-p", str(proc.pid), "-o", out,
                                         "--format", "folded"], proc.pid, wall_seconds, 4, 60,
                              started=lambda: os.kill(proc.pid, signal.SIGUSR1),
                              stopping=lambda: os.kill(proc.pid, signal.SIGUSR2))
        truth = read_json(scratch.host_path("state.json"), key="frozen")["blocked"]
    finally:
        proc.kill()
        scratch.cleanup()
    with open(out, encoding="utf-8") as fp:
        return parse_folded(fp.read()), truth, err


def test_pyoffcpu_async_blocking_tasks(async_runs):
    """Tasks that block their event loop in time.sleep (10 and 20 ms at a
    time): pyoffcpu --async charges the blocked time to each task, rooted in
    its await chain, in the shares the tasks measured themselves."""
    rows, truth, err = async_runs["blocking"].result()
    blocking = [(fr, us) for fr, _, us in rows if "block_once" in names(fr)]
    total = sum(us for _, us in blocking)
    assert total >= 1000000, "less than 1 s blocked in block_once:\n%s" % err
    rooted = {"blocker-1": 0, "blocker-2": 0}
    for fr, us in blocking:
        task = task_of(fr)
        if task in rooted:
            rooted[task] += us
            n = names(fr)
            assert n[:n.index("<task %s>" % task) + 1] == [
                "<task main>", "block_main", "TaskGroup.__aexit__", "<task %s>" % task] or \
                [x for x in n if x.startswith("<task ") or x in (
                    "block_main", "TaskGroup.__aexit__")][:4] == [
                "<task main>", "block_main", "TaskGroup.__aexit__", "<task %s>" % task], fr
            assert n[n.index("<task %s>" % task) + 1:][:2] == ["blocker", "block_once"], fr
    assert sum(rooted.values()) >= 0.98 * total, (rooted, total, err)
    for t in rooted:
        got = rooted[t] / sum(rooted.values())
        want = truth[t] / sum(truth.values())
        assert abs(got - want) <= SHARE_TOLERANCE, "%s: %.1f%% of blocked time, truth %.1f%% (%s, %s)" % (
            t, 100 * got, 100 * want, rooted, truth)


# ----------------------------------------------------------------- per-request tasks

REQUESTS = 30
REQUEST_SECONDS = {"cpu": 0.15, "block": 0.1}
REQUEST_TOLERANCE = 0.10  # of each task's own time (pyoffcpu: timed, not sampled)
REQUEST_SIGMAS = 3.5  # pyprofile: samples of a task spread as a Poisson count's
REQUEST_SAMPLED_FLOOR = 0.25  # pyprofile, one task: of what its CPU time predicts


def sequential_tasks(tool, mode, interp, tmp_path):
    """TOOL --async on async_requests.py in MODE, from before its first
    request to its end: (folded text, stderr, each task's own time)."""
    from conftest import tool_path
    from profiling import run_on_cue
    # pyoffcpu -R: the truth (time.monotonic() around the sleep) includes
    # the wait for a CPU after each wake-up
    args = ["--async", "--format", "folded"] + (["-F", "499"] if mode == "cpu" else ["-R"])
    return run_on_cue(
        interp, tool_path(tool), os.path.join(WORKLOADS, "async_requests.py"), tmp_path, args,
        workload_args=[mode, str(REQUESTS), str(REQUEST_SECONDS[mode])],
        truth=("truth.json", "spent"), settle=1)


def test_sequential_tasks_keep_their_names_pyprofile(async_runs):
    """On CPU: see check_sequential_tasks."""
    check_sequential_tasks(async_runs, "cpu")


def test_sequential_tasks_keep_their_names_pyoffcpu(async_runs):
    """Blocking the loop: see check_sequential_tasks."""
    check_sequential_tasks(async_runs, "block")


# (two tests, not one parametrized by the tool: pytest would order some of
# a parametrized test's items after the next interpreter's, and run the
# module-scoped runs of an interpreter twice)
def check_sequential_tasks(async_runs, mode):
    """Tasks req-0..req-29 made one after another, as a server makes one
    per request, each spending its time in one step (on CPU, or blocking
    its loop in time.sleep) through a function named after it (req_0 ..):
    a new task's coroutine is often made where the last one's was freed,
    and must not be charged to it. No sample of a task's function is
    named after another task, every task is there under its own name, and
    next to nothing is left unnamed. pyoffcpu: each task's time is within
    10% of what it measured itself. pyprofile: each task has at least a
    quarter of the samples its CPU time predicts (about 75): on a loaded
    machine a thread's share of a CPU's timer ticks strays from its CPU
    time further than a Poisson count's (43 to 109 over 30 tasks, beside
    four busy loops, with no sample misnamed), so the exact check is the
    one on names."""
    from profiling import parse_folded
    text, err, truth = async_runs["sequential-" + mode].result()
    truth = truth["spent"]
    got, unnamed, deep = {}, 0, 0
    for fr, _, value in parse_folded(text):
        n = names(fr)
        if "request" not in n:
            continue
        task = task_of(fr)
        if task is None:
            unnamed += value
            continue
        own = n[n.index("<task %s>" % task):]
        assert own[:2] == ["<task %s>" % task, "request"], fr
        # the frame below the coroutine, if the sample caught one, is the task's own
        assert own[2:3] in ([], [task.replace("-", "_")]), fr
        got[task] = got.get(task, 0) + value
        deep += value if own[2:3] else 0
    # a task spends its time in one interval off CPU (block): where the kernel
    # reported neither its return to a CPU nor its wake-up, pyoffcpu cannot
    # place that interval and counts it apart, and the task may be missing
    lost = intervals_not_placed(err) if mode == "block" else 0
    missing = sorted(set(truth) - set(got))
    assert not set(got) - set(truth) and len(missing) <= lost, \
        "tasks reported: %s, missing %s (%d intervals not counted)\n%s" % (
            sorted(got), missing, lost, err)
    total = sum(got.values())
    assert unnamed <= 0.02 * (total + unnamed), (unnamed, total, err)
    assert deep >= 0.9 * total, "the tasks' own functions are missing: %d of %d\n%s" % (
        deep, total, text)
    # pyoffcpu counts microseconds; pyprofile samples, each task's share of them
    scale = 1e6 if mode == "block" else total / sum(truth.values())
    for task, seconds in truth.items():
        if task in missing:
            continue
        want = seconds * scale
        if mode == "cpu":
            assert got[task] >= REQUEST_SAMPLED_FLOOR * want, \
                "%s: %d, truth %d (%s)\n%s" % (task, got[task], want, got, err)
            continue
        assert abs(got[task] - want) <= REQUEST_TOLERANCE * want, \
            "%s: %d, truth %d (%s)\n%s" % (task, got[task], want, got, err)


# many short requests, half of them in each handler: some end before the
# tool reads them, and are grouped by the coroutine their samples read
GROUPED_REQUESTS = 100
GROUPED_SECONDS = {"cpu": 0.02, "block": 0.01}


@pytest.mark.parametrize("tool,mode", [("pyprofile", "cpu"), ("pyoffcpu", "block")])
def test_tasks_grouped_by_coroutine(interp, tool, mode, tmp_path):
    """--group-tasks coroutine on short per-request tasks run by two handlers
    in turn (request, admin_request): each task frame names its coroutine,
    "<task QUALNAME>" with the coroutine's own frame next, so the requests
    of one handler share one root; each handler's time is within 10% of
    what its requests measured (pyprofile: and a sampled count's spread),
    none is charged to the other, next to nothing is left unnamed, and the
    summary counts the roots the report has."""
    from conftest import tool_path
    from profiling import parse_folded, run_on_cue
    needs_asyncio_support(interp)
    args = ["--group-tasks", "coroutine", "--format", "folded"] + (
        ["-F", "499"] if mode == "cpu" else ["-R"])
    text, err, truth = run_on_cue(
        interp, tool_path(tool), os.path.join(WORKLOADS, "async_requests.py"), tmp_path, args,
        workload_args=[mode, str(GROUPED_REQUESTS), str(GROUPED_SECONDS[mode]), "2"],
        truth=("truth.json", "spent"), settle=1)
    handlers = sorted(set(truth["coroutine"].values()))
    assert handlers == ["admin_request", "request"], truth
    want = {h: sum(s for t, s in truth["spent"].items() if truth["coroutine"][t] == h)
            for h in handlers}
    spend = "burn" if mode == "cpu" else "block"
    got, unnamed, roots = {}, 0, set()
    for fr, _, value in parse_folded(text):
        n = names(fr)
        group = task_of(fr)
        if group is not None:
            roots.add(group)
        ran = [h for h in handlers if h in n]
        # what the truth measured: pyoffcpu also counts a request preempted
        # outside it, which a loaded machine makes large
        if not ran or spend not in n:
            continue
        if group not in handlers:  # no task, or "[unknown coroutine]"
            unnamed += value
            continue
        # the root names the coroutine that ran, and its frame follows
        assert ran == [group] and n[n.index("<task %s>" % group) + 1] == group, fr
        got[group] = got.get(group, 0) + value
    assert sorted(got) == handlers, (got, err)
    total = sum(got.values())
    assert unnamed <= 0.02 * (total + unnamed), (unnamed, total, err)
    m = re.search(r"--async: \d+ asyncio tasks? named, in (\d+) groups? by coroutine", err)
    assert m and int(m.group(1)) == len(roots), (sorted(roots), err)
    # pyoffcpu: an interval it could not place (counted apart), or whose
    # runnable time after its wake-up it could not see, misses at most one
    # request's time (what the request measured includes that wait)
    lost = intervals_not_placed(err, ended_at_wakeup=True) if mode == "block" else 0
    scale = 1e6 if mode == "block" else total / sum(want.values())
    for h in handlers:
        expect = want[h] * scale
        spread = REQUEST_SIGMAS * math.sqrt(expect) if mode == "cpu" else 0
        slack = lost * max(truth["spent"].values()) * scale
        assert got[h] <= expect * (1 + REQUEST_TOLERANCE) + spread and \
            got[h] >= expect * (1 - REQUEST_TOLERANCE) - spread - slack, \
            "%s: %d, truth %d (%s)\n%s" % (h, got[h], expect, got, err)


# ----------------------------------------------------------------- the runs, at once

@pytest.fixture(scope="module")
def async_runs(interp, pyprofile, pyoffcpu, tmp_path_factory):
    """The runs of pyprofile --async and pyoffcpu --async on INTERP, made at
    once on workloads of their own: {name: future of its result}. Each test
    asserts on its own run as before (a run that fails fails its own test):
    their truth is what the workload measured over the same window (CPU or
    blocked time per task), and pyprofile's first run lasts until its
    workload had the CPU its samples need, so the runs sharing the CPUs
    change how long they take, not what they are checked against."""
    from profiling import at_once
    needs_asyncio_support(interp)
    tmp = {name: tmp_path_factory.mktemp("async-%s-%s" % (name, interp.id))
           for name in ("prof", "off", "seq-cpu", "seq-block", "plain", "pprof")}
    runs = {
        "profiled": lambda: profile_tasks(interp, pyprofile, tmp["prof"], ["--async"]),
        "sequential-cpu": lambda: sequential_tasks("pyprofile", "cpu", interp, tmp["seq-cpu"]),
        "sequential-block": lambda: sequential_tasks("pyoffcpu", "block", interp,
                                                     tmp["seq-block"]),
    }
    if interp.kind == "host":  # the tests of the default path and of pprof's labels
        runs["plain"] = lambda: profile_tasks(interp, pyprofile, tmp["plain"], [])
        runs["pprof"] = lambda: profile_tasks(interp, pyprofile, tmp["pprof"], ["--async"],
                                              fmt="pprof")
    done = at_once(runs)
    # then alone, as before: beside the others, at load 20, pyoffcpu
    # --async twice charged blocker-1 a third of the blocked time where it
    # measured a half (host-3.11; over the same window)
    done.update(at_once({"blocking": lambda: offcpu_tasks(interp, pyoffcpu, tmp["off"])}))
    return done


# ----------------------------------------------------------------- the generated table

@pytest.mark.parametrize("version", ["3.11.7", "3.12.1", "3.13.0"])
def test_asyncio_table_matches_dwarf_builds(version):
    """lib/cpython/asyncio_table.inc says for 3.11-3.13 what the pyenv builds'
    headers and _asyncio's DWARF say (offsets/asyncio_generate.py --check)."""
    from interpreters import PYENV_VERSIONS
    minor = version.rsplit(".", 1)[0]
    root = os.path.join(PYENV_VERSIONS, version)
    include = os.path.join(root, "include", "python" + minor)
    so = [f for f in os.listdir(os.path.join(root, "lib", "python" + minor, "lib-dynload"))
          if f.startswith("_asyncio.")] if os.path.isdir(root) else []
    if not os.path.isdir(include) or not so or not shutil.which("gdb") or not shutil.which("gcc"):
        pytest.skip("no pyenv %s with headers and _asyncio, or no gdb/gcc" % version)
    so = os.path.join(root, "lib", "python" + minor, "lib-dynload", so[0])
    script = os.path.join(os.path.dirname(WORKLOADS), "..", "offsets", "asyncio_generate.py")
    cp = subprocess.run([sys.executable, script, "--check", "%s=%s,%s" % (minor, include, so)],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                        timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "matches for %s" % minor in cp.stdout
