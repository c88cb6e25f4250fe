"""The BPF tools refuse to run in a PID namespace other than the host's.

BPF names processes by their host ids; a tool started inside a container
without the host's PID namespace would match none of them and report 0
samples with no word why (what it did before the check). Ground truth: the
tool is started in a new PID namespace with its own /proc (unshare -p -f
--mount-proc), where a Python process it should see is running.
"""
import shutil
import subprocess
import sys

import pytest

from conftest import BPF_TOOLS, tool_path

# run alone, after the parallel pass (conftest.py): its tools run over every Python process
pytestmark = pytest.mark.serial


@pytest.mark.parametrize("tool", BPF_TOOLS)
def test_refused_inside_a_pid_namespace(tool):
    if not shutil.which("unshare"):
        pytest.skip("no unshare (util-linux)")
    path = tool_path(tool)
    spinner = "import time\nend = time.time() + 30\nwhile time.time() < end: pass\n"
    script = "%s -c %r & sleep 0.5; %s 1; rc=$?; kill %%1; exit $rc" % (
        sys.executable, spinner, path)
    proc = subprocess.run(["unshare", "-p", "-f", "--mount-proc", "sh", "-c", script],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "PID namespace of its own" in proc.stderr, proc.stderr
    assert "--pid=host" in proc.stderr, proc.stderr
    assert "Sampling" not in proc.stdout and "Tracing" not in proc.stdout


@pytest.mark.parametrize("tool", BPF_TOOLS)
def test_runs_in_the_host_pid_namespace(tool):
    """The same check lets a tool run where it should (1 s, every process)."""
    proc = subprocess.run([tool_path(tool), "1"], capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "PID namespace of its own" not in proc.stderr
