"""Hostile ELF files (issue 24, items 5-7): a process loads a library made
hostile in its section headers or its .eh_frame (tests/elf_bombs.py), or
cuts its own library short and writes it back again and again while the
tools read it. pyprofile and pydump -n must end within a bounded CPU time
and the tools' memory budget (man pages, BUDGET), without a crash, and name
the library's frames right (or say they read it only in part).

Before the budgets: 200 overlapping notes took pyprofile to 1.6 GB, 65535
sections past 3 GB (killed) and pydump -n past 240 s (killed), the shared
CIE 29 s and 26 s of set-up, and the library cut short killed pydump -n
with SIGBUS every time (bench/hostile_elf.py).
"""
import os
import shutil
import tempfile

import pytest

import elf_bombs
from conftest import WORKLOADS, tool_path
from profiling import parse_folded, read_json, run_measured

WORKLOAD = os.path.join(WORKLOADS, "hostile_library.py")
BUDGET_MB = 256   # the tools' stated budget (man pages, BUDGET)
# the old tools took minutes to hours on these, or never ended. Their CPU
# time (user and system) is bounded, not the wall time, which a loaded
# machine stretches: at a load of 19 on 2 vCPUs, pyprofile's 2 s runs took
# up to 12 s, of which 2 s on a CPU
CPU_SECONDS = 60
HANG_SECONDS = 120  # then the tool is killed (blocked, or spinning past CPU_SECONDS)
KINDS = ["notes", "huge", "many", "ehframe", "bigcie"]
READ_IN_PART = "read in part, within the tool's budget"


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    out = tmp_path_factory.mktemp("bombs")
    return {kind: elf_bombs.make(kind, str(out / ("libbomb_%s.so" % kind)))
            for kind in KINDS}


class Workload:
    """hostile_library.py on LIBRARY, working until stopped."""

    def __init__(self, interp, tmp_path, library, truncate=False):
        self.scratch = interp.scratch(tempfile.mkdtemp(dir=str(tmp_path)))
        lib = interp.place(library)
        args = [interp.place(WORKLOAD), self.scratch.proc, lib, "-1"]
        self.proc = interp.spawn(args + (["--truncate"] if truncate else []))
        read_json(self.scratch.host_path("state.json"), key="ready", timeout=60)

    def stop(self):
        self.proc.kill()
        self.scratch.cleanup()


def children_cpu():
    t = os.times()
    return t.children_user + t.children_system


def measured(tool, args):
    """TOOL ARGS run to its end: (stdout, stderr), once it ended with 0
    inside CPU_SECONDS and BUDGET_MB."""
    before = children_cpu()
    rc, out, err, seconds, rss_mb = run_measured([tool_path(tool)] + args, timeout=HANG_SECONDS,
                                                 memory_limit_mb=4 * BUDGET_MB)
    # the tool's and its measuring parent's, which run_measured has reaped
    cpu = children_cpu() - before
    print("%s %s: %.1f s, %.2f s of CPU, %.0f MB" % (tool, " ".join(args), seconds, cpu, rss_mb))
    assert rc == 0, "%s ended with %s after %.1f s (%.1f s of CPU), %.0f MB:\n%s" % (
        tool, rc, seconds, cpu, rss_mb, err)
    assert cpu < CPU_SECONDS and rss_mb < BUDGET_MB, (cpu, seconds, rss_mb, err)
    return out, err


def waiter_frames(text):
    """The native frames of the thread named "waiter" in pydump's text."""
    frames, inside = [], False
    for line in text.splitlines():
        if line.startswith("Thread "):
            inside = 'name "waiter"' in line
        elif inside and line.strip().startswith("[native]"):
            frames.append(line.split()[1])
    return frames


@pytest.mark.parametrize("kind", KINDS)
def test_pyprofile_reads_hostile_library_in_budget(interp, libraries, tmp_path, kind):
    """pyprofile -p for 2 s at 997 Hz: done in time and memory; the samples
    in do_native go on into the library, named (bomb_spin, bomb_helper)."""
    w = Workload(interp, tmp_path, libraries[kind])
    try:
        # 997 Hz: at a load of 15 on 2 vCPUs the workload had 4% of a CPU
        # in the 2 s, 23 samples at 299 Hz, where the 80% bound was 3
        # standard deviations of the named share below the 95% it runs at;
        # some 75 samples make it 6, and the floor of 5 samples far off
        out, err = measured("pyprofile", ["-v", "-F", "997", "-f", "-p", str(w.proc.pid), "2"])
    finally:
        w.stop()
    rows = [([f for f in fr if not f.endswith("_[k]")], c)  # (an interrupt's frames)
            for fr, _, c in parse_folded(out) if any("do_native" in f for f in fr)]
    total = sum(c for _, c in rows)
    named = sum(c for fr, c in rows if fr[-1] in ("bomb_spin", "bomb_helper"))
    print("%s: %d of %d samples in do_native named" % (kind, named, total))
    assert total >= 5, out + err  # (a loaded machine gives the workload little CPU)
    assert named >= 0.8 * total, (named, total, out)
    if kind in ("many", "bigcie"):  # more than looked at: said so
        assert READ_IN_PART in err, err


@pytest.mark.parametrize("kind", KINDS)
def test_pydump_native_reads_hostile_library_in_budget(interp, libraries, tmp_path, kind):
    """pydump -n: done in time and memory, the waiting thread's frames in the
    library named from its own unwind rules."""
    w = Workload(interp, tmp_path, libraries[kind])
    try:
        out, err = measured("pydump", ["-n", "-p", str(w.proc.pid)])
    finally:
        w.stop()
    names = [f.split("+")[0] for f in waiter_frames(out)]
    assert names[:2] == ["bomb_sleep", "bomb_wait"], out + err


def test_library_cut_short_while_read(interp, libraries, tmp_path):
    """The process cuts its library (200 notes of 8 MB: long to read) to a
    page and writes it back, again and again: pydump -n and pyprofile end
    normally every time (they read, never map: no SIGBUS), and a frame in
    the library is named right or not named."""
    own = str(tmp_path / "libbomb_cut.so")  # its own copy: it is left cut short
    shutil.copyfile(libraries["notes"], own)
    w = Workload(interp, tmp_path, own, truncate=True)
    try:
        for _ in range(5):
            out, err = measured("pydump", ["-n", "-p", str(w.proc.pid)])
            frames = waiter_frames(out)
            assert not frames or not frames[0].startswith("bomb_") or \
                frames[0].startswith("bomb_sleep+"), out
        # 997 Hz, not the default 49: under load the workload may get 4% of
        # a CPU in the 2 s, some 4 samples at 49 Hz (none 1 time in 45)
        out, err = measured("pyprofile", ["-F", "997", "-f", "-p", str(w.proc.pid), "2"])
        python = sum(c for fr, _, c in parse_folded(out) if any("do_python" in f for f in fr))
        print("cut short: %d samples in do_python" % python)
        assert python, out + err
    finally:
        w.stop()
