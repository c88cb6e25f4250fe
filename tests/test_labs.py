"""The labs of examples/labs work as their answer keys say: each lab
program runs under its tool on the distributions' interpreters (the ones a
class meets), and what the tool shows is compared with what the program
measured itself (its --truth file)."""
import json
import os
import re
import subprocess
import threading
import time

import pytest

from conftest import REPO, tool_path
import interpreters
from profiling import (blocked_seconds, cpu_seconds, frame_name, parse_folded, read_json, run_until,
                       wall_seconds)
from test_pygil import ROW

LABS = os.path.join(REPO, "examples", "labs")


def lab_params():
    """Host and chroot interpreters (no pyenv builds, no PID namespace)."""
    matrix, _ = interpreters.discover()
    params = []
    for e in matrix:
        if isinstance(e, interpreters.Unavailable):
            if not e.id.startswith("pyenv"):
                params.append(pytest.param(e, id=e.id, marks=pytest.mark.skip(reason=e.reason)))
        elif e.kind != "pyenv" and not e.pidns:
            params.append(pytest.param(e, id=e.id))
    return params


def start_lab(interp, tmp_path, lab, script, args):
    """Starts a lab program with --truth; returns (process, truth path on the host)."""
    path = interp.place(os.path.join(LABS, lab, script))
    scratch = interp.scratch(tmp_path)
    proc = interp.spawn([path, "--truth", scratch.proc_path("truth.json")] + args)
    return proc, scratch


def follow_truth(path, readings, done):
    """Appends each new content of the program's truth file to READINGS, as
    (when it was read, content), until DONE is set."""
    while not done.is_set():
        try:
            with open(path) as fp:
                reading = json.load(fp)
            if not readings or reading["wall"] != readings[-1][1]["wall"]:
                readings.append((time.monotonic(), reading))
        except (OSError, ValueError):
            pass
        time.sleep(0.02)


def written(readings):
    """[(when it was written, content)] of READINGS: a reading's "wall" is
    the seconds since the program started on the clock of time.monotonic(),
    which the soonest any was read after its writing places."""
    offset = min(seen - r["wall"] for seen, r in readings)
    return [(r["wall"] + offset, r) for _, r in readings]


def interpolate(readings, t):
    """The truth at time T (time.monotonic()), between the two readings
    written either side of it."""
    points = written(readings)
    i = min(max((i for i, (w, _) in enumerate(points) if w <= t), default=0), len(points) - 2)
    (w0, r0), (w1, r1) = points[i], points[i + 1]
    x = min(max((t - w0) / (w1 - w0), 0), 1)
    out = {"wall": r0["wall"] + x * (r1["wall"] - r0["wall"])}
    for k, v in r1.items():
        if isinstance(v, dict):
            out[k] = {s: r0[k][s] + x * (v[s] - r0[k][s]) for s in v}
    return out


def truth_window(path, run):
    """Calls RUN(MARK, READINGS) while the program's truth file (rewritten
    every second) is followed into READINGS (follow_truth), after the
    program's warm-up; RUN calls MARK("start", T) and MARK("stop", T) with
    the times (time.monotonic()) its tool's window began and ended. Returns
    (RUN()'s result, the program's truth over that window: {"wall":
    seconds, KEY: {step: seconds}} for the step dictionary KEY),
    interpolated between the rewrites either side of each end, so that it
    covers the tool's seconds and no others (not its start-up: seconds of
    compiling, on a loaded machine, that slow the program)."""
    readings, done = [], threading.Event()
    follower = threading.Thread(target=follow_truth, args=(path, readings, done), daemon=True)
    follower.start()
    try:
        deadline = time.monotonic() + 60
        while len(readings) < 2:  # a reading after a whole second of running
            assert time.monotonic() < deadline, "the lab program did not write %s" % path
            time.sleep(0.1)
        marks = {}
        result = run(marks.__setitem__, readings)
        start, end = marks["start"], marks["stop"]
        # the first rewrite after the window (a report of a CPU-starved
        # program can take well over the second between rewrites)
        deadline = time.monotonic() + 30
        while written(readings)[-1][0] <= end:
            assert time.monotonic() < deadline, "the lab program stopped writing %s" % path
            time.sleep(0.05)
    finally:
        done.set()
        follower.join()
    before, after = interpolate(readings, start), interpolate(readings, end)
    key = next(k for k, v in after.items() if isinstance(v, dict))
    return result, {"wall": after["wall"] - before["wall"],
                    key: {s: after[key][s] - before[key][s] for s in after[key]}}


