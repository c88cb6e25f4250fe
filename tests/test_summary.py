"""The text report's summary and the SVG's file names, against a launched
workload whose two functions, in two files named app.py, took known
shares of its CPU time: outer() burns a third itself and calls inner()
for the other two thirds. How the summary counts and the SVG names files
does not depend on the interpreter: host-3.11 and one chroot's."""
import os
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import WORKLOADS
from profiling import read_json
from test_launch import run
from test_trust import interps

# 997 Hz: the 2.4 s workload gives some 2,000 samples under load (20% of
# them lost to steal), and a share's 8-point bound is 6 standard
# deviations of its count beyond the 1.5 points the startup's CPU moves
# the truth (at 199 Hz, 400 samples: under 3)
HZ = 997
WORKLOAD = os.path.join(WORKLOADS, "nested_shares.py")
INTERPS = interps("host-3.11", "sid-3.14")
PY_FRAME = re.compile(r"^(.*) \((.*):(\d+|\?)\)$")
SUMMARY = re.compile(r"^Summary of PID (\d+) \((.*)\): (\d+) samples?$")
ROW = re.compile(r"^ *(\d+\.\d) +(\d+)  (\S.*)$")
SVG_NS = "{http://www.w3.org/2000/svg}"


def profile(interp, pyprofile, tmp_path, args, seconds):
    """pyprofile -F HZ -o OUT ARGS -- <interp> nested_shares.py SCRATCH
    SECONDS. Returns (OUT's text, the workload's truth)."""
    script = interp.place(WORKLOAD)
    scratch = interp.scratch(tmp_path)
    out = os.path.join(str(tmp_path), "out")
    try:
        r = run([pyprofile, "-F", str(HZ), "-o", out] + list(args) + ["--"] + interp.argv +
                [script, scratch.proc, str(seconds)])
        assert r.returncode == 0, r.stderr
        truth = read_json(scratch.host_path("truth.json"), timeout=1)
    finally:
        scratch.cleanup()
    with open(out, encoding="utf-8") as fp:
        return fp.read(), truth


def text_stacks(text):
    """[(frames leaf first, value)] of the text report's stacks."""
    stacks = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line.startswith("    ")]
        if len(lines) >= 2 and lines[-2].startswith("    -  ") and lines[-1].strip().isdigit():
            stacks.append(([line[4:] for line in lines[:-2]], int(lines[-1])))
    return stacks


def function_of(frame):
    """(name, file) of a Python frame "name (file:line)", (frame, None) of
    code that could not be named, else None (native, kernel, markers)."""
    m = PY_FRAME.match(frame)
    if m:
        return m.group(1), m.group(2)
    return (frame, None) if frame.startswith("[unknown code ") else None


def read_summary(text):
    """The summary that ends the report: (its lines, samples, {label:
    (share, samples)} by own, the same by total, in their order)."""
    lines = text.rstrip("\n").splitlines()
    start = max(i for i, line in enumerate(lines) if SUMMARY.match(line))
    part = lines[start:]
    samples = int(SUMMARY.match(part[0]).group(3))
    assert part[1].split()[:2] == ["%Own", "Own"], part
    at_total = next(i for i, line in enumerate(part) if line.split()[:2] == ["%Total", "Total"])
    own = [ROW.match(line).groups() for line in part[2:at_total]]
    total = [ROW.match(line).groups() for line in part[at_total + 1:]]
    return (part, samples, {label: (float(s), int(v)) for s, v, label in own},
            {label: (float(s), int(v)) for s, v, label in total})


@pytest.mark.parametrize("py", INTERPS)
def test_summary_against_truth_and_stacks(py, pyprofile, tmp_path):
    """The summary ends the text report, in at most 23 lines: outer's and
    inner's own shares and outer's total share within 8 points of the
    CPU time they measured; every count the same as the stacks above it
    add up to (own: the innermost Python frame; total: once per stack)."""
    text, truth = profile(py, pyprofile, tmp_path, [], 2.4)
    lines, samples, own, total = read_summary(text)
    assert len(lines) <= 3 + 2 * 10, lines
    assert not any(line.startswith("    ") for line in lines), lines
    # every sample, counted from the stacks
    stacks = text_stacks(text)
    assert samples == sum(v for _, v in stacks), (samples, lines)
    assert samples >= 0.5 * truth["process"] * HZ, (samples, truth)
    want_own, want_total = {}, {}
    for frames, value in stacks:
        functions = [function_of(f) for f in frames if function_of(f)]
        key = functions[0] if functions else None
        want_own[key] = want_own.get(key, 0) + value
        for f in set(functions):
            want_total[f] = want_total.get(f, 0) + value
    for got, want in ((own, want_own), (total, want_total)):
        for label, (share, value) in got.items():
            key = None if label == "[no Python frames]" else function_of(label)
            assert key or label == "[no Python frames]", (label, lines)
            assert value == want[key], (label, value, want.get(key), lines)
            assert abs(share - 100.0 * value / samples) <= 0.05, (label, share, lines)
    # each function named as the stacks name frames, at its def line
    outer = "outer (%s:%d)" % tuple(truth["defs"]["outer"])
    inner = "inner (%s:%d)" % tuple(truth["defs"]["inner"])
    assert list(own)[:2] == [inner, outer], lines  # two thirds, then one
    assert total[inner] == own[inner], lines  # inner calls no Python function
    cpu = truth["process"]
    print("summary: %d samples for %.2f s of CPU at %d Hz; own inner %.1f%%, truth %.1f%%; "
          "own outer %.1f%%, truth %.1f%%; total outer %.1f%%, truth %.1f%%" % (
              samples, cpu, HZ, own[inner][0], 100.0 * truth["inner"] / cpu, own[outer][0],
              100.0 * (truth["outer_total"] - truth["inner"]) / cpu, total[outer][0],
              100.0 * truth["outer_total"] / cpu))
    for got, want in ((own[inner][0], truth["inner"]),
                      (own[outer][0], truth["outer_total"] - truth["inner"]),
                      (total[outer][0], truth["outer_total"])):
        assert abs(got - 100.0 * want / cpu) <= 8, (got, want, cpu, lines)


@pytest.mark.parametrize("py", INTERPS)
def test_svg_names_files_by_the_end_that_tells_them_apart(py, pyprofile, tmp_path):
    """srv/app.py and flask/app.py: each box names its file by the shortest
    end of its path that no other file of the profile ends with; the
    tooltip keeps the full path."""
    text, truth = profile(py, pyprofile, tmp_path, ["--format", "svg"], 0.6)
    root = ET.fromstring(text)
    boxes = {g.get("data-l"): "".join(g.find(SVG_NS + "title").itertext())
             for g in root.iter(SVG_NS + "g") if g.get("class") == "f"}
    assert "outer (srv/app.py)" in boxes, sorted(boxes)
    assert "inner (flask/app.py)" in boxes, sorted(boxes)
    assert not any(label.endswith(" (app.py)") for label in boxes), sorted(boxes)
    assert boxes["inner (flask/app.py)"].startswith("inner (%s) (" % truth["defs"]["inner"][0])
