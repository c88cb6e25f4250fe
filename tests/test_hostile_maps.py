"""Mapping identity (issue 24, item 8): a process that unloads a library
and loads another at the same address, or rewrites a library in place
and loads it again, while pyprofile samples it. Each native frame is named
after the file that was mapped when it was sampled, or marked
[mapping changed], never after the other file; the rewritten file gets
unwind rows of its own (the old file's rows would not reach the Python
frames). The workload's own CPU time per phase is the truth."""
import os
import shutil
import subprocess
import uuid

import pytest

from conftest import WORKLOADS
from profiling import frame_name, parse_folded, run_on_cue

SOURCE = os.path.join(WORKLOADS, "swap_library.c")
WORKLOAD = os.path.join(WORKLOADS, "swap_library.py")
MARKER = "[mapping changed]"


def build(interp, tmp_path, prefix, frame=16):
    """The library of swap_library.c with functions PREFIX_spin and
    PREFIX_helper, placed where interp sees it; its path there."""
    gcc = shutil.which("gcc")
    if not gcc:
        pytest.skip("gcc not installed")
    # a name of its own per run: the chroots' test directory is shared
    out = os.path.join(str(tmp_path), "swap%s-%s.so" % (prefix, uuid.uuid4().hex[:8]))
    subprocess.run([gcc, "-O1", "-shared", "-fPIC", "-nostdlib", "-DP=%s" % prefix,
                    "-DFRAME=%d" % frame, "-o", out, SOURCE], check=True)
    return interp.place(out)


def profile(interp, pyprofile, tmp_path, args):
    text, err, truth = run_on_cue(interp, pyprofile, WORKLOAD, tmp_path,
                                  ["-U", "-F", "199", "-f"], workload_args=args,
                                  ready="ready.json", truth=("truth.json", "done"),
                                  settle=1)  # its stacks of waiting drained and named first
    return parse_folded(text), err, truth


def by_phase(rows):
    """{phase function: [(frames below burn, count)]}: the samples of each
    phase, with what ran under the Python frame that spins."""
    out = {"first_phase": [], "second_phase": []}
    for frames, _, count in rows:
        names = [frame_name(f) for f in frames]
        for phase in out:
            if phase in names:
                at = max(i for i, n in enumerate(names) if n == "burn") if "burn" in names else -1
                out[phase].append((names[at + 1:] if at >= 0 else [], count))
    return out


def tally(samples, own, other):
    """(samples in own's spin, marked, naming other's functions, all)."""
    hit = marked = wrong = total = 0
    for below, count in samples:
        total += count
        if any(f.startswith(other + "_") or ("swap%s-" % other) in f for f in below):
            wrong += count
        elif below[-2:] == [own + "_spin", own + "_helper"] or below[-1:] == [own + "_spin"]:
            hit += count
        elif MARKER in below:
            marked += count
    return hit, marked, wrong, total


def check_phases(rows, err, truth, first, second):
    phases = by_phase(rows)
    a = tally(phases["first_phase"], first, second)
    b = tally(phases["second_phase"], second, first)
    print("first phase (%s): %d in %s_spin, %d marked, %d named %s_*, of %d; CPU %.2f s"
          % (first, a[0], first, a[1], a[2], second, a[3], truth["cpu1"]))
    print("second phase (%s): %d in %s_spin, %d marked, %d named %s_*, of %d; CPU %.2f s"
          % (second, b[0], second, b[1], b[2], first, b[3], truth["cpu2"]))
    # never named after the other file
    assert a[2] == 0 and b[2] == 0, (a, b, [r for r in rows if "_phase" in str(r)][:8])
    assert a[3] >= 100 and b[3] >= 100, err
    # named (or marked) as what ran: the spin functions take nearly all
    # of each phase's CPU time (the rest is ctypes' calls between them)
    assert a[0] + a[1] >= 0.85 * a[3], (a, [r for r in rows if "first_phase" in str(r)][:8])
    assert b[0] + b[1] >= 0.85 * b[3], (b, [r for r in rows if "second_phase" in str(r)][:8])
    # marked only in the moments the mappings changed
    assert a[1] + b[1] <= 0.05 * (a[3] + b[3]), (a, b)
    # each phase's share of the samples, against its share of the CPU time
    want = truth["cpu2"] / (truth["cpu1"] + truth["cpu2"])
    got = b[3] / (a[3] + b[3])
    assert abs(got - want) <= 0.10, (got, want)


def test_library_at_the_address_of_an_unloaded_one(interp, pyprofile, tmp_path):
    """dlclose of a library, dlopen of another of the same layout: the
    loader maps it where the first was. Before, every sample of the second
    was named a_spin;a_helper (the first file's trie keys and names stayed)."""
    lib_a, lib_b = build(interp, tmp_path, "a"), build(interp, tmp_path, "b")
    rows, err, truth = profile(interp, pyprofile, tmp_path,
                               [lib_a, "a", lib_b, "b", "1.5"])
    print("interpreter:", interp.id, "spin at %#x, %#x" % (truth["spin1"], truth["spin2"]))
    if truth["spin1"] != truth["spin2"]:  # the same layout: the same place, the same base
        pytest.skip("the loader put the second library elsewhere (%#x, %#x)"
                    % (truth["spin1"], truth["spin2"]))
    check_phases(rows, err, truth, "a", "b")


def test_library_rewritten_in_place(interp, pyprofile, tmp_path):
    """The same path, the same inode, new contents (other names, a 4 KiB
    frame in the helper), loaded again: new unwind rows and new names.
    Before, the rows of the old contents (cached by device and inode) did
    not reach the Python frames and the names were the old ones."""
    first, second = build(interp, tmp_path, "c"), build(interp, tmp_path, "d", frame=4096)
    rows, err, truth = profile(interp, pyprofile, tmp_path,
                               [first, "c", second, "d", "1.5", "--rewrite"])
    print("interpreter:", interp.id, "inodes", truth["ino1"], truth["ino2"])
    assert truth["ino1"] == truth["ino2"]
    check_phases(rows, err, truth, "c", "d")
