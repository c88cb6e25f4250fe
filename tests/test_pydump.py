"""pydump against real Python processes, over the interpreter matrix.

Ground truth comes from the workloads themselves: tests/workloads/*.py write
their own stacks (sys._current_frames()) to a JSON file, then park forever.
pydump's output must match it exactly. Run with:

    /usr/bin/python3 -m pytest -v tests/test_pydump.py
"""
import contextlib
import json
import os
import re
import shlex
import struct
import subprocess
import time

import pytest

import interpreters
from conftest import tool_path

PYDUMP_TIMEOUT = 10
OUT_TIMEOUT = 20
SETTLE_TRIES = 10
SETTLE_PAUSE = 0.3

HEADER_RE = re.compile(
    r'^Process (\d+) "(.*)": CPython (\S+), (.+) \[offsets: (debug offsets|dwarf|table)\]$')
THREAD_RE = re.compile(
    r'^Thread (\d+) "(.*?)"(?: \(ns tid (\d+)\))?(?: name "(.*)")?((?: \[[^\]]+\])*)$')
MARKERS = ("(no Python frames)", "[truncated]", "[unreadable frame]")


# ----------------------------------------------------------------- running pydump

class Run:
    """One pydump run: returncode (None if it hung), out/err text."""

    def __init__(self, argv, timeout=PYDUMP_TIMEOUT):
        self.argv = argv
        self.hung = False
        self.decode_error = None
        t0 = time.monotonic()
        try:
            cp = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, timeout=timeout)
            self.returncode, raw_out, raw_err = cp.returncode, cp.stdout, cp.stderr
        except subprocess.TimeoutExpired as e:
            self.hung = True
            self.returncode, raw_out, raw_err = None, e.stdout or b"", e.stderr or b""
        self.seconds = time.monotonic() - t0
        self.raw_out = raw_out
        try:
            self.out = raw_out.decode("utf-8")
        except UnicodeDecodeError as e:
            self.decode_error = str(e)
            self.out = raw_out.decode("utf-8", "replace")
        self.err = raw_err.decode("utf-8", "replace")

    def describe(self):
        return "%s -> rc=%s%s after %.1fs\nstderr: %s\nstdout (first 3000 chars):\n%s" % (
            " ".join(self.argv), self.returncode, " (HUNG, killed)" if self.hung else "",
            self.seconds, self.err.strip() or "(empty)", self.out[:3000])

    def assert_no_crash(self):
        assert not self.hung, "pydump hung:\n" + self.describe()
        assert self.returncode >= 0, "pydump killed by signal %d:\n%s" % (
            -self.returncode, self.describe())
        assert self.returncode in (0, 1), "unexpected exit status:\n" + self.describe()


def run_pydump(pydump, pid):
    return Run([pydump, "-p", str(pid)])


# ----------------------------------------------------------------- parsing output

class ParseError(Exception):
    pass


class DumpThread:
    def __init__(self, tid, comm, ns_tid, name, flags):
        self.tid = tid
        self.comm = comm
        self.ns_tid = ns_tid
        self.name = name
        self.flags = flags
        self.state = None   # the 2-space state line, without its indent
        self.lines = []     # frame lines without the 4-space indent
        self.variables = []  # per frame line: its 8-space variable lines

    @property
    def id(self):
        """The tid the process itself knows: ns tid if printed, else host tid."""
        return self.ns_tid if self.ns_tid is not None else self.tid


class Dump:
    def __init__(self, text):
        lines = text.split("\n")
        while lines and lines[-1] == "":
            lines.pop()
        if not lines:
            raise ParseError("empty output")
        m = HEADER_RE.match(lines[0])
        if not m:
            raise ParseError("bad header line: %r" % lines[0])
        self.header = lines[0]
        self.pid = int(m.group(1))
        self.comm = m.group(2)
        self.version = m.group(3)
        self.path = m.group(4)
        self.offsets = m.group(5)
        self.threads = []
        i = 1
        while i < len(lines):
            if lines[i] != "":
                raise ParseError("line %d: expected a blank line, got %r" % (i + 1, lines[i]))
            i += 1
            m = THREAD_RE.match(lines[i]) if i < len(lines) else None
            if not m:
                raise ParseError("line %d: expected a Thread line, got %r" % (
                    i + 1, lines[i] if i < len(lines) else "EOF"))
            t = DumpThread(int(m.group(1)), m.group(2),
                           int(m.group(3)) if m.group(3) else None, m.group(4),
                           re.findall(r"\[([^\]]+)\]", m.group(5)))
            i += 1
            if i < len(lines) and re.match(r"^  \S", lines[i]):
                t.state = lines[i][2:]
                i += 1
            while i < len(lines) and lines[i] != "":
                if re.match(r"^        \S", lines[i]) and t.lines:
                    t.variables[-1].append(lines[i][8:])
                elif re.match(r"^    \S", lines[i]):
                    t.lines.append(lines[i][4:])
                    t.variables.append([])
                else:
                    raise ParseError("line %d: bad frame line %r" % (i + 1, lines[i]))
                i += 1
            if not t.lines:
                raise ParseError("thread %d has no lines" % t.tid)
            self.threads.append(t)
        if not self.threads:
            raise ParseError("no threads")

    def by_id(self):
        return {t.id: t for t in self.threads}


