"""pymem's growth mode against real interpreters: a workload keeps about
130 MB of strings from grow_strings and a 64 MiB bytearray from grow_buffer
(the VmRSS each added, as it read it); pymem -f must put at least 80% of
the bytes it counts in stacks through those two functions, in their
proportion within 15%, and count in all within 10% of the process's
VmRSS growth. One run per interpreter serves every assertion (the target
exits mid-run: the report is kept); Ctrl-C keeps the report too (one
interpreter)."""
import os
import signal
import tempfile
import time

import pytest

from conftest import WORKLOADS
from profiling import start_tool, finish, parse_folded, frame_name, read_json

WORKLOAD = os.path.join(WORKLOADS, "memory_growth.py")


def bytes_by_function(folded):
    """{"grow_strings": bytes, "grow_buffer": bytes, "total": bytes}"""
    out = {"grow_strings": 0, "grow_buffer": 0, "total": 0}
    for frames, _, n in parse_folded(folded):
        names = {frame_name(f) for f in frames}
        for fn in ("grow_strings", "grow_buffer"):
            if fn in names:
                out[fn] += n
        out["total"] += n
    return out


def vmrss(pid):
    """VmRSS of a process, read from the host's /proc (a chroot may have none)."""
    with open("/proc/%d/status" % pid) as fp:
        for line in fp:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for %d" % pid)


@pytest.fixture(scope="module")
def growth(interp, pymem, tmp_path_factory):
    """(bytes by function, pymem's stderr, truth): the workload's own figures,
    and "rss_host_before"/"rss_host_after", its VmRSS read from the host
    before "go" and once it is done (it lingers until read); the target
    exits mid-run, which ends pymem."""
    script = interp.place(WORKLOAD)
    tmp = tempfile.mkdtemp(dir=str(tmp_path_factory.mktemp("growth-" + interp.id)))
    scratch = interp.scratch(tmp)
    out = os.path.join(tmp, "report")
    open(scratch.host_path("linger"), "w").close()
    open(scratch.host_path("pause"), "w").close()
    proc = interp.spawn([script, scratch.proc])
    try:
        state = read_json(scratch.host_path("state.json"), key="ready", timeout=60)
        tool = start_tool(pymem, ["-f", "-p", str(proc.pid), "-o", out])
        truth = {"rss_host_before": vmrss(proc.pid)}
        open(scratch.host_path("go"), "w").close()
        read_json(scratch.host_path("state.json"), key="mid", timeout=60)
        truth["rss_host_mid"] = vmrss(proc.pid)
        open(scratch.host_path("go2"), "w").close()
        truth.update(read_json(scratch.host_path("state.json"), key="done", timeout=60))
        truth["rss_host_after"] = vmrss(proc.pid)
        os.unlink(scratch.host_path("linger"))
        rc, _, err = finish(tool)
        assert rc == 0, err
    finally:
        proc.kill()
        scratch.cleanup()
    assert state["pid"]
    with open(out, encoding="utf-8") as fp:
        return bytes_by_function(fp.read()), err, truth


def test_bytes_in_the_growing_functions(growth):
    got, err, truth = growth
    through = got["grow_strings"] + got["grow_buffer"]
    assert got["total"] > 0, err
    assert through >= 0.8 * got["total"], (got, err)


def test_proportion(growth):
    """Against what each function added to VmRSS, read from the host's
    /proc before, between and after them (a chroot without /proc gives the
    workload only its peak, which carries the peak of the process it was
    forked from: pytest's, late in a long run)."""
    got, err, truth = growth
    want = ((truth["rss_host_mid"] - truth["rss_host_before"]) /
            (truth["rss_host_after"] - truth["rss_host_mid"]))
    assert got["grow_buffer"] > 0, (got, err)
    ratio = got["grow_strings"] / got["grow_buffer"]
    assert abs(ratio - want) <= 0.15 * want, (ratio, want, got, truth)


def test_total_against_vmrss(growth):
    got, err, truth = growth
    grew = truth["rss_host_after"] - truth["rss_host_before"]
    assert abs(got["total"] - grew) <= 0.1 * grew, (got, grew, err)


def test_summary(growth):
    got, err, truth = growth
    assert "page faults made pages resident" in err, err
    assert "RSS CHANGE" in err, err  # the per-process table (stderr with -f)


def test_ctrl_c_keeps_the_report(pymem, tmp_path):
    from test_pyprofile import host_interp
    interp = host_interp()
    script = interp.place(WORKLOAD)
    scratch = interp.scratch(tempfile.mkdtemp(dir=str(tmp_path)))
    open(scratch.host_path("linger"), "w").close()
    proc = interp.spawn([script, scratch.proc, "200000", "16"])
    try:
        read_json(scratch.host_path("state.json"), key="ready", timeout=60)
        tool = start_tool(pymem, ["-p", str(proc.pid)])
        open(scratch.host_path("go"), "w").close()
        read_json(scratch.host_path("state.json"), key="done", timeout=60)
        time.sleep(0.3)
        tool.send_signal(signal.SIGINT)
        rc, out, err = finish(tool)
    finally:
        os.unlink(scratch.host_path("linger"))
        proc.kill()
        scratch.cleanup()
    assert rc == 0, err
    assert "grow_strings" in out and "grow_buffer" in out, out
    assert "RSS CHANGE" in out, out
