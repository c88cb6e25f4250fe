"""Names a hostile process chooses, against every text sink of the tools.

tests/workloads/hostile_names.py names its process, its threads (prctl and
threading), its module file, its asyncio task and a native function (a
library built here, its symbol patched to hold the bytes) with ESC
sequences, C1 controls (raw and in UTF-8), DEL, ';', tab and newline. Every
tool's output (pyprofile text, folded, --threads, --function, --async, svg,
--top; pyoffcpu; pygil; pydump text, -n, -j, --async) and its stderr must
hold no raw control byte, be valid UTF-8, show the names escaped as
lib/sys/text_escape.h says (escape() below is that rule), and folded lines
must still split into the frames they had. Then a TaskGroup whose 10,000
tasks each wait in its __aexit__ (10^8 awaits edges) against pydump --async
and pyoffcpu --async: bounded CPU time and memory, the cut said and
counted; a small one read whole. Run with:

    /usr/bin/python3 -m pytest -p no:cacheprovider -q tests/test_hostile_text.py
"""
import json
import os
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import pytest

from conftest import WORKLOADS, tool_path
from profiling import read_json

sys.path.insert(0, WORKLOADS)
import hostile_names as H  # noqa: E402  (the names the workload sets)

TIMEOUT = 120
EDGES_MAX = 200000   # PY_AWAIT_EDGES_MAX (lib/cpython/asyncio.h)
MEMORY_BUDGET_KB = 256 * 1024
SYMBOL_PLACEHOLDER = b"PLACEHOLDER_SYMBOL_NAME_"
SYMBOL = b"evil\x1b[5m;\xc2\x9b\x9b\nspin\x7f"
SYMBOL = SYMBOL + b"_" * (len(SYMBOL_PLACEHOLDER) - len(SYMBOL))
SPIN_C = r"""
#include <unistd.h>
volatile unsigned long sink;
/* on CPU, then blocked (pydump -n unwinds blocked threads), in one frame */
static __attribute__((noinline)) void PLACEHOLDER_SYMBOL_NAME_(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
	usleep(20000);
}
/* never returns: the thread stays out of the GIL's way */
void run_spin(unsigned long n)
{
	for (;;)
		PLACEHOLDER_SYMBOL_NAME_(n);
}
"""


# ---- the rule of lib/sys/text_escape.h, as ground truth ------------------

def _shown(ch):
    cp = ord(ch)
    return not (cp < 0x20 or 0x7f <= cp <= 0x9f)


def escape(data, also=b""):
    """Bytes as a text sink shows them: controls (C0, DEL, C1) and bytes
    that are no valid UTF-8 as \\xHH of each byte; ALSO's bytes too."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    out, i = [], 0
    while i < len(data):
        n = 0
        for k in range(1, 5):
            try:
                ch = data[i:i + k].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1 and _shown(ch) and data[i:i + k] not in [bytes([b]) for b in also]:
                n = k
            break
        if n:
            out.append(data[i:i + n].decode("utf-8"))
            i += n
        else:
            out.append("\\x%02x" % data[i])
            i += 1
    return "".join(out)


def py_clean(s):
    """What the tools read of a Python string: C0 and DEL as U+FFFD
    (lib/cpython cleans them when reading), the rest as it is."""
    return "".join("\ufffd" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in s)


def assert_clean(data, what):
    """Valid UTF-8 with no control character but newlines."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AssertionError("%s: not UTF-8 (%s): %r" % (what, e, data[max(0, e.start - 40):e.end + 40]))
    bad = [(i, c) for i, c in enumerate(text) if c != "\n" and not _shown(c)]
    assert not bad, "%s: raw control characters %r near %r" % (
        what, bad[:5], text[max(0, bad[0][0] - 60):bad[0][0] + 20])
    return text


def run(argv, timeout=TIMEOUT):
    """Runs a tool; returns (rc, stdout bytes, stderr bytes, CPU s, peak RSS KB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cp = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        stdin=subprocess.DEVNULL, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cp.returncode, cp.stdout, cp.stderr, cpu, after.ru_maxrss


def checked(argv, rc, out, err):
    """A run's stdout as text, once its exit status and both streams passed."""
    err_text = assert_clean(err, "%s stderr" % os.path.basename(argv[0]))
    assert rc == 0, err_text
    return assert_clean(out, "%s stdout" % " ".join(os.path.basename(a) for a in argv[:2]))


def run_clean(argv, timeout=TIMEOUT):
    rc, out, err, _, _ = run(argv, timeout)
    return checked(argv, rc, out, err)


# ---- the workload --------------------------------------------------------