def frame_line(frame):
    name, filename, lineno = frame
    return "%s (%s:%s)" % (name, filename, "?" if lineno is None else lineno)


# ----------------------------------------------------------------- workloads

class Workload:
    """A workload that wrote its ground truth, plus pydump's settled view of it."""

    def __init__(self, interp, proc, truth, scratch, stderr_path):
        self.interp = interp
        self.proc = proc
        self.truth = truth
        self.scratch = scratch
        self.stderr_path = stderr_path
        self.run = None
        self.dump = None
        self.parse_error = None

    @property
    def pid(self):
        return self.proc.pid

    def truth_ids(self):
        return {t["native_id"] for t in self.truth["threads"]}

    def settle(self, pydump):
        """Runs pydump until it shows exactly the threads of the ground truth
        (the reporter thread may still be exiting); keeps the last run."""
        for attempt in range(SETTLE_TRIES):
            if attempt:
                time.sleep(SETTLE_PAUSE)
            self.run = run_pydump(pydump, self.pid)
            try:
                self.dump = Dump(self.run.out)
                self.parse_error = None
            except ParseError as e:
                self.dump, self.parse_error = None, str(e)
                continue
            if {t.id for t in self.dump.threads} == self.truth_ids():
                break
        return self

    def require_dump(self):
        """Asserts pydump succeeded and its output parsed."""
        self.run.assert_no_crash()
        assert self.run.returncode == 0, "pydump failed:\n" + self.run.describe()
        assert self.run.decode_error is None, "output is not UTF-8: %s\n%s" % (
            self.run.decode_error, self.run.describe())
        assert self.dump is not None, "unparsable output: %s\n%s" % (
            self.parse_error, self.run.describe())
        return self.dump


@contextlib.contextmanager
def started(interp, script, host_tmp):
    """Starts workloads/<script> OUT.json under interp, waits for OUT.json,
    yields a Workload; always kills the process."""
    here = os.path.dirname(os.path.abspath(__file__))
    scratch = interp.scratch(host_tmp)
    stderr_path = os.path.join(str(host_tmp), "workload.stderr")
    proc = None
    try:
        script_path = interp.place(os.path.join(here, "workloads", script))
        with open(stderr_path, "wb") as err:
            proc = interp.spawn([script_path, scratch.proc_path("out.json")], stderr=err)
        out = scratch.host_path("out.json")
        deadline = time.monotonic() + OUT_TIMEOUT
        while not os.path.exists(out):
            if not proc.alive() or time.monotonic() > deadline:
                with open(stderr_path, errors="replace") as fp:
                    why = fp.read()
                pytest.fail("%s on %s wrote no %s (%s); stderr:\n%s" % (
                    script, interp.id, out,
                    "exited %s" % proc.popen.returncode if not proc.alive() else "timeout",
                    why))
            time.sleep(0.05)
        with open(out, encoding="utf-8") as fp:
            truth = json.load(fp)
        proc.pid    # resolve the host pid (PID namespace: unshare's child)
        yield Workload(interp, proc, truth, scratch, stderr_path)
    finally:
        if proc is not None:
            proc.kill()
        scratch.cleanup()


@pytest.fixture(scope="module")
def known(interp, pydump, tmp_path_factory):
    """known_stacks.py running under interp, with pydump's settled output."""
    host_tmp = tmp_path_factory.mktemp("known-" + interp.id)
    with started(interp, "known_stacks.py", host_tmp) as w:
        yield w.settle(pydump)