def run_tool(name, args, timeout=120):
    r = subprocess.run([tool_path(name)] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, universal_newlines=True)
    assert r.returncode == 0, r.stderr
    return r


def on_stack(frames, name):
    """Whether function NAME is in FRAMES, by qualified name or, on Pythons
    before 3.11 (no qualified names), by its plain name."""
    plain = name.rsplit(".", 1)[-1]
    return any(f in (name, plain) for f in map(frame_name, frames))


def share_on_stack(rows, name, within=None):
    """Share of the weight of ROWS (restricted to stacks through WITHIN)
    whose stack passes through function NAME; and that weight."""
    rows = [(fr, c) for fr, _, c in rows if within is None or on_stack(fr, within)]
    total = sum(c for _, c in rows)
    return sum(c for fr, c in rows if on_stack(fr, name)) / total, total


def offcpu_window_start(err, started):
    """When pyoffcpu's window began (time.monotonic()), from -v's STDERR and
    STARTED, when it said it had started: it reads the threads already
    blocked first (0.3 s before on a loaded machine)."""
    m = re.search(r"off CPU as the run began \(read in ([\d.]+) ms\)", err)
    assert m, err
    return started - float(m.group(1)) / 1e3


def report_steps():
    """{line: step} of build_report in lab 1's report.py: a step is the
    lines between two of its thread_time() calls, the loop that calls the
    step's function included, as the program measures it (the list
    comprehension and the for loop hold a tenth of the samples on 3.9)."""
    source = open(os.path.join(LABS, "1-hot-loops", "report.py")).read().splitlines()
    first = source.index("def build_report(orders, steps):")
    marks = [i + 1 for i in range(first, len(source)) if "= time.thread_time()" in source[i]]
    assert len(marks) == 4, marks
    steps = ("largest_first", "mask_card", "add_row")
    return {line: step for step, a, b in zip(steps, marks, marks[1:]) for line in range(a + 1, b)}


def report_step(frames, steps):
    """The step (STEPS: report_steps()) a stack is in, by the line
    build_report is at; None outside them."""
    for f in frames:
        m = re.match(r"build_report \(.*:(\d+)\)$", f)
        if m:
            return steps.get(int(m.group(1)))
    return None


@pytest.mark.parametrize("lab_interp", lab_params())
def test_lab1_hot_loops(lab_interp, tmp_path):
    """pyprofile's shares of the report's steps match the CPU time the
    program measured in each (the answer key's first question; a step is
    the lines of build_report the program times, report_steps())."""
    proc, scratch = start_lab(lab_interp, tmp_path, "1-hot-loops", "report.py",
                              ["--seconds", "120"])
    try:
        # until the program has had 1.5 s of CPU, however loaded the
        # machine: at 999 Hz about 1,500 samples (1,200 if the hypervisor
        # takes a fifth), where 4 s at 199 Hz gave 500 to 800 on a quiet
        # machine and fewer the more the program waited for a CPU
        (out, _, _), truth = truth_window(
            scratch.host_path("truth.json"), lambda mark, _: run_until(
                tool_path("pyprofile"), ["-F", "999", "-f", "-p", str(proc.pid)], proc.pid,
                cpu_seconds, 1.5, 60, started=lambda: mark("start", time.monotonic()),
                stopping=lambda: mark("stop", time.monotonic())))
        truth = truth["cpu"]
    finally:
        proc.kill()
        scratch.cleanup()
    rows = parse_folded(out)
    total_truth = sum(truth.values())
    lines = report_steps()
    in_steps = {s: 0 for s in truth}
    for fr, _, c in rows:
        step = report_step(fr, lines)
        if step:
            in_steps[step] += c
    samples = sum(in_steps.values())
    assert samples >= 100, out[-2000:]
    for step in truth:
        share, want = 100 * in_steps[step] / samples, 100 * truth[step] / total_truth
        # a share p of n samples has a standard deviation of sqrt(p(1-p)/n):
        # 1.4 points at worst for 1,200 samples, so 8 points is 5.5 of them
        # (the step shares, the way the program counts them, were within a
        # point of its own at load averages up to 20; the functions' shares,
        # without their loops, had been 3 to 7.6 points under them)
        print("%s: %.1f%% of %d samples, the program measured %.1f%%"
              % (step, share, samples, want))
        assert abs(share - want) <= 8, (step, share, truth, in_steps)
    # the concatenation line is where add_row's samples are
    lines = {}
    for fr, _, c in rows:
        for f in fr:
            m = re.match(r"(?:Report\.)?add_row \(.*:(\d+)\)$", f)
            if m:
                lines[int(m.group(1))] = lines.get(int(m.group(1)), 0) + c
    source = open(os.path.join(LABS, "1-hot-loops", "report.py")).read().splitlines()
    hottest = max(lines, key=lines.get)
    assert "self.text +=" in source[hottest - 1], (lines, source[hottest - 1])
    # and below it the native frames of the concatenation (question 3):
    # from 3.11 the interpreter's exported PyUnicode_Concat, then the copy
    # in libc; before, the eval loop's own static helper (no name in a
    # stripped build), then the copy
    in_add = [(fr, c) for fr, _, c in rows if on_stack(fr, "Report.add_row")]

    def concatenating(frames):
        names = [frame_name(f) for f in frames]
        last = max(i for i, n in enumerate(names) if n in ("Report.add_row", "add_row"))
        native = [n for n in names[last + 1:] if not n.endswith("_[k]")]
        if lab_interp.version >= (3, 11):
            return "PyUnicode_Concat" in native
        return len(native) >= 2
    concat = sum(c for fr, c in in_add if concatenating(fr))
    assert concat >= 0.5 * sum(c for _, c in in_add), in_add[:5]


