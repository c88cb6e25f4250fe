"""Every benchmark in bench/ runs, once, in its tiny --smoke mode, against
the tools as built, and exits 0: a benchmark can no longer rot unseen
(bench/peer_austin.py and bench/scale.py once crashed at their first round
for months). Their figures are not judged here: speed belongs in the
benchmarks, not in timed tests.

Needs root (the tools load BPF programs). Run with:

    PYBPF_BUILD=$PWD/build /usr/bin/python3 -m pytest -q tests/test_bench_smoke.py
"""
import glob
import os
import re
import subprocess
import sys

import pytest

# run alone, after the parallel pass (conftest.py): the benchmarks measure
# cost, and some run over every Python process
pytestmark = pytest.mark.serial

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(REPO, "bench")
BUILD = os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build"))
AUSTIN = os.path.join(os.environ.get("PYBPF_CACHE", "/var/cache/pybpf-tools"),
                      "chroots/sid/opt/austin/root/usr/bin/austin")

# report.py's smoke run writes its table (compared with the README's) here,
# a file in the test's own directory (two runs on one machine share no file)
REPORT = "{report}"
README = os.path.join(REPO, "README.md")

# script -> the argument lists of its smoke runs (none for a script whose
# smoke run report.py's makes: each runs once)
SCRIPTS = {
    "async_overhead.py": [[]],
    "hostile_elf.py": [[]],
    "maps_gen_overhead.py": [[]],
    "native_cost.py": [["--distinct"]],  # without it: run by report.py's smoke run
    "peer_austin.py": [],  # run by report.py's (at both rates, when austin is there)
    "pydump_threads.py": [[]],
    "pymem_alloc.py": [[]],
    "pymem_census.py": [[]],
    "pymem_gc.py": [[]],
    "pymem_growth.py": [[]],
    "pyprofile_overhead.py": [[]],
    "report.py": [["-o", REPORT]],
    "sample_phases.py": [[]],
    "scale.py": [[]],
    "startup.py": [["--only", "p"]],
    # pyoffcpu (with and without --no-native) and pygil: run by report.py
    "tool_overhead.py": [["pyprofile"]],
    "wait_reasons_overhead.py": [[]],
}
# run by the scripts above, not by themselves
MODULES = {"bpf_progs.py", "smoke.py", "deep_cpu.py", "deep_cpu_go.py", "deep_native.py",
           "shares_go.py"}


def test_every_script_is_smoke_tested():
    found = {os.path.basename(p) for p in glob.glob(os.path.join(BENCH, "*.py"))}
    assert found - set(SCRIPTS) - MODULES == set(), "bench/ scripts without a smoke run"
    assert set(SCRIPTS) | MODULES <= found, "listed here, gone from bench/"


@pytest.mark.parametrize("script,args", [(s, a) for s, runs in sorted(SCRIPTS.items())
                                         for a in runs],
                         ids=lambda v: v if isinstance(v, str) else " ".join(v) or "-")
def test_smoke(script, args, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    if script == "peer_austin.py" and not os.access(AUSTIN, os.X_OK):
        pytest.skip("no austin: sudo ./setup.sh austin")
    if not os.access(os.path.join(BUILD, "tools", "pyprofile"), os.X_OK):
        pytest.fail("tools not built in %s" % BUILD)
    report = str(tmp_path / "report.md")
    args = [report if a == REPORT else a for a in args]
    r = subprocess.run([sys.executable, os.path.join(BENCH, script), "--smoke"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=300,
                       env=dict(os.environ, PYBPF_BUILD=BUILD))
    assert r.returncode == 0, "%s %s exited %d:\n%s" % (script, args, r.returncode,
                                                        r.stdout[-6000:])
    if script == "report.py":
        readme_table_is_reports(report)


def commands(table):
    """The command column of a markdown table's rows, in order."""
    return [line.rstrip(" |").rsplit(" | ", 1)[1] for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| what |")]


def readme_table_is_reports(path):
    """The README's first Performance table is report.py's output: the same
    rows (by their commands; the figures and the workload's size differ in
    --smoke), in its order, under its "Measured ..." line."""
    with open(path, encoding="utf-8") as f:
        made = f.read()
    os.unlink(path)
    with open(README, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- bench/report.py: from here -->\n(.*?)<!-- bench/report.py: to here -->",
                  text, re.S)
    assert m, "README: no table between the bench/report.py markers"
    pasted = m.group(1)
    assert re.match(r"Measured \d{4}-\d\d-\d\d \d\d:\d\d UTC on ", pasted), pasted[:200]
    ours, theirs = commands(made), commands(pasted)
    if not os.access(AUSTIN, os.X_OK):  # report.py leaves austin out, saying so
        theirs = [c for c in theirs if "peer_austin" not in c]
        ours = [c for c in ours if "peer_austin" not in c]
    assert ours == theirs, (ours, theirs)
