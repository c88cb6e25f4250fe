"""Faults around the tools' targets: the tools report and go on, never crash,
never hang, never harm the target.

pyprofile, pyoffcpu and (where it applies) pygil against real Python
processes (tests/workloads/faults.py, garbage_running.py) that

  exit mid-run (-p)                          test_target_exits_mid_run
  exec into sleep(1) (-p)                    test_exec_into_sleep_with_pid
  exec into another Python program,
  another version where there is one         test_exec_system_wide
  fork and start children, one of 0.3 s      test_children_system_wide
  start and end threads all the time         test_thread_churn
  run with frame links into nowhere, a
  frame loop and a name 2**60 long           test_garbage_in_memory

and a Ctrl-C mid-run (test_sigint_reports_and_exits). The tools of one test
run side by side on the same target (their BPF programs compile in
parallel). Every run has a deadline: a tool that overruns is killed and
fails the test; so does a workload.

Interpreters: host-3.11 always, plus bullseye-3.9 (frame objects) and/or
sid-3.14 (3.13+ frames) per test, to keep the file to a few minutes; the
faults are the tools' business more than the interpreters'. System-wide
runs see other Python processes on the machine: assertions are about
functions only these workloads have.
"""
import concurrent.futures
import os
import re
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import tool_path, WORKLOADS
import interpreters
from profiling import start_tool, finish, parse_folded, frame_name, read_json, offcpu_times

SLACK = 20          # seconds a tool may take past its duration to report and exit
                    # on an idle machine; scaled by cpu_share() on a loaded one
START_TIMEOUT = 120  # compiling BPF on a busy machine
FAULTS = os.path.join(WORKLOADS, "faults.py")
GARBAGE = os.path.join(WORKLOADS, "garbage_running.py")

SUMMARY = re.compile(
    r"^(\w+): (\d+) (.+?) of (\d+) Python process(?:es)? \((\d+) exited during the run\); "
    r"(\d+) with Python frames, (\d+) in threads without a Python thread state$", re.M)
SUMMARY2 = re.compile(
    r"^(\w+): (\d+) stacks? truncated at \d+ Python frames, (\d+) with an unreadable frame, "
    r"(\d+) .+? not counted \(maps full: (\d+) stacks?\), (\d+) process events? lost$", re.M)
GIL_ROW = re.compile(  # pygil's table: TID THREAD WALL(s) WAIT(ms) WAIT% WAITS AVG_WAIT(us) HOLD%
    r"^ *(\d+) .{16,}? +([\d.]+|-) +([\d.]+) +([\d.]+|-)%? +(\d+) +(\d+) +([\d.]+%|-)$")


def interps(*ids):
    """Parameters for the interpreters IDS of the matrix; missing ones are
    skipped with the reason."""
    matrix, _ = interpreters.discover()
    by_id = {i.id: i for i in matrix}
    params = []
    for want in ids:
        found = by_id.get(want)
        if isinstance(found, interpreters.Interpreter):
            params.append(pytest.param(found, id=want))
        else:
            why = "not in the interpreter matrix"
            for u in matrix:  # "bullseye" stands for all of a missing chroot
                if isinstance(u, interpreters.Unavailable) and want.startswith(u.id):
                    why = u.reason
            params.append(pytest.param(None, id=want, marks=pytest.mark.skip(reason=why)))
    return params


ALL = interps("host-3.11", "bullseye-3.9", "sid-3.14")
HOST_AND_OLD = interps("host-3.11", "bullseye-3.9")      # frame objects (3.8-3.10)
HOST_AND_NEW = interps("host-3.11", "sid-3.14")          # tstate->current_frame (3.13+)


def host_py():
    p = interps("host-3.11")[0]
    if p.values[0] is None:
        pytest.skip("host python3.11 not available")
    return p.values[0]


@pytest.fixture(scope="session")
def tools():
    paths = {}
    for name in ("pyprofile", "pyoffcpu", "pygil"):
        paths[name] = tool_path(name)
        if not os.access(paths[name], os.X_OK):
            pytest.fail("%s not built" % paths[name])
    return paths