RUNNABLE = "[runnable: waiting for a CPU]"


@pytest.mark.parametrize("lab_interp", lab_params())
def test_lab2_waiting_service(lab_interp, tmp_path):
    """pyoffcpu: the request handler is blocked nearly all the time, mostly
    fetching the configuration, the rest on the audit log's lock, in the
    proportions the program measured; the flusher sleeps holding it."""
    proc, scratch = start_lab(lab_interp, tmp_path, "2-waiting-service", "orders_service.py",
                              ["--seconds", "120"])
    sched = {}

    def note(when):
        tids = [int(t) for t in os.listdir("/proc/%d/task" % proc.pid)]
        sched[when] = (time.monotonic(), sched_times(proc.pid, tids))

    def run(mark, _):
        # until the handler has been blocked 4 s (however long it waited
        # for a CPU meanwhile), -R: its waits for a CPU after each wake-up
        # as stacks of their own, which the program counts in its steps;
        # --threads: which thread is the flusher
        out, err, _ = run_until(
            tool_path("pyoffcpu"), ["--threads", "-R", "-f", "-p", str(proc.pid)], proc.pid,
            blocked_seconds, 4, 60, started=lambda: note("start"), stopping=lambda: note("stop"))
        mark("start", offcpu_window_start(err, sched["start"][0]))
        mark("stop", sched["stop"][0])
        return out
    try:
        out, truth = truth_window(scratch.host_path("truth.json"), run)
    finally:
        proc.kill()
        scratch.cleanup()
    rows = parse_folded(out)
    blocked_rows = [(fr, st, c) for fr, st, c in rows if fr[-1] != RUNNABLE]
    marked = sched["stop"][0] - sched["start"][0]

    def busy(tid):
        """The share of the marked window thread TID was on a CPU or
        waiting for one, by the scheduler's account; and those seconds."""
        (run0, wait0), (run1, wait1) = sched["start"][1][tid], sched["stop"][1][tid]
        on_cpu, runnable = (run1 - run0) / 1e9, (wait1 - wait0) / 1e9
        return (on_cpu + runnable) / marked, on_cpu, runnable

    steps = truth["seconds"]
    blocked = steps["get_config"] + steps["write_audit"]
    # the split: the time off CPU (blocked or runnable) through each step,
    # as the program's clock counts it
    config, _ = share_on_stack(rows, "ConfigClient.fetch_remote_config", within="handle")
    audit, _ = share_on_stack(rows, "write_audit", within="handle")
    print("config %.1f%%, audit %.1f%%; the program measured %.1f%%, %.1f%%" % (
        100 * config, 100 * audit, 100 * steps["get_config"] / blocked,
        100 * steps["write_audit"] / blocked))
    assert abs(100 * config - 100 * steps["get_config"] / blocked) <= 5, (config, steps)
    assert abs(100 * audit - 100 * steps["write_audit"] / blocked) <= 5, (audit, steps)
    # blocked: what the program measured in the tool's window, less what
    # its clock also counted, the thread's waits for a CPU and its bit of
    # CPU time, as the scheduler counted them (at a load average of 12 the
    # waits for a CPU were 8% of the window: counted as blocked, they put
    # the ratio at 0.91, against the bound's 0.85)
    share, on_cpu, runnable = busy(proc.pid)
    _, handler_us = share_on_stack(blocked_rows, "handle", within="handle")
    expected_us = 1e6 * (blocked - truth["wall"] * share)
    print("handler blocked %.2f s, expected %.2f s (the program's %.2f s less %.2f s runnable"
          " and %.2f s on CPU in %.2f s)" % (handler_us / 1e6, expected_us / 1e6, blocked,
                                           runnable, on_cpu, marked))
    assert 0.85 * expected_us <= handler_us <= 1.1 * expected_us, (handler_us, truth, sched)
    # the flusher blocks inside flush_audit_log, all the time (sleeping)
    # but for what the scheduler saw it on a CPU or waiting for one (with
    # the lock held: 15% of a window at a load average of 15)
    flusher = {int(m.group(1)) for fr, _, _ in rows if on_stack(fr, "flush_audit_log")
               for m in [re.match(r"\[TID (\d+) ", fr[1])] if m}
    assert len(flusher) == 1, flusher
    share, on_cpu, runnable = busy(flusher.pop())
    _, flusher_us = share_on_stack(blocked_rows, "flush_audit_log", within="flush_audit_log")
    expected_us = 1e6 * truth["wall"] * (1 - share)
    print("flusher blocked %.2f s of %.2f s, %.2f s runnable and %.2f s on CPU in %.2f s" % (
        flusher_us / 1e6, truth["wall"], runnable, on_cpu, marked))
    assert flusher_us >= 0.85 * expected_us, (flusher_us, truth, sched)