@pytest.fixture(scope="session")
def libspin(tmp_path_factory):
    """A library whose only local function is named SYMBOL."""
    if not shutil.which("gcc"):
        pytest.skip("no gcc to build the library")
    d = tmp_path_factory.mktemp("libspin")
    src, built = d / "spin.c", d / "libspin-plain.so"
    src.write_text(SPIN_C)
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(built), str(src)], check=True)
    data = built.read_bytes()
    assert data.count(SYMBOL_PLACEHOLDER) == 1  # .symtab's string only (a local symbol)
    out = d / "libhostilespin.so"
    out.write_bytes(data.replace(SYMBOL_PLACEHOLDER, SYMBOL))
    return str(out)


@pytest.fixture(scope="module")
def hostile(interp, libspin, tmp_path_factory):
    script = interp.place(os.path.join(WORKLOADS, "hostile_names.py"))
    lib = interp.place(libspin)
    scratch = interp.scratch(tmp_path_factory.mktemp("hostile"))
    proc = interp.spawn([script, scratch.proc, lib])
    try:
        state = read_json(scratch.host_path("state.json"), key="ready", timeout=60)
        state["host_pid"] = proc.pid
        yield interp, state
    finally:
        proc.kill()
        scratch.cleanup()


# The sampling and tracing tools' runs on the hostile process, all started
# at once when the first test asks for one: each test asserts on its own run
# (exit status, clean streams, its output), and the ten runs take the time
# of the slowest instead of their sum (they only read the process; what they
# assert is what each names, not how much it sampled).
SAMPLED_RUNS = {
    "folded": ("pyprofile", ["-F", "199", "-f"], "2"),
    "text": ("pyprofile", ["-F", "199"], "2"),
    "threads_function": ("pyprofile", ["-F", "199", "--threads", "--function", "-f"], "2"),
    "svg": ("pyprofile", ["-F", "199", "--format", "svg", "-o", "{dir}/cpu.svg"], "2"),
    "pprof": ("pyprofile", ["-F", "199", "--format", "pprof", "-o", "{dir}/cpu.pb.gz"], "2"),
    "speedscope": ("pyprofile", ["-F", "199", "--format", "speedscope",
                                 "-o", "{dir}/cpu.json"], "2"),
    "top": ("pyprofile", ["--top", "-F", "199"], "3"),
    "async": ("pyprofile", ["-F", "199", "--async", "-f"], "2"),  # 3.11+
    "pyoffcpu": ("pyoffcpu", ["-f"], "2"),
    "pygil": ("pygil", [], "2"),
}


@pytest.fixture(scope="module")
def sampled(hostile, tmp_path_factory):
    """{run name: (argv, rc, stdout, stderr)} of SAMPLED_RUNS, and the
    directory their files are in."""
    interp, state = hostile
    d = str(tmp_path_factory.mktemp("sampled"))
    started = {}
    try:
        for name, (tool, args, seconds) in SAMPLED_RUNS.items():
            if name == "async" and interp.version < (3, 11):
                continue
            argv = ([tool_path(tool)] + [a.format(dir=d) for a in args]
                    + ["-p", str(state["host_pid"]), seconds])
            started[name] = (argv, subprocess.Popen(argv, stdout=subprocess.PIPE,
                                                    stderr=subprocess.PIPE,
                                                    stdin=subprocess.DEVNULL))
        done = {}
        for name, (argv, popen) in started.items():
            out, err = popen.communicate(timeout=TIMEOUT)
            done[name] = (argv, popen.returncode, out, err)
    finally:
        for _, popen in started.values():
            if popen.poll() is None:
                popen.kill()
                popen.wait()
    return done, d


def sampled_clean(sampled, name):
    """Run NAME's stdout as text, once it passed checked()."""
    return checked(*sampled[0][name])


def module_file(state):
    return escape(py_clean(state["module"]), b";")


COMMS = {role: escape(name, b";") for role, name in H.NAMES.items()}
THREADS = {role: escape(py_clean(name), b";") for role, name in H.THREAD_NAMES.items()}


def folded_rows(text):
    """[(comm, frames)] of folded output; every line must parse."""
    rows = []
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        assert count.isdigit() and stack, "not a folded line: %r" % line
        frames = stack.split(";")
        rows.append((frames[0], frames[1:]))
    return rows


def rows_of(rows, role):
    return [frames for comm, frames in rows if comm == COMMS[role]]


# ---- pyprofile -----------------------------------------------------------