# ------------------------------------------------------------------ running

def cpu_share(seconds=0.5):
    """The share of a CPU a busy thread gets now, by spinning for SECONDS:
    about 1 on an idle machine, a tenth at a load of 20 on 2 CPUs. Limits
    on the work a tool does after its run (reading and naming stacks) are
    divided by it, so that only a hang exceeds them."""
    wall0, cpu0 = time.monotonic(), time.thread_time()
    while time.monotonic() - wall0 < seconds:
        pass
    share = (time.thread_time() - cpu0) / (time.monotonic() - wall0)
    return min(1.0, max(share, 0.05))


def slack():
    """SLACK, scaled to what the machine gives now."""
    return SLACK / cpu_share()


class Result:
    def __init__(self, name, rc, out, err, seconds, report):
        self.name = name
        self.rc = rc
        self.out = out
        self.err = err
        self.seconds = seconds   # from the header (probes attached) to exit
        self.report = report     # text of the -o file
        self.rows = parse_folded(report)

    def describe(self):
        return "%s: rc=%s after %.1fs\nstderr:\n%s\nreport (first 3000 chars):\n%s" % (
            self.name, self.rc, self.seconds, self.err, self.report[:3000])

    def summary(self):
        """(samples, processes, exited, with frames, without tstate,
        truncated, unreadable, not counted, maps full, events lost)"""
        m, m2 = SUMMARY.search(self.err), SUMMARY2.search(self.err)
        assert m and m2, "no summary:\n" + self.describe()
        return tuple(int(m.group(i)) for i in (2, 4, 5, 6, 7)) + \
            tuple(int(m2.group(i)) for i in (2, 3, 4, 5, 6))

    def with_frame(self, name):
        """Rows (frames, comm, value) that hold a frame of function NAME."""
        return [r for r in self.rows if any(frame_name(f) == name for f in r[0])]

    def value_in(self, name):
        return sum(v for _, _, v in self.with_frame(name))


class Tools:
    """Several tools started side by side; each writes folded stacks to a
    file. finish() enforces a deadline on every one of them."""

    def __init__(self, paths, tmp, target, duration, which=("pyprofile", "pyoffcpu")):
        self.popens = {}
        self.outs = {}
        self.t0 = {}
        specs = {}
        for name in which:
            self.outs[name] = os.path.join(tmp, name + ".folded")
            args = ["-o", self.outs[name], "--format", "folded"] + list(target)
            if name == "pyprofile":
                args = ["-F", "199"] + args
            if duration:
                args.append(str(duration))
            specs[name] = (paths[name], args)
        self.duration = duration
        with concurrent.futures.ThreadPoolExecutor(len(specs)) as ex:
            futures = {n: ex.submit(start_tool, p, a, START_TIMEOUT) for n, (p, a) in specs.items()}
            errors = []
            for name, f in futures.items():
                try:
                    self.popens[name] = f.result()
                    self.t0[name] = time.monotonic()
                except Exception as e:  # noqa: BLE001 - re-raised below
                    errors.append(e)
        if errors:
            self.kill()
            raise errors[0]

    def kill(self):
        for p in self.popens.values():
            if p.poll() is None:
                p.kill()
            try:
                p.communicate(timeout=30)
            except Exception:  # noqa: BLE001 - cleanup only
                pass

    def signal(self, sig):
        for p in self.popens.values():
            p.send_signal(sig)

    def interrupt(self):
        """Ctrl-C to every tool; each must be done within slack() seconds."""
        limit = slack()
        self.signal(signal.SIGINT)
        return self.finish(deadline=time.monotonic() + limit)

    def finish(self, limit=None, deadline=None):
        """Waits for every tool, at most LIMIT seconds (default: duration +
        SLACK) from its start, or until DEADLINE; returns {name: Result}."""
        limit = limit if limit is not None else self.duration + SLACK
        results = {}
        try:
            for name, p in self.popens.items():
                end = deadline if deadline is not None else self.t0[name] + limit
                rc, out, err = finish(p, timeout=max(1.0, end - time.monotonic()))
                seconds = time.monotonic() - self.t0[name]
                try:
                    with open(self.outs[name], encoding="utf-8") as fp:
                        report = fp.read()
                except FileNotFoundError:
                    report = ""
                results[name] = Result(name, rc, out, err, seconds, report)
        finally:
            self.kill()
        return results