def gil_rows(out):
    return [dict(zip(("tid", "wait_pct"), (int(m.group(1)), float(m.group(5)))))
            for m in map(ROW.match, out.splitlines()) if m]


def sched_times(pid, tids):
    """{tid: (ns on a CPU, ns runnable waiting for one)} from schedstat."""
    out = {}
    for tid in tids:
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as fp:
            run, runnable = fp.read().split()[:2]
        out[tid] = (int(run), int(runnable))
    return out


@pytest.mark.parametrize("lab_interp", lab_params())
def test_lab3_gil_threads(lab_interp, tmp_path):
    """pygil: four workers checksumming in Python wait for the GIL most of
    their time, in adler32; with zlib they hardly wait. A worker that is
    neither on a CPU nor runnable is waiting for the GIL: pygil's WAIT% is
    at least that share of the run, by the scheduler's own accounting (on a
    machine with CPUs to spare, 50-75%; on a loaded one, less: the workers
    then wait for a CPU before they can ask for the GIL)."""
    waits, slept, runnable = {}, {}, {}
    for mode in ("python", "zlib"):
        # (the program outlives the tool's start-up on a loaded machine: 30 s
        # did not always; it is killed once the tool is done)
        extra = ["--threads", "4", "--seconds", "120"] + (["--zlib"] if mode == "zlib" else [])
        (tmp_path / mode).mkdir()
        proc, scratch = start_lab(lab_interp, tmp_path / mode, "3-gil-threads", "checksums.py", extra)
        try:
            deadline = time.monotonic() + 20
            while len(os.listdir("/proc/%d/task" % proc.pid)) < 5:  # main + 4 workers
                assert time.monotonic() < deadline, "the workers did not start"
                time.sleep(0.1)
            tids = [int(t) for t in os.listdir("/proc/%d/task" % proc.pid) if int(t) != proc.pid]
            # the scheduler's accounts over the tool's 3 s, not its start-up
            # too (seconds of compiling on a loaded machine: WAIT% and the
            # share slept then differed by up to 10 points, now by under 1)
            marks = {}
            out, _, _ = run_until(
                tool_path("pygil"), ["-p", str(proc.pid)], proc.pid, wall_seconds, 3, 60,
                started=lambda: marks.update(before=(sched_times(proc.pid, tids),
                                                     time.monotonic())),
                stopping=lambda: marks.update(after=(sched_times(proc.pid, tids),
                                                     time.monotonic())))
        finally:
            proc.kill()
            scratch.cleanup()
        (before, t0), (after, t1) = marks["before"], marks["after"]
        rows = gil_rows(out)
        workers = [w for w in rows if w["tid"] != proc.pid]  # the main thread sleeps
        assert sorted(w["tid"] for w in workers) == sorted(tids), out
        waits[mode] = sum(w["wait_pct"] for w in workers) / 4
        slept[mode] = 100 * sum(1 - (sum(after[t]) - sum(before[t])) / 1e9 / (t1 - t0)
                                for t in tids) / 4
        runnable[mode] = 100 * sum((after[t][1] - before[t][1]) / 1e9 / (t1 - t0)
                                   for t in tids) / 4
        print("%s: WAIT%% %.1f, neither on a CPU nor runnable %.1f%%, runnable %.1f%%"
              % (mode, waits[mode], slept[mode], runnable[mode]))
        if mode == "python":
            waited = out.split("Where threads waited for the GIL")[1].split("Who held")[0]
            assert "adler32 (" in waited, out
    # 2 CPUs, 4 threads: at most one runs Python, the others wait for it
    assert waits["python"] >= slept["python"] - 10 and waits["python"] >= 15, (waits, slept)
    # with zlib a worker needs the GIL only between chunks: it waits a
    # small part of what the Python workers wait (2-5% against 63-65% on a
    # quiet machine). A loaded machine's CPU, taken from the thread that
    # holds the GIL for that moment, makes the others wait too (10.7% at a
    # load average of 14), while the Python workers wait less (20-30% at
    # 27): at most 10%, or a third of what the Python workers waited
    assert waits["zlib"] <= max(10, waits["python"] / 3), (waits, runnable)