# ----------------------------------------------------------------- ground truth helpers

def proc_comm(pid, tid=None):
    path = "/proc/%d/comm" % pid if tid is None else "/proc/%d/task/%d/comm" % (pid, tid)
    with open(path, "rb") as fp:
        return fp.read().rstrip(b"\n").decode("utf-8", "replace")


def proc_nspids(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as fp:
        for line in fp:
            if line.startswith("NSpid:"):
                return [int(x) for x in line.split()[1:]]
    return None


def mapped_files(pid):
    files = set()
    with open("/proc/%d/maps" % pid) as fp:
        for line in fp:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith("/"):
                files.add(os.path.realpath(parts[5].rstrip("\n").replace(" (deleted)", "")))
    return files


def elf_sections_and_build_id(path):
    """Section names of an ELF64 little-endian file, and its GNU build id."""
    with open(path, "rb") as fp:
        data = fp.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return set(), None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    stroff = secs[shstrndx][4]

    def name(s):
        start = stroff + s[0]
        return data[start:data.index(b"\0", start)].decode()

    names, build_id = set(), None
    for s in secs:
        n = name(s)
        names.add(n)
        if n == ".note.gnu.build-id":
            off = s[4]
            namesz, descsz, _ = struct.unpack_from("<III", data, off)
            desc = off + 12 + ((namesz + 3) & ~3)
            build_id = data[desc:desc + descsz].hex()
    return names, build_id


def expected_offsets(interp, version, elf_host_path):
    """debug offsets on 3.13+; else dwarf if the interpreter ELF has DWARF
    (in itself or as /usr/lib/debug/.build-id/xx/yyy.debug); else table."""
    if tuple(version[:2]) >= (3, 13):
        return "debug offsets"
    names, build_id = elf_sections_and_build_id(elf_host_path)
    if ".debug_info" in names:
        return "dwarf"
    if build_id:
        dbg = interp.host_path("/usr/lib/debug/.build-id/%s/%s.debug" % (build_id[:2], build_id[2:]))
        if os.path.exists(dbg):
            return "dwarf"
    return "table"


# ----------------------------------------------------------------- known_stacks

def test_exit_status(known):
    known.require_dump()
    assert "pydump: PID" not in known.run.err, known.run.describe()


def test_threads(known):
    """Thread list: exactly the process's threads, main first then by tid,
    [main] on the main thread, comm as in /proc, ns tids in a PID namespace."""
    dump = known.require_dump()
    truth = known.truth
    printed = [t.id for t in dump.threads]
    assert sorted(printed) == sorted(known.truth_ids()), (
        "thread ids differ (settled after %d tries)\n%s" % (SETTLE_TRIES, known.run.describe()))
    main_id = [t["native_id"] for t in truth["threads"] if t["main"]]
    assert len(main_id) == 1
    assert dump.threads[0].id == main_id[0], "main thread is not listed first"
    rest = [t.tid for t in dump.threads[1:]]
    assert rest == sorted(rest), "threads after main are not ordered by tid: %s" % rest
    for t in dump.threads:
        assert ("main" in t.flags) == (t.id == main_id[0]), "[main] flag wrong on %d" % t.tid
    assert sum("GIL" in t.flags for t in dump.threads) <= 1
    for t in dump.threads:
        assert t.comm == proc_comm(known.pid, t.tid), "comm of thread %d" % t.tid
        if known.interp.pidns:
            assert t.ns_tid is not None, "no (ns tid N) on thread %d" % t.tid
            assert proc_nspids(known.pid, t.tid) == [t.tid, t.ns_tid], (
                "thread %d: printed ns tid %s, /proc says NSpid %s" % (
                    t.tid, t.ns_tid, proc_nspids(known.pid, t.tid)))
        else:
            assert t.ns_tid is None, "(ns tid) printed outside a PID namespace"
            assert os.path.isdir("/proc/%d/task/%d" % (known.pid, t.tid))
    if known.interp.pidns:
        assert truth["pid"] == 1 and dump.pid != 1


def test_header(known):
    dump = known.require_dump()
    truth = known.truth
    assert dump.pid == known.pid
    assert dump.comm == proc_comm(known.pid)
    real = ".".join(map(str, truth["version"]))
    assert re.match(re.escape(real) + r"(?!\d)", dump.version), (
        "version: printed %s, process says %s" % (dump.version, real))
    # the interpreter's ELF (executable or libpython), as the process sees it
    assert dump.path.startswith("/"), dump.path
    if known.interp.root is not None:
        root = os.path.realpath(known.interp.root)
        assert not dump.path.startswith(root + "/"), (
            "path %s is as the host sees it; the process (chroot %s) sees it as %s" % (
                dump.path, root, dump.path[len(root):]))
    host = os.path.realpath(known.interp.host_path(dump.path))
    assert host in mapped_files(known.pid), (
        "%s (host: %s) is not mapped in the process" % (dump.path, host))
    base = os.path.basename(dump.path)
    if not base.startswith("libpython"):
        assert dump.path == truth["executable_realpath"], (
            "path %s is neither libpython nor the executable %s" % (
                dump.path, truth["executable_realpath"]))
    want = expected_offsets(known.interp, truth["version"], host)
    assert dump.offsets == want, "offsets source: printed %r, expected %r" % (dump.offsets, want)
    # the spec names these explicitly
    spec = {"host-3.11": "table", "pyenv-3.11.7": "dwarf", "bullseye-3.9": "table"}
    if known.interp.id in spec:
        assert dump.offsets == spec[known.interp.id]


def test_stacks(known):
    """Every thread's frames equal sys._current_frames(): name, file, line, order."""
    dump = known.require_dump()
    shown = dump.by_id()
    problems = []
    for t in known.truth["threads"]:
        want = [frame_line(f) for f in t["frames"]]
        got = shown.get(t["native_id"])
        if got is None:
            problems.append("thread %s (%s): missing" % (t["native_id"], t["name"]))
            continue
        if got.lines != want:
            n = next((i for i, (a, b) in enumerate(zip(got.lines, want)) if a != b),
                     min(len(got.lines), len(want)))
            problems.append(
                "thread %s (%s): %d frames expected, %d printed; first difference at "
                "frame %d:\n      expected: %s\n      printed:  %s" % (
                    t["native_id"], t["name"], len(want), len(got.lines), n,
                    want[n] if n < len(want) else "(end)",
                    got.lines[n] if n < len(got.lines) else "(end)"))
    assert not problems, "%s: %d thread(s) wrong:\n  %s" % (
        known.interp.id, len(problems), "\n  ".join(problems))


def without_times(text):
    """The output without its state lines' durations (off-CPU and CPU time
    move on between two looks; everything else must not)."""
    return re.sub(r"\d+(\.\d+)?s\b|\d+m\d+s|\d+h\d+m", "T", text)


def test_repeatable(known, pydump):
    """A second and third look at the parked process give the same output,
    but for the durations in the state lines."""
    first = known.require_dump()
    for _ in range(2):
        again = run_pydump(pydump, known.pid)
        again.assert_no_crash()
        assert without_times(again.out) == without_times(known.run.out), (
            "output changed between runs")
    assert first.threads
    assert all(t.state for t in first.threads if t.tid), "a thread without its state line"


# ----------------------------------------------------------------- garbage in memory

def test_garbage(interp, pydump, tmp_path):
    """Corrupted name length and a frame loop: pydump finishes, does not crash,
    prints the intact threads exactly; the loop ends in [truncated]."""
    with started(interp, "garbage.py", tmp_path) as w:
        w.settle(pydump)
        w.run.assert_no_crash()
        assert w.dump is not None, "unparsable output: %s\n%s" % (w.parse_error, w.run.describe())
        assert w.run.seconds < PYDUMP_TIMEOUT
        truth = w.truth
        shown = w.dump.by_id()
        by_name = {t["name"]: t for t in truth["threads"]}
        assert {t.id for t in w.dump.threads} == w.truth_ids(), w.run.describe()

        # intact threads: exact
        for name in ("MainThread", "intact"):
            t = by_name[name]
            got = shown[t["native_id"]].lines
            assert got == [frame_line(f) for f in t["frames"]], "%s thread:\n%s" % (
                name, w.run.describe())

        # the garbled name: [unreadable frame] or some name with the right (file:line)
        g = truth["garbled"]
        assert g["done"], "workload could not garble: %s" % g["why"]
        t = by_name[g["thread"]]
        want = [frame_line(f) for f in t["frames"]]
        got = shown[t["native_id"]].lines
        idx = g["frame_index"]
        assert got and len(got) <= len(want) + 1, got
        for i, line in enumerate(got):
            if line == "[truncated]":
                assert i == len(got) - 1, "[truncated] not last"
            elif line == "[unreadable frame]":
                pass
            elif i == idx:
                wf = t["frames"][idx]
                assert line.endswith(" (%s:%s)" % (wf[1], wf[2])), (
                    "garbled frame printed as %r" % line[-200:])
            else:
                assert line == want[i], "frame %d of the garbled thread: %r != %r" % (
                    i, line, want[i])

        # the frame loop: the innermost frame (repeated or not) then [truncated]
        lp = truth["loop"]
        loop_required = tuple(truth["version"][:2]) < (3, 11)
        if loop_required:
            assert lp["done"], "workload could not make the loop: %s" % lp["why"]
        if lp["done"]:
            t = by_name[lp["thread"]]
            got = shown[t["native_id"]].lines
            inner = frame_line(t["frames"][0])
            assert got[-1] == "[truncated]", "loop not ended by [truncated]: %r" % got[-5:]
            assert got[0] == inner, got[:3]
            assert all(l in (inner, "[unreadable frame]") for l in got[:-1]), set(got)


# ----------------------------------------------------------------- errors

def _wait_exe(pid, suffix, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if os.readlink("/proc/%d/exe" % pid).endswith(suffix):
                return
        except OSError:
            pass
        time.sleep(0.01)
    raise AssertionError("pid %d never became %s" % (pid, suffix))


def _assert_error(run, pid, reason):
    run.assert_no_crash()
    assert run.returncode == 1, run.describe()
    prefix = "pydump: PID %d: " % pid
    assert any(l.startswith(prefix) and reason in l for l in run.err.splitlines()), (
        "stderr lacks %r%r:\n%s" % (prefix, reason, run.describe()))


def test_not_python(pydump):
    p = subprocess.Popen(["sleep", "1000"])
    try:
        _wait_exe(p.pid, "/sleep")
        _assert_error(run_pydump(pydump, p.pid), p.pid, "is this a Python process?")
    finally:
        p.kill()
        p.wait()


READY_CODE = ("import sys, time; sys.stdout.write('ready\\n'); sys.stdout.flush(); "
              "time.sleep(1000)")


def test_without_root_says_to_run_as_root(interp, pydump):
    """pydump as nobody on a root's Python process: told to run it as root,
    as the BPF tools tell a user who is not root, not only "Permission
    denied"."""
    proc = interp.spawn(["-c", READY_CODE], stdout=subprocess.PIPE)
    try:
        assert proc.popen.stdout.readline() == b"ready\n"
        run = Run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                   pydump, "-p", str(proc.pid)])
        _assert_error(run, proc.pid, "Permission denied: must be run as root")
        assert "Fix: sudo " in run.err, run.describe()
    finally:
        proc.kill()


