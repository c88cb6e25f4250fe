"""What the tools refuse to take on trust, and what they say instead.

Real interpreters, made to show each case:

  a process that runs no Python code: `python -` blocked reading its
  program from a pipe (initialised, one thread, no frame to check the
  offsets against)                       test_pydump_waits_for_a_frame
                                         test_pyprofile_waits_for_a_frame
  DWARF that does not fit the binary it was found for (a copy of the
  host's python3.11 with a debug file whose co_firstlineno is 4 bytes
  off: validation alone passes it, and every line number is wrong)
                                         test_dwarf_that_disagrees_with_the_table
  a pre-release whose _Py_DebugOffsets layout is older than the one we
  know (sid's 3.13/3.14/3.15 with their version patched to the last
  pre-release before that layout, and to the first with it)
                                         test_prerelease_layouts
  processes that end before they can be opened (a loop of `python3 -c
  pass` under a system-wide run)         test_processes_that_end_first
  a sampling rate above what the kernel allows or reaches
                                         test_sampling_rate_above_the_limit
                                         test_sampling_rate_the_kernel_throttles

Run with:  /usr/bin/python3 -m pytest -v tests/test_trust.py
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import threading
import time

import pytest

from conftest import tool_path
import fake_dwarf
import interpreters
from profiling import start_tool, finish, parse_folded, frame_name, cpu_seconds

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START_TIMEOUT = 180   # compiling BPF on a busy machine
SLACK = 30


def interps(*ids):
    matrix, _ = interpreters.discover()
    by_id = {i.id: i for i in matrix}
    params = []
    for want in ids:
        found = by_id.get(want)
        if isinstance(found, interpreters.Interpreter):
            params.append(pytest.param(found, id=want))
        else:
            params.append(pytest.param(None, id=want, marks=pytest.mark.skip(
                reason="%s not in the interpreter matrix" % want)))
    return params


def run(argv, timeout=120, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout, **kw)


# ------------------------------------------------------------ no Python frame

class StdinPython:
    """`python -` reading its program from a pipe we hold: until we write
    it, the interpreter is initialised and its only thread sits in read()
    with no Python frame."""

    def __init__(self, interp):
        self.interp = interp
        self.popen = subprocess.Popen(interp.argv + ["-"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=interpreters._clean_env())
        self.proc = interpreters.PyProcess(interp, self.popen)
        self.pid = self.proc.pid
        deadline = time.monotonic() + 30
        while not self.reading_program():
            assert time.monotonic() < deadline, "python - never read its program"
            assert self.popen.poll() is None, "python - exited"
            time.sleep(0.05)

    def syscall(self):
        """/proc/PID/syscall's words: the call the thread is blocked in and
        its arguments, or ["running"]; [] if it cannot be read."""
        try:
            with open("/proc/%d/syscall" % self.pid) as fp:
                return fp.read().split()
        except OSError:
            return []

    def reading_program(self):
        """Blocked in read(0, ...): the parser waits for the program."""
        return self.syscall()[:2] == ["0", "0x0"]

    def wait_asleep(self, timeout=30):
        """Until the thread is blocked in a system call other than read or
        write (the program's sleep): a thread that has just said so may
        still be on the line before."""
        deadline = time.monotonic() + timeout
        while True:
            nr = (self.syscall() or [""])[0]
            if nr.isdigit() and nr not in ("0", "1"):
                return
            assert time.monotonic() < deadline, "never blocked: %r" % nr
            time.sleep(0.02)

    def send(self, program):
        self.popen.stdin.write(program.encode())
        self.popen.stdin.close()

    def wait_line(self, want, timeout=30):
        """Reads the program's stdout until the line WANT."""
        got = []

        def read():
            for line in iter(self.popen.stdout.readline, b""):
                got.append(line.decode().strip())
                if got[-1] == want:
                    return
        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        assert got and got[-1] == want, "program said %r, not %r" % (got, want)

    def close(self):
        self.proc.kill()


PARKED = """import sys, time
def parked_after_stdin():
    sys.stdout.write("parked\\n"); sys.stdout.flush()
    time.sleep(600)
parked_after_stdin()
"""

HOT = """import sys, time
def hot_after_stdin():
    end = time.process_time() + %s
    while time.process_time() < end:
        sum(range(1000))
hot_after_stdin()
sys.stdout.write("hot done\\n"); sys.stdout.flush()
"""


def test_pydump_waits_for_a_frame(interp, pydump):
    """No thread runs Python code: pydump waits a second for one, then
    refuses with that reason (it printed '(no Python frames)' with offsets
    nothing had checked). Once the program runs, the dump is exact."""
    w = StdinPython(interp)
    try:
        t0 = time.monotonic()
        r = run([pydump, "-p", str(w.pid)])
        took = time.monotonic() - t0
        assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
        assert r.stderr == ("pydump: PID %d: no thread ran Python code within 1.0 s, so its "
                            "offsets could not be checked against a frame: not read\n" % w.pid), \
            r.stderr
        assert took >= 1.0, took
        w.send(PARKED)
        w.wait_line("parked")
        w.wait_asleep()  # the line the dump must show is the sleep's
        r = run([pydump, "-p", str(w.pid)])
        assert r.returncode == 0, r.stderr
        frames = [l.strip() for l in r.stdout.splitlines() if l.startswith("    ")]
        assert frames == ["parked_after_stdin (<stdin>:4)", "<module> (<stdin>:5)"], r.stdout
    finally:
        w.close()


@pytest.mark.parametrize("py", interps("host-3.11", "bullseye-3.9", "sid-3.14"))
def test_pyprofile_waits_for_a_frame(py, tmp_path):
    """-p on two processes that run no Python code: pyprofile says it waits
    for one; the first then runs a hot function, which is profiled under
    its name and line; the other never does, and is reported as not
    profiled (before: both were taken at once, offsets unchecked)."""
    late, idle = StdinPython(py), StdinPython(py)
    out = str(tmp_path / "out.folded")
    try:
        # ended by Ctrl-C once the hot function used its CPU time: how
        # long that takes depends on the machine's load
        tool = start_tool(tool_path("pyprofile"),
                          ["-F", "199", "-o", out, "--format", "folded",
                           "-p", "%d,%d" % (late.pid, idle.pid), "300"], START_TIMEOUT)
        time.sleep(1.5)
        late.send(HOT % 1.0)
        late.wait_line("hot done", timeout=240)
        time.sleep(0.5)
        tool.send_signal(signal.SIGINT)
        rc, _, err = finish(tool, SLACK)
        rows = parse_folded(open(out).read())
    finally:
        late.close()
        idle.close()
    assert rc == 0, err
    for w in (late, idle):
        assert re.search(r"^pyprofile: PID %d \(python[\d.]*\): no thread is running Python "
                         r"code, so its offsets cannot be checked against a frame yet; "
                         r"waiting until one does$" % w.pid, err, re.M), err
    assert re.search(r"^pyprofile: PID %d \(python[\d.]*\): ran no Python code during the "
                     r"run, so its offsets could not be checked against a frame; not "
                     r"profiled$" % idle.pid, err, re.M), err
    assert "PID %d (" % late.pid not in err.split("waiting until one does")[-1], err
    m = re.search(r"^pyprofile: \d+ samples of (\d+) Python process", err, re.M)
    assert m and m.group(1) == "1", err
    hot = [([x for x in f if frame_name(x) == "hot_after_stdin"], n) for f, _, n in rows]
    hot = [(f[0], n) for f, n in hot if f]
    # 1 s of CPU at 199 Hz: about 200 samples (less what ran before the
    # next check saw its frame, at most 0.2 s)
    assert sum(n for _, n in hot) >= 100, rows[:20]
    for frame, _ in hot:  # its own lines: the while and the sum
        assert frame in ("hot_after_stdin (<stdin>:4)", "hot_after_stdin (<stdin>:5)"), frame


# ------------------------------------------------------------ DWARF vs table

def test_dwarf_that_disagrees_with_the_table(tmp_path, pydump):
    """A copy of the host's stripped python3.11 finds, through its
    .gnu_debuglink, a debug file whose structs match the built-in table but
    for co_firstlineno (4 bytes off). Validation passes such offsets (names
    and line tables still read) and every line number comes out wrong;
    the cross-check with the table refuses them, naming the field."""
    host = interpreters.HOST_PYTHON
    if not os.access(host, os.X_OK):
        pytest.skip("no %s" % host)
    link = subprocess.run(["readelf", "--string-dump=.gnu_debuglink", host],
                          stdout=subprocess.PIPE, universal_newlines=True).stdout
    m = re.search(r"\]\s+(\S+\.debug)", link)
    if not m:
        pytest.skip("%s has no .gnu_debuglink" % host)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = str(bindir / os.path.basename(host))
    shutil.copy2(host, exe)
    table = fake_dwarf.read_table(os.path.join(REPO, "offsets", "cpython-3.11.offsets"))
    table["code_firstlineno"] += 4
    # the debug file carries the binary's build-id, as a real one does (a
    # debug file with another or none is refused before it is read)
    notes = subprocess.run(["readelf", "-n", host], stdout=subprocess.PIPE,
                           universal_newlines=True).stdout
    bid = re.search(r"Build ID:\s*([0-9a-f]+)", notes)
    fake_dwarf.build(11, table, str(bindir / m.group(1)), str(tmp_path),
                     build_id=bid.group(1) if bid else None)
    code = "import time\ndef parked():\n    time.sleep(600)\nparked()\n"
    p = subprocess.Popen([exe, "-c", code], env=dict(interpreters._clean_env(), PYTHONHOME="/usr"))
    try:
        time.sleep(1)
        r = run([pydump, "-p", str(p.pid)])
    finally:
        p.kill()
        p.wait()
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert r.stderr.startswith(
        "pydump: PID %d: its DWARF and the built-in 3.11 table disagree on code_firstlineno "
        "(%d against %d): this build cannot be read safely (DWARF from %s/"
        % (p.pid, table["code_firstlineno"], table["code_firstlineno"] - 4, bindir)), \
        r.stderr


# ------------------------------------------------------------ pre-releases

def _load_segments(path):
    out = subprocess.run(["readelf", "-lW", path], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # offset, vaddr, filesz
    return segs


def _symbol_value(path, name):
    out = subprocess.run(["readelf", "-W", "--dyn-syms", path], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[7] == name:
            return int(f[1], 16)
    raise AssertionError("no %s in %s" % (name, path))


def prerelease_copy(interp, hexversion):
    """A copy of the interpreter whose _Py_DebugOffsets.version and
    Py_Version say HEXVERSION (nothing else differs). Returns its path as
    the chroot sees it."""
    src = interp.host_path(interp.exe)
    data = bytearray(open(src, "rb").read())
    major, minor, micro = interp.version
    final = major << 24 | minor << 16 | micro << 8 | 0xf0
    needle = b"xdebugpy" + struct.pack("<Q", final)
    assert data.count(needle) == 1, "the _Py_DebugOffsets header is not unique"
    at = data.index(needle) + 8
    data[at:at + 8] = struct.pack("<Q", hexversion)
    vaddr = _symbol_value(src, "Py_Version")
    for off, seg_vaddr, filesz in _load_segments(src):
        if seg_vaddr <= vaddr < seg_vaddr + filesz:
            at = vaddr - seg_vaddr + off
            break
    else:
        raise AssertionError("Py_Version is not in the file")
    assert data[at:at + 4] == struct.pack("<I", final)
    data[at:at + 4] = struct.pack("<I", hexversion)
    rel = "/opt/pybpf-tests/prerelease-%08x/%s" % (hexversion, os.path.basename(interp.exe))
    dest = interp.host_path(rel)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest + ".tmp", "wb") as fp:
        fp.write(data)
    os.chmod(dest + ".tmp", 0o755)
    os.rename(dest + ".tmp", dest)
    return rel


# minor: (last pre-release with another layout, first with ours), as PY_VERSION_HEX
PRERELEASES = {13: (0x030d00c1, 0x030d00c2), 14: (0x030e00b1, 0x030e00b2),
               15: (0x030f00b3, 0x030f00b4)}
# the minors that publish _Py_DebugOffsets: 3.13 to the last supported
DEBUG_OFFSET_MINORS = [m for m in interpreters.supported_minors() if m >= 13]


def test_prereleases_cover_every_minor():
    """Every supported minor with _Py_DebugOffsets has its pre-release pair
    (a port adds one; offsets/README.md)."""
    assert sorted(PRERELEASES) == DEBUG_OFFSET_MINORS


def _version_text(h):
    level = {0xa: "a", 0xb: "b", 0xc: "rc"}[(h >> 4) & 0xf]
    return "%d.%d.%d%s%d" % (h >> 24, (h >> 16) & 0xff, (h >> 8) & 0xff, level, h & 0xf)


@pytest.mark.parametrize("py", interps(*("sid-3.%d" % m for m in DEBUG_OFFSET_MINORS)))
def test_prerelease_layouts(py, pydump):
    """The same interpreter calling itself the last pre-release before our
    _Py_DebugOffsets layout is refused with a precise message (pydump and
    pyprofile); calling itself the first pre-release with it, it is read
    exactly. Before, the check compared the version with itself and took
    any pre-release."""
    before, first = PRERELEASES[py.version[1]]
    code = "import time\ndef parked():\n    time.sleep(600)\nparked()\n"
    env = dict(interpreters._clean_env(), PYTHONHOME="/usr")
    for hexversion in (before, first):
        exe = prerelease_copy(py, hexversion)
        p = subprocess.Popen(["chroot", py.root, exe, "-c", code], env=env)
        try:
            time.sleep(1)
            dump = run([pydump, "-p", str(p.pid)])
            prof = run([tool_path("pyprofile"), "-p", str(p.pid), "1"], timeout=300) \
                if hexversion == before else None
        finally:
            p.kill()
            p.wait()
        if hexversion == before:
            want = ("unsupported Python %s: pre-releases of 3.%d before %s have another "
                    "_Py_DebugOffsets layout than the one this pybpf-tools knows"
                    % (_version_text(before), py.version[1], _version_text(first)))
            assert dump.returncode == 1 and dump.stderr == "pydump: PID %d: %s\n" % (
                p.pid, want), dump.stderr
            assert prof.returncode == 1 and "pyprofile: PID %d (python3.%d): %s; skipped\n" % (
                p.pid, py.version[1], want) in prof.stderr, prof.stderr
        else:
            assert dump.returncode == 0, dump.stderr
            assert "CPython %s, %s [offsets: debug offsets]" % (
                _version_text(first), exe) in dump.stdout, dump.stdout
            frames = [l.strip() for l in dump.stdout.splitlines() if l.startswith("    ")]
            assert frames == ["parked (<string>:3)", "<module> (<string>:4)"], dump.stdout


# ------------------------------------------------------------ ended first

def _spawn_loop(count, counter):
    """COUNT `python3 -c pass`, one after the other; every other one killed
    5 ms after it started, while the interpreter starts up (no tool can
    have opened it by then)."""
    while len(counter) < count:
        p = subprocess.Popen([interpreters.HOST_PYTHON, "-c", "pass"])
        if len(counter) % 2:
            time.sleep(0.005)
            p.kill()
        p.wait()
        counter.append(p.pid)


@pytest.mark.serial  # (conftest.py: every Python process)
@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_processes_that_end_first(verbose, tmp_path):
    """System-wide pyprofile and pygil while 30 `python3 -c pass` processes
    start and exit one after the other: the ones that end before they can
    be opened are no error. One summary line counts them; without -v no
    line per process ('no such process; skipped', 'cannot read the GIL
    state; skipped' before), with -v one per process."""
    started = []
    tools = {}
    for name in ("pyprofile", "pygil"):
        args = ["-o", str(tmp_path / (name + ".folded")), "--format", "folded"]
        if name == "pyprofile":
            args = ["-F", "49"] + args
        # ended by Ctrl-C once the loop is done: the tools' start-up times vary
        tools[name] = start_tool(tool_path(name), (["-v"] if verbose else []) + args + ["300"],
                                 START_TIMEOUT)
    _spawn_loop(30, started)
    for p in tools.values():
        p.send_signal(signal.SIGINT)
    results = {name: finish(p, SLACK) for name, p in tools.items()}
    for name, (rc, _, err) in results.items():
        assert rc == 0, err
        # (other processes of the machine may be refused for their own reasons)
        for pid in started:
            assert not re.search(r"^%s: PID %d\b.*; skipped$" % (name, pid), err, re.M), err
        m = re.search(r"^%s: (\d+) Python process(?:es)? ended before (?:it|they) could be "
                      r"profiled( \(-v names them\))?$" % name, err, re.M)
        assert m, err
        ended = int(m.group(1))
        # (other Python processes of the machine may end early too)
        assert ended >= 1, err
        each = re.findall(r"^%s: PID \d+(?: \(.*\))?: ended before it could be profiled "
                          r"\(.+\)$" % name, err, re.M)
        if verbose:
            assert not m.group(2) and len(each) == ended, err
        else:
            assert m.group(2) and not each, err


# ------------------------------------------------------------ sampling rate

SAMPLE_RATE = "/proc/sys/kernel/perf_event_max_sample_rate"


class Spinner:
    def __init__(self):
        code = "import time\nend=time.time()+120\nwhile time.time()<end: sum(range(1000))\n"
        self.popen = subprocess.Popen([interpreters.HOST_PYTHON, "-c", code])

    def close(self):
        self.popen.kill()
        self.popen.wait()


def test_sampling_rate_above_the_limit(tmp_path):
    """-F 200000 is more than the kernel allows (its sysctl, and a CPU clock
    timer that fires every 10 us at most): lowered to the limit with a
    warning that says which, like perf does (before: refused as invalid;
    -F between the sysctl and 100000 failed in perf_event_open)."""
    with open(SAMPLE_RATE) as fp:
        kernel_max = int(fp.read())
    limit = min(kernel_max, 100000)
    w = Spinner()
    out = str(tmp_path / "out.folded")
    try:
        r = run([tool_path("pyprofile"), "-F", "200000", "-o", out, "--format", "folded",
                 "-p", str(w.popen.pid), "2"], timeout=300)
    finally:
        w.close()
    assert r.returncode == 0, r.stderr
    if limit == kernel_max:
        want = ("pyprofile: -F 200000 is above the kernel's limit "
                "(kernel.perf_event_max_sample_rate = %d): sampling at %d Hz\n" % (limit, limit))
    else:
        want = ("pyprofile: -F 200000 is more than a CPU clock timer can fire (every 10 us at "
                "most): sampling at %d Hz\n" % limit)
    assert r.stderr.startswith(want), r.stderr
    assert r.stdout.startswith("Sampling at %d Hertz of PID %d " % (limit, w.popen.pid)), r.stdout
    assert sum(n for _, _, n in parse_folded(open(out).read())) > 0


@pytest.mark.serial  # (conftest.py: every Python process)
def test_sampling_rate_the_kernel_throttles(tmp_path):
    """Sampling at 100000 Hz (or the kernel's limit) while the kernel's limit
    is lowered to 20000 under it: the kernel throttles the events to about
    20000 samples a second. pyprofile says what it reached against what it
    asked, and a sample then stands for 1/reached in the report: the
    samples of a process that spins times that period is its CPU time
    (before: nothing said, and 1/asked made it a fifth of that)."""
    with open(SAMPLE_RATE) as fp:
        kernel_max = int(fp.read())
    asked = min(kernel_max, 100000)
    if asked < 40000:
        pytest.skip("kernel.perf_event_max_sample_rate is %d: too low to throttle under"
                    % kernel_max)
    w = Spinner()
    out = str(tmp_path / "out.folded")
    try:
        tool = start_tool(tool_path("pyprofile"),
                          ["-F", str(asked), "-o", out, "--format", "folded",
                           "-p", str(w.popen.pid), "4"], START_TIMEOUT)
        cpu0 = cpu_seconds(w.popen.pid)
        try:
            with open(SAMPLE_RATE, "w") as fp:
                fp.write("20000")
            rc, _, err = finish(tool, 4 + SLACK)
        finally:
            with open(SAMPLE_RATE, "w") as fp:
                fp.write(str(kernel_max))
        cpu = cpu_seconds(w.popen.pid) - cpu0
    finally:
        w.close()
    assert rc == 0, err
    m = re.search(r"^pyprofile: sampled (\d+) times per CPU-second, not the (\d+) asked \(the "
                  r"kernel throttled it\): a sample stands for (\d+) us in the report$", err, re.M)
    assert m, err
    reached, said, us = int(m.group(1)), int(m.group(2)), int(m.group(3))
    assert said == asked and reached <= 0.9 * asked, err
    assert 10000 <= reached <= 30000, err
    assert abs(us - 1e6 / reached) <= 1, err
    samples = sum(n for _, _, n in parse_folded(open(out).read()))
    # what the report says the spinner spent on CPU, against what it did
    # (from its own accounting, in clock ticks; the spinner shares 2 CPUs)
    assert 0.6 * cpu <= samples * us / 1e6 <= 1.5 * cpu + 0.1, (samples, us, cpu, err)
