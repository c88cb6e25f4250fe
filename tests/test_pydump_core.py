"""pydump --core, over the interpreter matrix: a core taken with gcore from
the stuck workload says what a live look says, and the core of the same
workload killed by SIGSEGV shows every thread's stack as the program's own
faulthandler report does, with the crashing thread marked.

The kernel writes the crash's core as the machine's core_pattern says; with
a plain file name (Debian's default "core") it lands in the workload's
directory. When core_pattern pipes cores elsewhere, the workload stops
itself with SIGSTOP after writing the same report, and gcore takes the core
of the stopped process; core_pattern is never changed. Run with:

    /usr/bin/python3 -m pytest -v tests/test_pydump_core.py
"""
import json
import os
import re
import resource
import subprocess
import time

import pytest

from test_pydump import Run
from test_pydump_stuck import Stuck, clock_left_out, pydump_json, started

GCORE_TIMEOUT = 120
CRASH_TIMEOUT = 60
FAULT_THREAD_RE = re.compile(
    r"^(Current thread|Thread) (0x[0-9a-f]+)(?: \[[^\]]*\])? \(most recent call first\):$")
FAULT_FRAME_RE = re.compile(r'^  File "(.*)", line (\d+|\?\?\?) in (.*)$')


def core_pattern():
    with open("/proc/sys/kernel/core_pattern") as fp:
        return fp.read().strip()


def kernel_writes_core_file():
    """Whether a crash leaves a file core* in the crashing process's
    directory: a core_pattern that is a plain name ("core", "core.%p")."""
    pattern = core_pattern()
    return pattern.startswith("core") and "/" not in pattern


def pydump_core(pydump, core, interp, *args):
    argv = [pydump, "-j", "--core", core] + list(args)
    if interp.root is not None:
        argv += ["--root", interp.root]
    run = Run(argv, timeout=60)
    run.assert_no_crash()
    assert run.returncode == 0, run.describe()
    doc = json.loads(run.out)
    assert len(doc["processes"]) == 1 and not doc["errors"], run.describe()
    return run, doc["processes"][0]


# gdb's own words when the core it writes is not faithful: a target in
# another PID namespace, or memory it could not read (gdb 13 cannot read
# thread stacks whose guard pages glibc 2.41 installs with
# MADV_GUARD_INSTALL, as in sid's interpreters) and writes as zeros
GDB_UNFAITHFUL = ("Target and debugger are in different PID namespaces",
                  "Memory read failed for corefile section")


def gcore(pid, prefix):
    """gcore's core of pid; skips when gdb says its core is not faithful."""
    cp = subprocess.run(["gcore", "-o", prefix, str(pid)], stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, timeout=GCORE_TIMEOUT,
                        universal_newlines=True)
    core = "%s.%d" % (prefix, pid)
    # [vsyscall] (0xffffffffff600000) is never readable, and never needed
    out = re.sub(r".*Memory read failed for corefile section, \d+ bytes at 0xf{8}\w+\.\n", "",
                 cp.stdout)
    said = [w for w in GDB_UNFAITHFUL if w in out]
    if said:
        if os.path.exists(core):
            os.unlink(core)
        pytest.skip("gcore cannot take a faithful core here: gdb says %r" % said[0])
    assert cp.returncode == 0 and os.path.exists(core), cp.stdout[-2000:]
    return core


def python_frames(t):
    return [(f["name"], f["file"], f["line"]) for f in t["frames"] if f["kind"] == "python"]


def by_ident(proc):
    return {t["ident"]: t for t in proc["threads"]}


# ----------------------------------------------------------------- gcore

@pytest.fixture(scope="module")
def gcored(interp, pydump, tmp_path_factory):
    host_tmp = tmp_path_factory.mktemp("gcore-" + interp.id)
    left_out = clock_left_out()  # before any of its threads blocks
    with started(interp, "stuck.py", host_tmp) as w:
        live = Stuck(w, left_out).settle(pydump)
        # the native frames a live look finds, just before the core is taken
        live.native_run, live.native = pydump_json(pydump, "-n", "-p", str(w.pid))
        core = gcore(w.pid, str(host_tmp / "core"))
        live.core = core
        try:
            yield live, pydump_core(pydump, core, interp, "-l")
        finally:
            os.unlink(core)