def _python_child(shell_pid):
    """The pid of the shell's child, once it runs Python (its exe changed
    from the shell's)."""
    for _ in range(200):
        with contextlib.suppress(OSError):
            with open("/proc/%d/task/%d/children" % (shell_pid, shell_pid)) as f:
                kids = f.read().split()
            if kids and os.readlink("/proc/%s/exe" % kids[0]) != os.readlink(
                    "/proc/%d/exe" % shell_pid):
                return int(kids[0])
        time.sleep(0.05)
    raise AssertionError("no Python child of shell pid %d" % shell_pid)


def test_shell_wrapper_names_its_python_child(interp, pydump):
    """sh -c 'python3 ...' given as the PID: the message names the shell's
    Python child and says to use -p CHILD; pyprofile's adds --children."""
    if interp.pidns:
        pytest.skip("the shell's child is unshare, which runs no Python itself")
    cmd = " ".join(shlex.quote(a) for a in interp.argv + ["-c", READY_CODE]) + "; true"
    shell = subprocess.Popen(["sh", "-c", cmd], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, env=interpreters._clean_env())
    try:
        assert shell.stdout.readline() == b"ready\n"
        child = _python_child(shell.pid)
        _assert_error(run_pydump(pydump, shell.pid), shell.pid,
                      "sh runs no Python; its child PID %d (" % child)
        run = run_pydump(pydump, shell.pid)
        assert run.err.rstrip().endswith("does: use -p %d" % child), run.describe()
        # the sanitizer build has pydump alone
        if interp.kind == "host" and os.access(tool_path("pyprofile"), os.X_OK):
            prof = Run([tool_path("pyprofile"), "-p", str(shell.pid), "1"])
            assert prof.returncode == 1, prof.describe()
            assert ("PID %d (sh): sh runs no Python; its child PID %d (" % (shell.pid, child)
                    in prof.err), prof.describe()
            assert "use -p %d or --children; skipped" % child in prof.err, prof.describe()
    finally:
        with contextlib.suppress(OSError):
            with open("/proc/%d/task/%d/children" % (shell.pid, shell.pid)) as f:
                for kid in f.read().split():
                    os.kill(int(kid), 9)
        shell.kill()
        shell.wait()