class Workload:
    """tests/workloads/faults.py (or another script taking DIR first) under
    an interpreter, with its state file and go switch."""

    def __init__(self, interp, tmp, script, *args):
        self.interp = interp
        self.scratch = interp.scratch(tempfile.mkdtemp(dir=str(tmp)))
        path = interp.place(script)
        self.proc = interp.spawn([path, self.scratch.proc] + [str(a) for a in args])
        try:
            self.state = read_json(self.scratch.host_path("state.json"), timeout=30, key="ready")
        except AssertionError:
            self.close()
            raise
        self.pid = self.proc.pid

    def go(self):
        with open(self.scratch.host_path("go"), "w"):
            pass

    def read_state(self, key=None, timeout=20):
        return read_json(self.scratch.host_path("state.json"), timeout=timeout, key=key)

    def wait(self, timeout=30):
        try:
            return self.proc.popen.wait(timeout=timeout)
        except Exception:  # noqa: BLE001
            raise AssertionError("workload %s still running after %ss" % (self.pid, timeout))

    def close(self):
        self.proc.kill()
        self.scratch.cleanup()


def assert_clean_exit(r, limit=None):
    """Exit status 0, within LIMIT seconds of the start, and a report whose
    every row has frames, each a non-empty printable name."""
    assert r.rc == 0, r.describe()
    if limit is not None:
        assert r.seconds <= limit, "%s took %.1fs (limit %ss)\n%s" % (
            r.name, r.seconds, limit, r.describe())
    for frames, comm, value in r.rows:
        assert comm and frames and value > 0, "%s: bad row %r" % (r.name, (comm, frames, value))
        for f in frames:
            assert f.strip() and f.isprintable(), "%s: bad frame %r in %s" % (r.name, f, frames)


def assert_named(r, name, minimum=1):
    """NAME's rows carry real names: every Python frame of them is named
    (no [unknown code]), and there is at least MINIMUM of value."""
    rows = r.with_frame(name)
    got = sum(v for _, _, v in rows)
    assert got >= minimum, "%s: %s has %d (want >= %d)\n%s" % (
        r.name, name, got, minimum, r.describe())
    unknown = sum(v for fr, _, v in rows if any(f.startswith("[unknown code") for f in fr))
    assert unknown <= got // 20, "%s: %d of %d in %s unnamed\n%s" % (
        r.name, unknown, got, name, r.describe())


# ------------------------------------------------------------------ target exits

@pytest.mark.parametrize("py", ALL)
def test_target_exits_mid_run(py, tools, tmp_path):
    """-p PID for 30 s; the target (two threads in exit_soon_spin) exits
    after 2 s: each tool notices, says so (which it does only if it
    stopped before its duration), prints what it collected (naming the
    function) and exits 0."""
    w = Workload(py, tmp_path, FAULTS, "exit", 2)
    try:
        run = Tools(tools, str(tmp_path), ["-p", str(w.pid)], 30,
                    which=("pyprofile", "pyoffcpu", "pygil"))
        w.go()
        assert w.wait() == 0
        limit = 2 + slack()
        res = run.finish(limit=limit)
    finally:
        w.close()
    for name, r in res.items():
        assert_clean_exit(r, limit)
        assert "every target process has exited\n" in r.err, r.describe()
    assert_named(res["pyprofile"], "exit_soon_spin", 20)      # samples at 199 Hz
    assert_named(res["pyoffcpu"], "exit_soon_spin", 20000)    # us blocked
    assert_named(res["pygil"], "exit_soon_spin", 1000)        # us waited for the GIL
    samples, procs, exited = res["pyprofile"].summary()[:3]
    assert procs == 1 and exited == 1, res["pyprofile"].describe()