def test_gcore_matches_live(gcored):
    """Threads, names, Python frames of the threads that do not run,
    variables and lock waits: as the live look saw them just before."""
    live, (run, core) = gcored
    assert core["core"]["crash"] is False, core["core"]
    assert core["pid"] == live.w.pid and core["python"] == live.proc["python"]
    live_threads = by_ident(live.proc)
    core_threads = by_ident(core)
    assert set(core_threads) == set(live_threads), run.describe()
    for ident, lt in live_threads.items():
        ct = core_threads[ident]
        assert ct["name"] == lt["name"] and ct["main"] == lt["main"], (ct, lt)
        if lt["name"] == "burner":
            assert python_frames(ct)[0][0] == "burner"
            continue
        assert python_frames(ct) == python_frames(lt), lt["name"]
        assert [f.get("locals") for f in ct["frames"]] == [f.get("locals") for f in lt["frames"]]
        lw = (lt["state"]["waits_for"] or {})
        cw = (ct["state"]["waits_for"] or {})
        assert cw == lw or (lw.get("what") == "gil" and cw.get("what") == "gil"), (cw, lw)
        lcall = lt["state"]["syscall"] and lt["state"]["syscall"]["name"]
        ccall = ct["state"]["syscall"] and ct["state"]["syscall"]["name"]
        assert ccall == lcall, (lt["name"], ccall, lcall)


def frame_key(f):
    """A frame as both looks must give it: a native frame by name, address
    and file (its base name: a chroot's files are named from the host in a
    core), a Python frame by name and line."""
    if f["kind"] == "native":
        return ("native", f["name"], f["ip"], os.path.basename(f["module"] or ""))
    return (f["kind"], f.get("name"), f.get("line"))


def test_gcore_native_matches_live(gcored, pydump, interp):
    """--core -n on a gcore core: the native frames of every thread that
    does not run are the live look's, frame for frame (gcore writes no
    segment for code it can read back from the file: its mappings are
    executable by the file's program headers, not read-only)."""
    live, _ = gcored
    assert live.native_run.returncode == 0, live.native_run.describe()
    run, core = pydump_core(pydump, live.core, interp, "-n")
    live_threads = by_ident(live.native["processes"][0])
    core_threads = by_ident(core)
    assert set(core_threads) == set(live_threads), run.describe()
    for ident, lt in live_threads.items():
        if lt["name"] == "burner":
            continue
        ct = core_threads[ident]
        assert any(f["kind"] == "native" for f in lt["frames"]), (lt["name"], lt["native_note"])
        assert [frame_key(f) for f in ct["frames"]] == [frame_key(f) for f in lt["frames"]], \
            (lt["name"], ct["native_note"], run.describe())
        assert ct["native_note"] == lt["native_note"], lt["name"]


# ----------------------------------------------------------------- a crash

class Crash:
    def __init__(self, interp, scratch, stderr_path):
        self.interp = interp
        self.scratch = scratch
        self.stderr_path = stderr_path
        self.core = None
        self.report = None

    def read_report(self):
        """faulthandler's report: {ident: [(name, file, line), ...]}, and the
        ident of the current thread."""
        threads, current, cur = {}, None, None
        with open(self.stderr_path, errors="replace") as fp:
            for line in fp:
                line = line.rstrip("\n")
                m = FAULT_THREAD_RE.match(line)
                if m:
                    cur = threads.setdefault(m.group(2), [])
                    if m.group(1) == "Current thread":
                        current = m.group(2)
                    continue
                m = FAULT_FRAME_RE.match(line)
                if m and cur is not None:
                    cur.append((m.group(3), m.group(1),
                                None if m.group(2) == "???" else int(m.group(2))))
                elif not line.startswith("  "):
                    cur = None
        return threads, current


def raise_core_limit():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


@pytest.fixture(scope="module")
def crashed(interp, pydump, tmp_path_factory):
    here = os.path.dirname(os.path.abspath(__file__))
    host_tmp = tmp_path_factory.mktemp("crash-" + interp.id)
    scratch = interp.scratch(host_tmp)
    stderr_path = os.path.join(str(host_tmp), "workload.stderr")
    how = "crash" if kernel_writes_core_file() else "stop"
    proc = None
    try:
        script = interp.place(os.path.join(here, "workloads", "stuck.py"))
        with open(stderr_path, "wb") as err:
            # cwd: where a wrapper that dies of the same signal (unshare
            # re-raises its child's) leaves its own core, apart from the
            # workload's
            proc = interp.spawn([script, scratch.proc_path("out.json"), how], stderr=err,
                                preexec_fn=raise_core_limit, cwd=str(host_tmp))
        c = Crash(interp, scratch, stderr_path)
        deadline = time.monotonic() + CRASH_TIMEOUT
        if how == "crash":
            proc.popen.wait(timeout=CRASH_TIMEOUT)
            cores = [n for n in os.listdir(scratch.host) if n.startswith("core")]
            assert len(cores) == 1, "no core in %s (core_pattern %r): %s" % (
                scratch.host, core_pattern(), os.listdir(scratch.host))
            c.core = scratch.host_path(cores[0])
        else:
            pid = proc.pid
            while not open("/proc/%d/stat" % pid).read().split(") ")[1].startswith("T"):
                assert time.monotonic() < deadline, "the workload never stopped"
                time.sleep(0.1)
            c.core = gcore(pid, scratch.host_path("core"))
        c.run, c.proc = pydump_core(pydump, c.core, interp, "-l")
        yield c
    finally:
        if proc is not None:
            proc.kill()
        scratch.cleanup()