def dump_threads(text):
    """{tid: (state line, [frame lines], [variable lines])} of pydump's text."""
    threads, tid = {}, None
    for line in text.splitlines():
        m = re.match(r"Thread (\d+) ", line)
        if m:
            tid = int(m.group(1))
            threads[tid] = (None, [], [])
        elif tid is not None and line.startswith("  ") and not line.startswith("    "):
            threads[tid] = (line.strip(), threads[tid][1], threads[tid][2])
        elif tid is not None and line.startswith("        "):
            threads[tid][2].append(line.strip())
        elif tid is not None and line.startswith("    "):
            threads[tid][1].append(line.strip())
    return threads


@pytest.mark.parametrize("lab_interp", lab_params())
def test_lab4_stuck_service(lab_interp, tmp_path):
    """pydump: refresher and writer each wait for the lock the other holds
    (the answer key's cycle, with the objects -l names), the feed and the
    upstream wait on the two ends of one TCP connection; every address,
    thread id and port as the program recorded them."""
    proc, scratch = start_lab(lab_interp, tmp_path, "4-stuck-service", "catalog_service.py", [])
    try:
        truth = read_json(scratch.host_path("truth.json"), timeout=60)
        plain = run_tool("pydump", ["-p", str(proc.pid)]).stdout
        with_locals = run_tool("pydump", ["-l", "-p", str(proc.pid)]).stdout
    finally:
        proc.kill()
        scratch.cleanup()
    tids = truth["threads"]
    locks, objects = truth["locks"], truth["objects"]
    for text in (plain, with_locals):
        threads = dump_threads(text)
        for name in ("refresher", "writer", "price_feed"):
            assert tids[name] in threads, (name, text)
        state, frames, _ = threads[tids["refresher"]]
        assert "futex wait on <_thread.lock at %s> (self.lock), no timeout" % locks["db.lock"] \
            in state, state
        names = [frame_name(f).rsplit(".", 1)[-1] for f in frames[:3]]
        assert names == ["read", "refresh", "refresher"], frames
        assert frames[1].endswith("catalog_service.py:52)"), frames
        state, frames, _ = threads[tids["writer"]]
        assert "futex wait on <_thread.lock at %s> (self.lock), no timeout" % locks["cache.lock"] \
            in state, state
        assert frames[0].endswith("catalog_service.py:55)"), frames
        assert frames[1].endswith("catalog_service.py:39)"), frames
        local, peer = truth["feed_ports"]
        state, frames, _ = threads[tids["price_feed"]]
        assert "(TCP 127.0.0.1:%d -> 127.0.0.1:%d)" % (local, peer) in state, state
        assert frames[0].startswith("price_feed ("), frames
        upstream = [t for t, (s, fr, _) in threads.items()
                    if fr and fr[0].startswith("upstream_server (")]
        assert len(upstream) == 1, text
        assert "(TCP 127.0.0.1:%d -> 127.0.0.1:%d)" % (peer, local) in threads[upstream[0]][0]
    # -l: the objects of the cycle
    threads = dump_threads(with_locals)
    _, _, variables = threads[tids["refresher"]]
    assert "arg self = <Database at %s>" % objects["db"] in variables, variables
    assert "arg self = <Cache at %s>" % objects["cache"] in variables, variables
    _, _, variables = threads[tids["writer"]]
    assert "arg self = <Cache at %s>" % objects["cache"] in variables, variables
    assert "arg self = <Database at %s>" % objects["db"] in variables, variables
    assert "arg cache = <Cache at %s>" % objects["cache"] in variables, variables