# ------------------------------------------------------------------ exec

def assert_nothing_named_after_exec(r, comm):
    """Rows of the exec'd non-Python program hold no Python frame."""
    for frames, c, _ in r.rows:
        if c == comm:
            python = [f for f in frames if f.endswith(")") and " (" in f
                      and not f.startswith("[unknown code")]
            assert not python, "%s: Python frames in %s after exec: %s" % (r.name, c, frames)


def assert_runs_sleep(w, timeout=20):
    """The workload exec'd into sleep(1) and sleeps on, unharmed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if os.readlink("/proc/%d/exe" % w.pid).endswith("/sleep"):
                break
        except OSError:
            pass
        time.sleep(0.05)
    assert w.proc.alive() and os.readlink("/proc/%d/exe" % w.pid).endswith("/sleep")


@pytest.mark.parametrize("py", HOST_AND_OLD)
def test_exec_into_sleep_with_pid(py, tools, tmp_path):
    """-p PID: the target (two threads) execs into sleep(1) mid-run. No
    crash; the samples before the exec are named; each tool stops (nothing
    left to profile) long before its duration, says why, exit status 0;
    sleep runs on."""
    w = Workload(py, tmp_path, FAULTS, "exec-sleep", 1.5)
    try:
        run = Tools(tools, str(tmp_path), ["-p", str(w.pid)], 30,
                    which=("pyprofile", "pyoffcpu", "pygil"))
        w.go()
        limit = 1.5 + slack()
        res = run.finish(limit=limit)
        assert_runs_sleep(w)
    finally:
        w.close()
    for r in res.values():
        assert_clean_exit(r, limit)
        assert "no longer runs a Python we can read" in r.err, r.describe()
        assert_nothing_named_after_exec(r, "sleep")
    assert_named(res["pyprofile"], "burn_before_exec", 20)
    assert_named(res["pyoffcpu"], "burn_before_exec", 20000)
    assert_named(res["pygil"], "burn_before_exec", 1000)


def other_python(py):
    """Another Python version in the same root (the process's path), or
    the same interpreter if there is none."""
    matrix, _ = interpreters.discover()
    for i in matrix:
        if isinstance(i, interpreters.Interpreter) and i.kind == py.kind and \
                i.root == py.root and not i.pidns and i.version[:2] != py.version[:2]:
            return i.exe
    return py.exe


@pytest.mark.serial  # (conftest.py: every Python process)
@pytest.mark.parametrize("py", HOST_AND_NEW)
def test_exec_system_wide(py, tools, tmp_path):
    """System-wide run: one process execs into another Python program (same
    pid; another Python version where the root has one), another into
    sleep(1). The program before the exec and the new one are both profiled
    under their own names (pygil: their GIL waits, the new program's on its
    own GIL); sleep shows no Python."""
    to_py = Workload(py, tmp_path, FAULTS, "exec-python", 1, other_python(py))
    to_sleep = None
    try:
        to_sleep = Workload(py, tmp_path, FAULTS, "exec-sleep", 1)
        # ended by Ctrl-C once both are done: the tools' start-up times vary
        run = Tools(tools, str(tmp_path), [], 120, which=("pyprofile", "pyoffcpu", "pygil"))
        to_py.go()
        to_sleep.go()
        assert to_py.wait() == 0
        assert_runs_sleep(to_sleep)
        res = run.interrupt()
    finally:
        to_py.close()
        if to_sleep:
            to_sleep.close()
    for r in res.values():
        assert_clean_exit(r)
        assert_nothing_named_after_exec(r, "sleep")
    # pygil's table: one entry for the pid, its GIL hand-overs counted on
    # both GILs (not garbage from mixing them)
    gil = res["pygil"]
    rates = re.findall(r"^PID %d \(.*\), Python [\d.]+: ([\d.]+) GIL switches/s" % to_py.pid,
                       gil.out, re.M)
    # (a second of contention before the exec and one after, averaged over
    # a run that lasts as long as the slowest tool takes to start)
    assert len(rates) == 1 and 0.5 <= float(rates[0]) <= 20000, gil.out[:3000]
    for name, minimum in (("pyprofile", 20), ("pyoffcpu", 20000), ("pygil", 1000)):
        r = res[name]
        assert_named(r, "burn_before_exec", minimum)
        assert_named(r, "burn_after_exec", minimum)
        for frames, _, _ in r.with_frame("burn_before_exec"):
            assert any(re.match(r"^burn_before_exec \(.*faults\.py:\d+\)$", f)
                       for f in frames), frames
        # the new program's frames come from its own code (<string>: -c)
        for frames, _, _ in r.with_frame("burn_after_exec"):
            assert any(f.startswith("burn_after_exec (<string>:") for f in frames), frames


# ------------------------------------------------------------------ children

@pytest.mark.serial  # (conftest.py: every Python process)
@pytest.mark.parametrize("py", HOST_AND_OLD)
def test_children_system_wide(py, tools, tmp_path):
    """System-wide run while a Python process forks a child (no exec), and
    starts child interpreters, one of which lives only ~0.3 s: each child's
    function appears under its real name."""
    w = Workload(py, tmp_path, FAULTS, "children", 0)
    try:
        run = Tools(tools, str(tmp_path), [], 120)
        w.go()
        assert w.wait(timeout=60) == 0
        state = w.read_state(key="done")
        res = run.interrupt()
    finally:
        w.close()
    assert len(state["children"]) == 6, state
    for r in res.values():
        assert_clean_exit(r)
    for name, scale in (("pyprofile", 1), ("pyoffcpu", 1000)):
        r = res[name]
        assert_named(r, "forked_child_work", 10 * scale)
        assert_named(r, "spawned_child_work", 10 * scale)
        assert_named(r, "short_child_work", 3 * scale)


# ------------------------------------------------------------------ thread churn

@pytest.mark.parametrize("py", HOST_AND_NEW)
def test_thread_churn(py, tools, tmp_path):
    """Threads start and end hundreds of times a second, each in
    churn_thread_work: no crash, no hang, the function appears, and the
    summary counts add up (pygil: its per-thread table too)."""
    duration = 3
    w = Workload(py, tmp_path, FAULTS, "churn", duration + 1)
    try:
        run = Tools(tools, str(tmp_path), ["-p", str(w.pid)], duration,
                    which=("pyprofile", "pyoffcpu", "pygil"))
        w.go()
        limit = duration + slack()
        res = run.finish(limit=limit)
        state = w.read_state(key="done", timeout=30)
    finally:
        w.close()
    # the precondition, real churn: 100 threads a second for the tools'
    # run (on an idle machine, many more; on a loaded one the workload's
    # duration + 1 s may reach fewer a second, judged on the total)
    assert state["threads"] >= 100 * duration, state
    ncpu = os.cpu_count() or 2
    for r in res.values():
        assert_clean_exit(r, limit)
        (events, procs, exited, framed, no_ts, truncated, unreadable, not_counted,
         full, lost) = r.summary()
        assert procs == 1 and exited == 0 and lost == 0, r.describe()
        assert framed + no_ts == events and events > 0, r.describe()
        assert not_counted == 0 and full == 0, r.describe()
        # a thread's stack read as it ends, or (pygil) the stack of a GIL
        # holder that is ending, may be garbage, bounded and marked: rare
        assert truncated + unreadable <= events // 50 + 5, r.describe()
    prof = res["pyprofile"]
    samples = prof.summary()[0]
    # at most one sample per CPU per period, and all of them counted
    assert samples <= 199 * ncpu * (duration + 1), prof.describe()
    assert sum(v for _, _, v in prof.rows) == samples, prof.describe()
    assert_named(prof, "churn_thread_work", 20)
    off = res["pyoffcpu"]
    assert_named(off, "churn_thread_work", 20000)
    times = offcpu_times(off.err)
    assert times, off.describe()
    # never more off-CPU time than 5 threads (4 workers, main) can have
    assert times[0] + times[1] <= 5 * (duration + 1) * 1e6, off.describe()
    gil = res["pygil"]
    assert_named(gil, "churn_thread_work", 1000)
    rows = [m for m in map(GIL_ROW.match, gil.out.splitlines()) if m]
    assert len(rows) >= 100, gil.out[:3000]
    assert len(rows) <= state["threads"] * 2 + 10, len(rows)  # no thread twice
    for row in rows:
        wall = row.group(2)
        assert wall == "-" or float(wall) <= duration + 2, row.group(0)
        if row.group(4) == "-":
            # no share over less than 0.5 s (most of these threads live ms)
            assert wall == "-" or float(wall) < 0.5, row.group(0)
        else:
            assert 0 <= float(row.group(4)) <= 100.0 and float(wall) >= 0.5, row.group(0)
    total = re.search(r"^ +all threads +([\d.]+) +([\d.]+) +([\d.]+)% +(\d+)", gil.out, re.M)
    assert total and float(total.group(3)) <= 100.0, gil.out[-3000:]
    assert abs(float(total.group(2)) - sum(float(r.group(3)) for r in rows)) <= \
        0.01 * float(total.group(2)) + 1, total.group(0)



@pytest.mark.parametrize("py", HOST_AND_NEW)
def test_pydump_during_thread_churn(py, pydump, tmp_path):
    """pydump, 40 times, on a process whose threads start and end hundreds
    of times a second, next to two spinning processes (a thread that ends
    while its list is walked breaks the walk more often when CPUs are
    short): every run succeeds and shows the main thread in churn; a
    churn thread, when listed, shows its function. Before walks were
    retried, about 4 runs in 100 failed here with 'thread state ... does
    not point back to its interpreter'."""
    w = Workload(py, tmp_path, FAULTS, "churn", 30)
    hogs = [subprocess.Popen(["/usr/bin/python3", "-c", "while True: pass"])
            for _ in range(2)]
    try:
        w.go()
        failures, churn_threads = [], 0
        for _ in range(40):
            r = subprocess.run([pydump, "-p", str(w.pid)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
            if r.returncode != 0:
                failures.append(r.stderr.strip())
                continue
            assert "churn" in r.stdout, r.stdout
            churn_threads += r.stdout.count("churn_thread_work (")
        assert not failures, failures
        assert churn_threads > 0  # the churn threads were there to be seen
    finally:
        for h in hogs:
            h.kill()
            h.wait()
        w.close()


# ------------------------------------------------------------------ garbage

def sane_frame(f):
    """Not garbage: no U+FFFD, printable, and a Python frame's name short
    ('name (file:line)'); markers, [unknown code 0x...], kernel and native
    symbols pass."""
    if "\ufffd" in f or not f.isprintable():
        return False
    m = re.match(r"^(.+) \((.+):(\d+|\?)\)$", f)
    if m:
        return len(m.group(1)) <= 200
    return len(f) <= 300


def python_frames(frames):
    """The Python frames and markers of a row (no kernel or native ones)."""
    return [f for f in frames if re.match(r"^.+ \(.+:(\d+|\?)\)$", f)
            or f.startswith("[unknown code")
            or f in ("[truncated]", "[unreadable frame]", "[no Python frames]")]


@pytest.mark.parametrize("py", ALL)
def test_garbage_in_memory(py, tools, tmp_path):
    """Threads keep running with a frame link into unmapped memory, a frame
    chain looping on itself and a name of length 2**60: each tool finishes
    in time, shows those frames as [unreadable frame], [truncated] and
    [unreadable name] (counted in the summary) and no garbage, and the
    target is unharmed."""
    duration = 2
    w = Workload(py, tmp_path, GARBAGE)
    try:
        st = w.state
        assert st["done"].get("nowhere") and st["done"].get("loop") and \
            st["done"].get("huge"), "workload could not corrupt: %s" % st["why"]
        run = Tools(tools, str(tmp_path), ["-p", str(w.pid)], duration,
                    which=("pyprofile", "pyoffcpu", "pygil"))
        res = run.finish()
        # unharmed: still alive, every thread still counting, sums still right
        before = w.read_state()
        time.sleep(0.5)
        after = w.read_state()
        alive = w.proc.alive()
    finally:
        w.close()
    assert alive, "the target died"
    assert after["ticks"] > before["ticks"] and after["sum_ok"], (before, after)
    for t, n in before["rounds"].items():
        assert after["rounds"][t] > n, (t, before["rounds"], after["rounds"])
    lines = st["leaf_lines"]
    for r in res.values():
        assert_clean_exit(r, duration + SLACK)
        for frames, comm, _ in r.rows:
            assert all(sane_frame(f) for f in frames), "%s: %s" % (r.name, frames)
    for name in ("pyprofile", "pyoffcpu"):
        r = res[name]
        (events, _, _, framed, no_ts, truncated, unreadable, _, _, _) = r.summary()
        assert truncated > 0 and unreadable > 0, r.describe()
        # the intact thread is exact
        assert_named(r, "intact_leaf", 5)
        for frames, _, _ in r.with_frame("intact_leaf"):
            py_frames = [frame_name(f) for f in python_frames(frames)]
            assert py_frames[-2:] == ["intact_outer", "intact_leaf"], frames
        # frame link into nowhere: the leaf, then [unreadable frame] as the root
        nowhere = r.with_frame("nowhere_leaf")
        assert nowhere, r.describe()
        for frames, _, _ in nowhere:
            py_frames = python_frames(frames)
            assert py_frames[0] == "[unreadable frame]" and len(py_frames) == 2, frames
        # loop: the leaf over and over, cut as [truncated]
        loop = r.with_frame("loop_leaf")
        assert loop, r.describe()
        for frames, _, _ in loop:
            py_frames = python_frames(frames)
            assert py_frames[0] == "[truncated]", frames[:3]
            assert {frame_name(f) for f in py_frames[1:]} == {"loop_leaf"}, set(py_frames)
        # huge name: not read; its file and line are right
        huge = r.with_frame("huge_outer")
        assert huge, r.describe()
        first, last = lines["huge"]
        for frames, _, _ in huge:
            py_frames = python_frames(frames)
            leaf = py_frames[-1]
            if leaf.startswith("[unknown code"):
                continue
            m = re.match(r"^\[unreadable name\] \(.*garbage_running\.py:(\d+)\)$", leaf)
            assert m and first <= int(m.group(1)) <= last, leaf
        assert st["huge_name"] not in r.report  # could not have been read


# ------------------------------------------------------------------ Ctrl-C

def test_sigint_reports_and_exits(tools, tmp_path):
    """No duration; SIGINT after 2 s: each tool prints what it collected
    and exits 0 within a few seconds."""
    w = Workload(host_py(), tmp_path, FAULTS, "forever")
    try:
        run = Tools(tools, str(tmp_path), ["-p", str(w.pid)], 0,
                    which=("pyprofile", "pyoffcpu", "pygil"))
        time.sleep(2)
        t0 = time.monotonic()
        run.signal(signal.SIGINT)
        res = run.finish(limit=2 + SLACK)
        stopped = time.monotonic() - t0
        alive = w.proc.alive()
    finally:
        w.close()
    assert alive
    assert stopped < 10, "tools took %.1fs to stop after SIGINT" % stopped
    for r in res.values():
        assert_clean_exit(r)
        assert SUMMARY.search(r.err), r.describe()
    assert_named(res["pyprofile"], "forever_spin", 20)
    assert_named(res["pyoffcpu"], "forever_spin", 20000)
    assert_named(res["pygil"], "forever_spin", 1000)