def test_pyprofile_folded(hostile, sampled):
    interp, state = hostile
    text = sampled_clean(sampled, "folded")
    rows = folded_rows(text)
    assert {comm for comm, _ in rows} <= set(COMMS.values()), rows[:3]
    f = module_file(state)
    spin = rows_of(rows, "spinner")
    assert spin, "no samples of the spinner thread"
    for frames in spin:
        assert sum(fr.startswith("spin_forever (%s:" % f) for fr in frames) == 1, frames
    # the path's ';' and newline split no frame: each frame of the module whole
    ours = re.compile(r"(burn|spin_forever|nap_forever|spin_some) \(%s:\d+\)" % re.escape(f))
    for _, frames in rows:
        for fr in frames:
            assert ours.fullmatch(fr) or f not in fr, fr
            assert " (" in fr or not re.search(r"\.py:(\d+|\?)\)$", fr), "a split frame: %r" % fr
    native = rows_of(rows, "native")
    assert native, "no samples of the native thread"
    # by samples, not distinct stacks: a loaded machine adds a few stacks of
    # one sample each where the thread is between two calls
    leaf = escape(SYMBOL, b";")
    counts = [(line.rpartition(" ")[0].split(";"), int(line.rpartition(" ")[2]))
              for line in text.splitlines()]
    native_counts = [(frames[1:], n) for frames, n in counts if frames[0] == COMMS["native"]]
    in_leaf = sum(n for frames, n in native_counts if frames[-1] == leaf)
    assert in_leaf >= sum(n for _, n in native_counts) // 2, native_counts[:3]


def test_pyprofile_text(hostile, sampled):
    interp, state = hostile
    text = sampled_clean(sampled, "text")
    assert "    spin_forever (%s:" % module_file(state) in text
    assert "    %s\n" % escape(SYMBOL, b";") in text
    assert " %s (" % escape(H.NAMES["spinner"]) in text


def test_pyprofile_threads_function(hostile, sampled):
    interp, state = hostile
    text = sampled_clean(sampled, "threads_function")
    rows = folded_rows(text)
    procs = {frames[0] for _, frames in rows}
    threads = {re.sub(r"^\[TID \d+ (.*)\]$", r"\1", frames[1]) for _, frames in rows}
    assert procs == {"[PID %d %s]" % (state["host_pid"], COMMS["process"])}, procs
    # threads go by their Python names (escaped as frames are), not their OS names
    assert {THREADS["spinner"], THREADS["native"]} <= threads, threads
    for frames in rows_of(rows, "spinner"):
        assert sum(fr.startswith("spin_forever (") for fr in frames) == 1, frames


def test_pyprofile_svg(hostile, sampled):
    interp, state = hostile
    sampled_clean(sampled, "svg")
    data = pathlib.Path(sampled[1], "cpu.svg").read_bytes()
    assert_clean(data, "svg")
    root = ET.fromstring(data)  # well-formed XML
    titles = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}title")]
    path = escape(py_clean(state["module"]))
    assert any(t.startswith("spin_forever (%s)" % path) for t in titles), titles[:5]
    assert any(t.startswith(escape(SYMBOL)) for t in titles), titles[:5]


def test_pyprofile_pprof_speedscope(hostile, sampled, tmp_path):
    """pprof holds the names escaped (proto3 strings are UTF-8; go tool
    pprof prints them as they are); speedscope's JSON holds them whole."""
    from test_outputs import go_pprof
    interp, state = hostile
    sampled_clean(sampled, "pprof")
    sampled_clean(sampled, "speedscope")
    pb, ss = (pathlib.Path(sampled[1], name) for name in ("cpu.pb.gz", "cpu.json"))
    traces = assert_clean(go_pprof(["-traces", str(pb)], tmp_path).encode(), "go tool pprof")
    assert escape(SYMBOL) in traces
    name = escape(py_clean(H.THREAD_NAMES["spinner"]))
    assert re.search(r"^\s*thread_name:\s+%s$" % re.escape(name), traces, re.M)
    doc = json.loads(assert_clean(ss.read_bytes(), "speedscope"))
    names = {f["name"] for f in doc["shared"]["frames"]}
    assert SYMBOL.decode("utf-8", "replace") in names, sorted(names)[:20]  # bad bytes: U+FFFD
    files = {f.get("file") for f in doc["shared"]["frames"]}
    assert py_clean(state["module"]) in files


def test_pyprofile_top_plain(hostile, sampled):
    interp, state = hostile
    text = sampled_clean(sampled, "top")
    # a table of 24 lines, 80 columns: whichever hostile names make it in
    base = escape(py_clean(os.path.basename(state["module"])))
    assert re.search(r"  (burn|spin_forever|nap_forever|spin_some) \(%s:\d+\)$" % re.escape(base),
                     text, re.M) or escape(SYMBOL) in text, text[-2000:]


def test_pyprofile_async(hostile, sampled):
    interp, state = hostile
    if interp.version < (3, 11):
        pytest.skip("--async reads CPython 3.11 and later")
    text = sampled_clean(sampled, "async")
    task = escape("<task %s>" % py_clean(H.TASK_NAME), b";")
    main = rows_of(folded_rows(text), "process")
    assert any(task in frames for frames in main), main[:3]