def rooted_in(rows, task):
    """The rows whose stack is rooted in the asyncio task TASK."""
    return [(fr, st, c) for fr, st, c in rows if "<task %s>" % task in fr]


@pytest.mark.parametrize("lab_interp", lab_params())
def test_lab5_async_gateway(lab_interp, tmp_path):
    """--async: pyprofile charges the CPU of the thumbnail task to it, in the
    share of the process's CPU the program measured; pyoffcpu charges the
    audit task's blocking call to it, as long as the program measured it
    blocked; pydump lists every task, the main one waiting for its
    TaskGroup."""
    if lab_interp.version < (3, 11):
        pytest.skip("the tools read asyncio tasks on 3.11+ (lab 5 says so)")
    proc, scratch = start_lab(lab_interp, tmp_path, "5-async-gateway", "gateway.py", [])
    window = {}

    def profile(mark, _):
        # until the process has had 0.5 s of CPU: about 500 samples at
        # 999 Hz (400 if the hypervisor takes a fifth), where 4 s gave 750
        # on a quiet machine, 215 on a loaded one
        return run_until(tool_path("pyprofile"),
                         ["--async", "-F", "999", "-f", "-p", str(proc.pid)], proc.pid,
                         cpu_seconds, 0.5, 60, started=lambda: mark("start", time.monotonic()),
                         stopping=lambda: mark("stop", time.monotonic()))[0]

    def offcpu(mark, readings):
        # 4 s, then on to the program's next rewrite of its truth, which
        # comes between two of the audit's calls (one task at a time): at
        # that end the truth holds every call and no part of one
        since = {}

        def clock(pid):
            now = time.monotonic()
            since.setdefault("start", now)
            if now - since["start"] < 4 or readings[-1][0] <= since["start"] + 4:
                return since["start"]
            return now
        out, err, _ = run_until(tool_path("pyoffcpu"), ["--async", "-f", "-p", str(proc.pid)],
                                proc.pid, clock, 4, 60,
                                started=lambda: window.update(start=time.monotonic()),
                                stopping=lambda: window.update(stop=time.monotonic()))
        mark("start", offcpu_window_start(err, window["start"]))
        mark("stop", window["stop"])
        return out
    try:
        cpu, cpu_truth = truth_window(scratch.host_path("truth.json"), profile)
        off, off_truth = truth_window(scratch.host_path("truth.json"), offcpu)
        tree = run_tool("pydump", ["--async", "-p", str(proc.pid)]).stdout
    finally:
        proc.kill()
        scratch.cleanup()
    rows = parse_folded(cpu)
    total = sum(c for _, _, c in rows)
    thumbs = sum(c for fr, _, c in rooted_in(rows, "thumbnailer") if on_stack(fr, "make_thumbnail"))
    truth = cpu_truth["seconds"]
    # a share p of n samples has a standard deviation of sqrt(p(1-p)/n):
    # 1.3 points for 93% of 400, so 8 points is 6 of them
    print("thumbnailer: %.1f%% of %d samples, the program measured %.1f%%" % (
        100 * thumbs / total, total, 100 * truth["thumbnailer_cpu"] / truth["process_cpu"]))
    assert total >= 200, cpu[-2000:]
    assert abs(100 * thumbs / total - 100 * truth["thumbnailer_cpu"] / truth["process_cpu"]) <= 8, (
        thumbs, total, truth)
    rows = parse_folded(off)
    audit_us = sum(c for fr, _, c in rooted_in(rows, "audit") if on_stack(fr, "write_audit_record"))
    # what the program measured over the tool's window (not its start-up,
    # which slowed the loop on a loaded machine: 151 ms expected from the
    # rate over it where the 4 s held 240). The audit blocks 80 ms about
    # every 0.6 s (less often on a loaded machine) and counts each call as
    # it ends; the truth, interpolated between rewrites a second apart, is
    # then off by part of a call at the window's start (a standard
    # deviation of some 35 ms) and by none at its end. One call (80 ms, and
    # its wake-up's lateness) either way, and 10-15%, is 4 or 5 of those
    # (the rate over the tool's 4 s and a second either side had been a
    # call and more off at each end: 145 ms short once in 16 runs)
    expected_us = 1e6 * off_truth["seconds"]["audit_blocked"]
    one_call = 0.1e6
    print("audit blocked %.0f ms, expected %.0f ms" % (audit_us / 1e3, expected_us / 1e3))
    assert 0.85 * expected_us - one_call <= audit_us <= 1.1 * expected_us + one_call, (
        audit_us, off_truth)
    # no other task is charged with the audit's blocking call; at most one
    # call's worth of it without its task (a walk that could not tell the
    # running task: the thread's own stack)
    assert not [fr for fr, _, _ in rows if on_stack(fr, "write_audit_record")
                and "<task audit>" not in fr and any(f.startswith("<task ") for f in fr)], \
        off[-3000:]
    taskless = sum(c for fr, _, c in rows if on_stack(fr, "write_audit_record")
                   and not any(f.startswith("<task ") for f in fr))
    print("audit's blocking call without its task:", taskless, "us of", audit_us)
    assert taskless <= one_call, off[-3000:]
    names = re.findall(r"\(T\) (\S+) \[", tree)
    assert sorted(names) == sorted(["main", "audit", "thumbnailer", "heartbeat", "truth"] +
                                   ["session-%d" % i for i in range(3)]), tree
    assert re.search(r"\(T\) main \[pending\] awaiting TaskGroup", tree), tree


