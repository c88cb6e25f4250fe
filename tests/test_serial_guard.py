"""conftest.host_wide_tool: which command lines run a BPF tool over every
Python process (a test that starts one must be marked serial: under xdist
it would see, and slow, the other worker's workloads)."""
import pytest

from conftest import host_wide_tool, tool_path

P = tool_path("pyprofile")
CASES = [
    ([P, "-p", "1", "2"], None),
    ([P, "-p5", "1"], None),
    ([P, "--pid=5"], None),
    ([P, "-t", "7", "2"], None),
    ([P, "--", "python3", "x.py"], None),
    ([P, "--help"], None),
    ([P, "2"], "pyprofile"),
    ([tool_path("pygil"), "-i", "0"], "pygil"),        # (refused, but would run host-wide)
    (["python3", "-S", "-c", "measure", "report", P, "-f", "-p", "5", "2"], None),
    (["python3", "-S", "-c", "measure", "report", P, "-f", "2"], "pyprofile"),
    (["setpriv", "--reuid=65534", tool_path("pymem"), "1"], "pymem"),
    (["sh", "-c", "python3 & sleep 1; %s 1; kill %%1" % P], "pyprofile"),
    (["sh", "-c", "%s -p 5 1" % P], None),
    ([tool_path("pydump"), "-p", "1"], None),
    (["/usr/bin/python3", "/tmp/pyprofile_test.py"], None),
    ("%s 1" % P, "pyprofile"),
]


@pytest.mark.parametrize("argv,tool", CASES, ids=range(len(CASES)))
def test_host_wide_tool(argv, tool):
    assert host_wide_tool(argv) == tool