# ---- pyoffcpu, pygil -----------------------------------------------------

def test_pyoffcpu(hostile, sampled):
    interp, state = hostile
    text = sampled_clean(sampled, "pyoffcpu")
    naps = rows_of(folded_rows(text), "sleeper")
    assert any(any(fr.startswith("nap_forever (%s:" % module_file(state)) for fr in frames)
               for frames in naps), naps[:3]


def test_pygil(hostile, sampled):
    interp, state = hostile
    text = sampled_clean(sampled, "pygil")
    assert "(%s)" % escape(H.NAMES["process"]) in text
    assert escape(H.NAMES["sleeper"]) in text
    assert escape(py_clean(H.THREAD_NAMES["sleeper"])) in text  # its row in the table


# ---- pydump --------------------------------------------------------------

def test_pydump_text(hostile, pydump):
    interp, state = hostile
    native = "[native] %s+0x" % escape(SYMBOL)
    for _ in range(20):  # until the native thread is caught blocked in it
        text = run_clean([pydump, "-n", "-p", str(state["host_pid"])])
        if native in text:
            break
    assert 'Process %d "%s"' % (state["host_pid"], escape(H.NAMES["process"])) in text
    for role in ("spinner", "sleeper", "native"):
        assert re.search(r' "%s"(?: \(ns tid \d+\))? name "%s"' % (
            re.escape(escape(H.NAMES[role])), re.escape(escape(py_clean(H.THREAD_NAMES[role])))),
            text), role
    assert "spin_forever (%s:" % escape(py_clean(state["module"])) in text
    assert native in text


def test_pydump_json(hostile, pydump):
    interp, state = hostile
    doc = json.loads(run_clean([pydump, "-j", "-l", "-p", str(state["host_pid"])]))
    threads = doc["processes"][0]["threads"]
    assert {py_clean(n) for n in H.THREAD_NAMES.values()} <= {t["name"] for t in threads}


def test_pydump_async(hostile, pydump):
    interp, state = hostile
    if interp.version < (3, 11):
        pytest.skip("--async reads CPython 3.11 and later")
    text = run_clean([pydump, "--async", "-p", str(state["host_pid"])])
    assert "(T) %s [" % escape(py_clean(H.TASK_NAME)) in text


# ---- a TaskGroup every task of which waits in its __aexit__ -----------------

def taskgroup(interp, tmp_path, n):
    script = interp.place(os.path.join(WORKLOADS, "taskgroup_waiters.py"))
    scratch = interp.scratch(tempfile.mkdtemp(dir=str(tmp_path)))
    proc = interp.spawn([script, scratch.proc_path("state.json"), str(n)])
    return proc, scratch


@pytest.mark.parametrize("n", [100, 10000])
def test_taskgroup_waiters(interp, pydump, tmp_path, n):
    if interp.version < (3, 11):
        pytest.skip("TaskGroup is CPython 3.11 and later")
    proc, scratch = taskgroup(interp, tmp_path, n)
    try:
        read_json(scratch.host_path("state.json"), key="tasks", timeout=120)
        rc, out, err, cpu, rss = run([pydump, "--async", "-p", str(proc.pid)])
        text = assert_clean(out, "pydump --async")
        assert rc == 0, err.decode()
        assert "asyncio: %d tasks, event loop" % (n + 1) in text
        assert rss < MEMORY_BUDGET_KB, "peak RSS %d KB" % rss
        # n * n edges: every member and the main task await every member
        cut = re.search(r"^\[about (\d+) more awaits not shown: at most %d are read\]$" % EDGES_MAX,
                        text, re.M)
        if n * n <= EDGES_MAX:
            assert not cut
            assert len(re.findall(r"\(T\) member-\d+ \[pending\] awaiting TaskGroup", text)) \
                == n * n, "every member under the main task and under each other member"
        else:
            assert cut and int(cut.group(1)) >= n * n - EDGES_MAX, text[-300:]
            assert text.count("(T) ") <= EDGES_MAX + n + 1
            # bounded work: about 0.6 s of CPU measured; never the minutes of
            # reading 10^8 edges
            assert cpu < 30, "pydump --async took %.1f s of CPU" % cpu
        if n > EDGES_MAX ** 0.5:
            rc, out, err, cpu, rss = run([tool_path("pyoffcpu"), "--async", "-f",
                                          "-p", str(proc.pid), "2"])
            assert rc == 0, err.decode()
            assert_clean(err, "pyoffcpu stderr")
            assert rss < MEMORY_BUDGET_KB, "pyoffcpu peak RSS %d KB" % rss
    finally:
        proc.kill()
        scratch.cleanup()