STEPS = ("fetch_batch", "parse_batch", "store_batch")
STEP_REASONS = {"fetch_batch": "[socket I/O]", "store_batch": "[lock or condition wait]"}


@pytest.mark.parametrize("lab_interp", lab_params())
def test_lab6_wall_clock(lab_interp, tmp_path):
    """pyprofile --wall -- CMD: the job's three steps share the main
    thread's wall time as the program measured (within 5 points); fetching
    waits on its socket and storing on the lock, as the answer key says;
    the CPU profile alone puts nearly everything in parse_batch."""
    script = lab_interp.place(os.path.join(LABS, "6-wall-clock", "import_job.py"))
    scratch = lab_interp.scratch(tmp_path)
    out = {}
    try:
        # the key's commands; --wall at 999 Hz, not 49: its samples on CPU
        # count for their period, and parse_batch's few seconds of CPU, cut
        # in slices by a loaded machine, came out 3 to 10% off at 49 Hz (up
        # to 1.6 points of the shares), under 1% at 999 Hz
        for mode, extra in (("cpu", ["-F", "99"]), ("wall", ["--wall", "-F", "999"])):
            path = os.path.join(str(tmp_path), mode + ".folded")
            run_tool("pyprofile", extra + ["-f", "-o", path, "--"] + lab_interp.argv +
                     [script, "--batches", "20", "--truth", scratch.proc_path(mode + ".json")],
                     timeout=240)
            with open(path, encoding="utf-8") as fp:
                out[mode] = (parse_folded(fp.read()), read_json(scratch.host_path(mode + ".json")))
    finally:
        scratch.cleanup()
    rows, truth = out["cpu"]
    parse, samples = share_on_stack(rows, "parse_batch", within="main")
    assert samples >= 50 and parse >= 0.8, (parse, samples)
    rows, truth = out["wall"]
    steps = truth["seconds"]
    spent = {s: 0 for s in STEPS}
    reasons = {s: {} for s in STEPS}
    for frames, _, us in rows:
        step = next((s for s in STEPS if on_stack(frames, s)), None)
        if step is None:
            continue
        spent[step] += us
        if "[off-CPU]" in frames:
            reasons[step][frames[-1]] = reasons[step].get(frames[-1], 0) + us
    # off CPU the time is the scheduler's, exact; on CPU (parse_batch's 3
    # to 5 s at 999 Hz) within 1%, under half a point of the shares: 5
    # points is over 10 times that
    for s in STEPS:
        share = spent[s] / sum(spent.values())
        want = steps[s]["wall"] / sum(v["wall"] for v in steps.values())
        print("%s: %.1f%% of the main thread's wall time, the program measured %.1f%%"
              % (s, 100 * share, 100 * want))
        assert abs(share - want) <= 0.05, (s, share, want, spent, steps)
    # of the time each step waited off CPU (what a loaded machine adds,
    # waiting for a CPU after the wake-up or for the GIL after it, set
    # apart), its reason holds 80%
    for s, reason in STEP_REASONS.items():
        waited = sum(reasons[s].values()) - reasons[s].get("[runnable: waiting for a CPU]", 0) - \
            reasons[s].get("[GIL wait]", 0)
        # (a run whose stores all came between the backup's holds waited
        # for nothing: its truth and its share say so above)
        assert reasons[s].get(reason, 0) >= 0.8 * waited, (s, reasons[s], spent[s])