GLOBALS_SHOWN = [("COUNTER", "42"), ("CONFIG", "{'name': 'svc', 'port': 8080}"),
                 ("NAME", "'gateway'"), ("_pending", "[1, 2, 3]"), ("RATIO", "0.5"),
                 ("ENABLED", "True")]


def test_globals(interp, pydump, workloads):
    """--globals: the data globals of the module on the stack, in the order
    the module assigned them, with their reprs; its imported modules,
    functions, classes and dunder names left out; text and JSON agree."""
    script = interp.place(os.path.join(workloads, "module_globals.py"))
    proc = interp.spawn([script], stdout=subprocess.PIPE)
    try:
        assert proc.popen.stdout.readline() == b"ready\n"
        run = Run([pydump, "-g", "-p", str(proc.pid)])
        assert run.returncode == 0, run.describe()
        text = run.out.split("\nModule globals\n", 1)
        assert len(text) == 2, run.describe()
        lines = text[1].splitlines()
        assert lines[0].startswith("  module __main__ (%s) [" % script), run.describe()
        assert lines[1:1 + len(GLOBALS_SHOWN)] == [
            "    %s = %s" % kv for kv in GLOBALS_SHOWN], run.describe()
        jrun = Run([pydump, "-g", "-j", "-p", str(proc.pid)])
        assert jrun.returncode == 0, jrun.describe()
        doc = json.loads(jrun.out)["processes"][0]
        (main,) = [g for g in doc["globals"] if g["module"] == "__main__"]
        assert main["file"] == script
        assert [(v["name"], v["repr"]) for v in main["variables"]] == GLOBALS_SHOWN
        # json, sys, time, Handler, work and the module's dunder names
        assert main["hidden"] >= 5 + 5, main
        assert not main["truncated"] and doc["globals_unreadable_frames"] == 0, doc
    finally:
        proc.kill()