def test_crash_matches_faulthandler(crashed):
    """Every thread faulthandler reported, with the same frames (names as
    co_name, file, line), the crashing thread marked; the signal noted."""
    report, current = crashed.read_report()
    assert report and current, "no faulthandler report in %s" % crashed.stderr_path
    proc = crashed.proc
    threads = by_ident(proc)
    problems = []
    for ident, frames in report.items():
        t = threads.get("0x%x" % int(ident, 16))
        if t is None:
            problems.append("thread %s: not in the dump" % ident)
            continue
        got = [(n.split(".")[-1], f, l) for n, f, l in python_frames(t)]
        want = frames
        if t["name"] == "burner":   # it ran on while faulthandler wrote
            got, want = got[1:], want[1:]
            if python_frames(t)[0][0] != "burner":
                problems.append("burner: innermost frame %s" % (python_frames(t)[0],))
        if got != want:
            problems.append("thread %s (%s):\n      dump:         %s\n      faulthandler: %s" % (
                ident, t["name"], got, want))
    assert not problems, "%s:\n  %s\n%s" % (crashed.interp.id, "\n  ".join(problems),
                                             crashed.run.describe())
    assert set(threads) == {"0x%x" % int(i, 16) for i in report}, (set(threads), set(report))
    crasher = threads["0x%x" % int(current, 16)]
    assert crasher["name"] == "crasher", crasher["name"]
    core = proc["core"]
    if core["crash"]:
        assert core["signal_name"] == "SIGSEGV" and crasher["crashed"], core
        assert core["thread"] == crasher["tid"]
        assert [t["name"] for t in proc["threads"] if t["crashed"]] == ["crasher"]


def test_crash_locals_and_waits(crashed):
    """The core keeps what the live process had: the main thread's
    variables and the deadlocked threads' locks."""
    with open(crashed.scratch.host_path("out.json")) as fp:
        truth = json.load(fp)
    threads = {t["name"]: t for t in crashed.proc["threads"]}
    main = [f for f in threads["MainThread"]["frames"] if f["kind"] == "python"]
    first = [f["name"] for f in main].index("deep")
    for k, want in enumerate(truth["frames"]):
        got = {v["name"]: [v["kind"], v["repr"]] for v in main[first + k]["locals"]}
        assert got == want["vars"], (main[first + k]["name"], got, want["vars"])
    for name, lock in (("dead-a", truth["locks"]["lock_b"]), ("dead-b", truth["locks"]["lock_a"])):
        w = threads[name]["state"]["waits_for"]
        assert w["what"] == "lock" and w["lock"] == "0x%x" % lock, (name, w)


def test_crash_native(crashed, pydump):
    """--native from a core: every thread's registers are in it, so every
    thread gets native frames (the running one too), its Python frames
    unchanged; the crashing thread's innermost frame is native code."""
    run, proc = pydump_core(pydump, crashed.core, crashed.interp, "-n")
    plain = by_ident(crashed.proc)
    for t in proc["threads"]:
        frames = t["frames"]
        py = [(f["name"], f["line"]) for f in frames if f["kind"] == "python"]
        assert py == [(f["name"], f["line"]) for f in plain[t["ident"]]["frames"]
                      if f["kind"] == "python"], t["name"]
        assert frames and (frames[0]["kind"] == "native" or t["native_note"]), (t["name"], frames[:2])
        assert all(f["kind"] != "gap" or "unknown" not in f["reason"] for f in frames), t["name"]
    crasher = [t for t in proc["threads"] if t["name"] == "crasher"][0]
    assert crasher["frames"][0]["kind"] == "native", crasher["frames"][:3]
