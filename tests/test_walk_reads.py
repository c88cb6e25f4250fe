"""What the BPF walk reads, counted: pyprofile built with clocks and
counters around its parts (PYBPF_PHASES=1) prints them with -v. A read of
user memory that fails takes the kernel's fault path, the dearest thing a
read can do, and a code identity that met one is not kept: read again in
every walk. So a steady stack of a healthy process must make no read that
fails, and from 3.12 (code objects carry co_version) must not read a code
identity again once this CPU has met it, on every interpreter of the
matrix: 3.13+ put None where a code object would be in the eval loop's
entry frame (a shim tracebacks leave out), and reading it as one failed
twice in every walk, unseen in any output."""
import os
import re
import time

import pytest

from conftest import WORKLOADS
from profiling import cpu_seconds, parse_folded, run_until

PHASES = re.compile(r"BPF time per Python sample \((\d+) of them, clocks on\): .*?"
                    r"([\d.]+) identities read of \d+ ns, ([\d.]+) with a read that failed")


def phases_of(interp, pyprofile, args, cpu):
    """pyprofile -v's stderr (PYBPF_PHASES set by the caller) for a fresh
    process of ARGS profiled at 199 Hz, Python stacks only, until it had
    CPU seconds of CPU time (at most 30 s)."""
    proc = interp.spawn(args)
    try:
        time.sleep(1)
        _, err, _ = run_until(pyprofile, ["-F", "199", "--no-native", "-p", str(proc.pid)],
                              proc.pid, cpu_seconds, cpu, 30)
    finally:
        proc.kill()
    return err


def profile_phases(interp, pyprofile, script):
    """(samples, code identities read a sample, of them with a failed
    read, pyprofile's stderr) of a fresh sort_key.py process profiled
    until it had 2 s of CPU time."""
    err = phases_of(interp, pyprofile, [script, "120"], 2.0)
    m = PHASES.search(err)
    assert m, err
    return int(m.group(1)), float(m.group(2)), float(m.group(3)), err


def test_steady_stack_reads_nothing_that_fails(interp, pyprofile, monkeypatch):
    """sort_key.py: sorted() calls back into Python, so its stack holds two
    eval-loop runs (and, from 3.12, a shim frame each). Each CPU's memo of
    code identities has one place per address: two of the stack's code
    objects that fall on one place (ASLR decides, about one process in a hundred)
    take turns there and are read in every walk, so that a process shows
    it the test starts another once (whose addresses differ)."""
    script = interp.place(os.path.join(WORKLOADS, "sort_key.py"))
    monkeypatch.setenv("PYBPF_PHASES", "1")
    for attempt in range(2):
        samples, idents, failed, err = profile_phases(interp, pyprofile, script)
        print("%s: %d samples, %.2f identities read a sample, %.2f with a failed read"
              % (interp.id, samples, idents, failed))
        assert samples >= 100, err
        assert failed == 0, err
        # from 3.12 each CPU reads the few code objects of the stack once:
        # a sample then reads none
        if interp.version < (3, 12) or idents <= 0.1:
            return
    assert idents <= 0.1, err


FRAME_READS = re.compile(r"Python walk \d+ ns \(([\d.]+) frames, ([\d.]+) frame reads of")


def test_deep_stack_frames_come_from_copies(interp, pyprofile, monkeypatch):
    """From 3.11 a thread's frames lie one below the other in its data
    stack, in chunks, and the walk reads them a page at a time: 192 frames
    of a 300-deep recursion take a read a dozen frames or so, not one a
    frame. Frames elsewhere (3.12+'s entry frames on the C stack, the
    stack's older chunks) are read alone without losing the copy; the
    second such frame in a row, a new chunk, takes a copy of its own
    (found: without that, every frame of an older chunk was read alone,
    174 reads a sample)."""
    if interp.version < (3, 11):
        pytest.skip("%s: frame objects, read one by one (no copies to read from)" % interp.id)
    monkeypatch.setenv("PYBPF_PHASES", "1")
    err = phases_of(interp, pyprofile,
                    [interp.place(os.path.join(WORKLOADS, "deep_stack.py")), "300"], 1.0)
    if "loops checked turn by turn" in err:
        pytest.skip("%s: no may_goto in this kernel, which reads a frame at a time" % interp.id)
    m = FRAME_READS.search(err)
    assert m, err
    frames, reads = float(m.group(1)), float(m.group(2))
    print("%s: %.1f frames, %.2f frame reads a sample" % (interp.id, frames, reads))
    assert frames >= 190, err
    assert reads <= frames / 6, err


SWAPPED = re.compile(r"^f \(swapped\.py:(\d+)\)$")
KEPT = re.compile(r"([\d.]+) identities kept by their function's version")


def test_code_replaced_at_its_address_is_read_again(interp, pyprofile, monkeypatch):
    """code_swap.py: f's code object is replaced every 0.1 s of CPU time by
    a copy that begins 0, 10, 20 or 30 lines further down, made where the
    one before the last was, with the same name, file name and line table:
    only its first line number tells it apart. A walk that kept a code
    object's identity by its address and pointers would show each later
    generation at an address with the lines of the first one it met there
    (offsets 20 and 30 never seen). Each offset must have its share of f's
    samples and every sample a line of its generation; on 3.11, which keeps
    identities from walk to walk by the function's version, some samples
    must have been named that way (f's caller is specialized, so f gets a
    version again after each swap)."""
    script = interp.place(os.path.join(WORKLOADS, "code_swap.py"))
    monkeypatch.setenv("PYBPF_PHASES", "1")
    proc = interp.spawn([script, "120", "0.1"])
    try:
        time.sleep(1)
        out, err, _ = run_until(pyprofile, ["-F", "499", "--no-native", "-f",
                                            "-p", str(proc.pid)],
                                proc.pid, cpu_seconds, 4.0, 40)
    finally:
        proc.kill()
    by_offset, strays = {0: 0, 10: 0, 20: 0, 30: 0}, []
    for frames, _, count in parse_folded(out):
        python = [f for f in frames if not f.endswith("_[k]")]
        m = SWAPPED.match(python[-1]) if python else None
        if not m:
            continue
        line = int(m.group(1))
        offset = (line - 2) // 10 * 10
        if offset in by_offset and 2 <= line - offset <= 6:
            by_offset[offset] += count
        else:
            strays.append((line, count))
    total = sum(by_offset.values())
    kept = KEPT.search(err)
    print("%s: f's samples by offset %s, stray lines %s; %s identities kept a sample by "
          "their function's version" % (interp.id, by_offset, strays,
                                        kept.group(1) if kept else "no"))
    assert total >= 200, err
    assert not strays, (strays, out)
    for offset, n in by_offset.items():
        assert n >= total * 0.08, (offset, by_offset, out)
    assert kept, err
    if interp.version[:2] == (3, 11):
        assert float(kept.group(1)) > 0, err