def test_unsupported_version(old_interp, pydump):
    code = "import sys, time; sys.stdout.write('ready\\n'); sys.stdout.flush(); time.sleep(1000)"
    proc = old_interp.spawn(["-c", code], stdout=subprocess.PIPE)
    try:
        assert proc.popen.stdout.readline() == b"ready\n"
        major, minor = old_interp.version[:2]
        _assert_error(run_pydump(pydump, proc.pid), proc.pid,
                      "unsupported Python %d.%d" % (major, minor))
    finally:
        proc.kill()


def test_no_such_process(pydump):
    p = subprocess.Popen(["true"])
    p.wait()
    pid = p.pid
    assert not os.path.exists("/proc/%d" % pid)
    _assert_error(run_pydump(pydump, pid), pid, "no such process")


def _check_racy(run, pid):
    run.assert_no_crash()
    if run.returncode == 1:
        assert run.err.startswith("pydump: PID %d: " % pid), run.describe()
    else:
        Dump(run.out)   # whatever it saw, it must be well-formed


def test_process_exiting(pydump):
    """Short-lived processes, dumped while they start, run and exit."""
    for i in range(20):
        p = subprocess.Popen([interpreters.HOST_PYTHON, "-c", "pass"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if i % 4:
                time.sleep(0.005 * i)
            _check_racy(run_pydump(pydump, p.pid), p.pid)
        finally:
            p.kill()
            p.wait()


def test_zombie(pydump):
    """An exited but unreaped Python process (no memory left to read)."""
    p = subprocess.Popen([interpreters.HOST_PYTHON, "-c", "pass"])
    try:
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
        run = run_pydump(pydump, p.pid)
        run.assert_no_crash()
        assert run.returncode == 1, run.describe()
        assert run.err.startswith("pydump: PID %d: " % p.pid), run.describe()
    finally:
        p.wait()