@pytest.mark.parametrize("lab_interp", lab_params())
def test_lab1_four_times_the_orders(lab_interp, tmp_path):
    """The claim of lab 1's question 4: 4 times the orders make the report
    10 times slower or more, in the CPU time a report takes (the program's
    own count, --truth): the reports a second it prints depend as well on
    the share of a CPU it got, which a loaded machine can change between
    the two runs."""
    script = lab_interp.place(os.path.join(LABS, "1-hot-loops", "report.py"))
    scratch = lab_interp.scratch(tmp_path)
    rates, cpu = {}, {}
    try:
        for orders in (1000, 4000):
            truth = "truth-%d.json" % orders
            r = subprocess.run(lab_interp.argv + [script, "--orders", str(orders), "--seconds", "3",
                                                  "--truth", scratch.proc_path(truth)],
                               stdout=subprocess.PIPE, universal_newlines=True, timeout=120)
            m = re.search(r"([\d.]+) reports/s", r.stdout)
            assert r.returncode == 0 and m, r.stdout
            rates[orders] = float(m.group(1))
            got = read_json(scratch.host_path(truth))
            cpu[orders] = sum(got["cpu"].values()) / got["reports"]
    finally:
        scratch.cleanup()
    print("reports/s: %s; CPU seconds a report: %s; %.1f times" % (
        rates, cpu, cpu[4000] / cpu[1000]))
    assert cpu[4000] >= 10 * cpu[1000], (cpu, rates)


@pytest.mark.parametrize("lab_interp", lab_params())
def test_lab7_leaking_service(lab_interp, tmp_path):
    """pymem --alloc: the pages the sender keeps grow by what the program
    counts it keeps (allocated in render_page), the thumbnail cache holds
    at most its capacity however long the run, and compressing (zlib's
    buffers, 50 a second) leaves nothing outstanding."""
    proc, scratch = start_lab(lab_interp, tmp_path, "7-leaking-service", "render_service.py",
                              ["--seconds", "120"])
    try:
        out, truth = truth_window(scratch.host_path("truth.json"), lambda mark, _: run_until(
            tool_path("pymem"), ["--alloc", "-f", "-p", str(proc.pid)], proc.pid, wall_seconds,
            4, 60, started=lambda: mark("start", time.monotonic()),
            stopping=lambda: mark("stop", time.monotonic()))[0])
    finally:
        proc.kill()
        scratch.cleanup()
    rows = parse_folded(out)
    page = 16 * 1024 + 1  # a bytearray asks libc for its size + 1

    def through(name):
        return sum(c for fr, _, c in rows if on_stack(fr, name))

    # the sender's pages: what it kept in the tool's 4 s, as the program
    # counted them over the same seconds (a service slowed by --alloc's
    # traps on a loaded machine keeps fewer a second in them than before;
    # the tool's probes are on a few ms before it says it has started)
    leaked = through("render_page")
    expected = truth["held"]["sent"] / (16 * 1024) * page
    print("render_page: %d bytes outstanding, %d expected" % (leaked, expected))
    assert 0.85 * expected <= leaked <= 1.15 * expected, (leaked, truth)
    # the cache: bounded by its 64 thumbnails of 32 KiB + 1, and the odd
    # small block the interpreter makes on the same stack (Debian's 3.13 and
    # 3.15: one of 2 KiB); and the thumbnail being made if the run ended
    # between its making and the eviction of the oldest (ThumbnailCache.get
    # adds before it evicts): 65 of them, once in a loaded rehearsal
    thumbs = through("ThumbnailCache.make_thumbnail")
    print("thumbnails: %d bytes outstanding" % thumbs)
    assert thumbs <= 64 * (32 * 1024 + 64) + 32 * 1024 + 1, thumbs
    # compressing (in Sender.send, beside remember_for_retry) frees what it
    # allocates: at most the one compress in flight when the run ended
    # (zlib's state at level 6, about 270 KiB, and its output) is
    # outstanding, against 200 of them in 4 s if it leaked
    compressing = through("Sender.send") - through("Sender.remember_for_retry")
    assert compressing <= 512 * 1024, rows
