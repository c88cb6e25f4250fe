"""Launching a command (TOOL -- CMD) and following a process's workers
(-p PID --children), against real interpreters: the launched command's
functions from its first frame and its exit status, who it runs as under
sudo, a forking server's workers (forked before and after the start, and
spawned) profiled while a busy process outside the tree is not."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from conftest import tool_path, WORKLOADS
import interpreters
from profiling import start_tool, finish, parse_folded, frame_name, read_json
from test_pyprofile import host_interp as _host_interp

# 997 Hz: the first function burns 0.6 s of CPU and each worker 1 s, so
# their 15% and 20% bounds are 5 to 6 standard deviations of a sample
# count (at 199 Hz they were 1.6 to 2.8, and a loaded run fell outside)
HZ = 997
LAUNCHED = os.path.join(WORKLOADS, "launched.py")
SERVER = os.path.join(WORKLOADS, "forking_server.py")


@pytest.fixture(scope="session")
def tools():
    paths = {t: tool_path(t) for t in ("pyprofile", "pyoffcpu", "pygil")}
    for p in paths.values():
        if not os.access(p, os.X_OK):
            pytest.fail("%s not built" % p)
    return paths


def samples_by_function(rows):
    """Samples per Python function anywhere in a stack (once per row)."""
    per = {}
    for frames, _, n in rows:
        for name in {frame_name(f) for f in frames if " (" in f}:
            per[name] = per.get(name, 0) + n
    return per


def run(argv, timeout=180, env=None):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout, env=env)


@pytest.fixture
def host_interp():
    return _host_interp()


def launch_profile(pyprofile, interp, tmp_path, status, extra=(), env=None):
    """pyprofile -F HZ -f -o OUT [extra] -- <interp> launched.py STATE STATUS.
    Returns (completed process, folded rows, the workload's state)."""
    script = interp.place(LAUNCHED)
    scratch = interp.scratch(tmp_path)
    out = os.path.join(str(tmp_path), "out.folded")
    try:
        r = run([pyprofile, "-F", str(HZ), "-f", "-o", out] + list(extra) + ["--"] +
                interp.argv + [script, scratch.proc_path("state.json"), status], env=env)
        state = read_json(scratch.host_path("state.json"), timeout=1)
    finally:
        scratch.cleanup()
    with open(out, encoding="utf-8") as fp:
        return r, parse_folded(fp.read()), state


def test_launched_command_from_its_first_frame(interp, tools, tmp_path):
    """The command's first Python function (its first statement burns CPU)
    is sampled in full: its samples match the CPU time it measured within
    15%, but for the samples the tool says fell before it could read the
    process (its start-up: about 50 ms idle, 130 ms at a load of two); the
    tool exits with the command's status."""
    r, rows, state = launch_profile(tools["pyprofile"], interp, tmp_path, "7")
    assert r.returncode == 7, r.stderr
    assert "the command exited with status 7" in r.stderr
    want = state["first_work_cpu"] * HZ
    got = samples_by_function(rows).get("first_work", 0)
    m = re.search(r"^pyprofile: (\d+) samples? of the processes asked for fell before", r.stderr,
                  re.M)
    unread = int(m.group(1)) if m else 0
    assert got <= 1.15 * want and got + unread >= 0.85 * want, (got, unread, want, r.stderr)


def test_launched_command_killed_by_a_signal(host_interp, tools, tmp_path):
    r, rows, _ = launch_profile(tools["pyprofile"], host_interp, tmp_path, "SIGTERM")
    assert r.returncode == 128 + 15, r.stderr
    assert samples_by_function(rows).get("first_work", 0) > 0


def test_command_that_cannot_run(tools, tmp_path):
    """Shell statuses: 127 not found, 126 not executable."""
    r = run([tools["pyprofile"], "--", "/nonexistent/command"])
    assert r.returncode == 127
    assert "cannot run /nonexistent/command: No such file or directory" in r.stderr
    not_executable = os.path.join(str(tmp_path), "data.txt")
    with open(not_executable, "w") as fp:
        fp.write("data\n")
    os.chmod(not_executable, 0o644)
    r = run([tools["pyoffcpu"], "--", not_executable])
    assert r.returncode == 126
    assert "Permission denied" in r.stderr


@pytest.mark.serial  # (conftest.py: every Python process)
@pytest.mark.parametrize("tool", ["pyprofile", "pyoffcpu", "pygil"])
def test_command_line_errors(tools, tool):
    for args, message in ((["-p", "1", "--", "true"], "cannot go with -p or -t"),
                          (["-t", "1", "--", "true"], "cannot go with -p or -t"),
                          (["--children"], "--children needs -p"),
                          (["--run-as", "nobody"], "--run-as needs a command"),
                          (["--"], "no command after --"),
                          (["--run-as", "no-such-user-x", "--", "true"], "no such user")):
        r = run([tools[tool]] + args)
        assert r.returncode in (1, 2) and message in r.stderr, (args, r.stderr)


def open_dir():
    """A directory any user may write, with launched.py in it (pytest's
    tmp_path is root's alone)."""
    d = tempfile.mkdtemp(prefix="pybpf-launch-")
    os.chmod(d, 0o777)
    shutil.copy(LAUNCHED, d)
    os.chmod(os.path.join(d, "launched.py"), 0o644)
    return d


@pytest.mark.parametrize("how,want_uid", [("sudo", 65534), ("sudo-run-as-root", 0),
                                          ("run-as", 65534)])
def test_who_the_command_runs_as(tools, how, want_uid):
    """Under sudo the command runs as the user who ran sudo, with that
    user's groups only (none of root's); --run-as overrides; the command is
    profiled either way."""
    d = open_dir()
    try:
        who, samples, r = run_as(tools, d, how)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    assert who["uid"] == want_uid and who["gid"] == want_uid, who
    if want_uid:
        assert who["groups"] == [65534] and who["home"] == "/nonexistent", who
    else:
        assert who["groups"] == [] or 0 in who["groups"], who
    assert samples > 0, r.stderr


def run_as(tools, d, how):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUDO_")}
    extra = []
    if how.startswith("sudo"):
        env.update(SUDO_UID="65534", SUDO_GID="65534", SUDO_USER="nobody")
    if how == "sudo-run-as-root":
        extra = ["--run-as", "root"]
    if how == "run-as":
        extra = ["--run-as", "nobody"]
    out = os.path.join(d, "out.folded")
    state = os.path.join(d, "state.json")
    r = run([tools["pyprofile"], "-F", str(HZ), "-f", "-o", out] + extra +
            ["--", interpreters.HOST_PYTHON, os.path.join(d, "launched.py"), state, "0"],
            env=env)
    who = {}
    if os.path.exists(state):
        with open(state) as fp:
            who = json.load(fp)
    with open(out, encoding="utf-8") as fp:
        samples = samples_by_function(parse_folded(fp.read())).get("first_work", 0)
    return who, samples, r


def worker_truth(scratch, name):
    return read_json(scratch.host_path(name + ".json"), timeout=30)["cpu"]


def profile_server(interp, pyprofile, tmp_path, children):
    """Profiles forking_server.py by its master's PID (with or without
    --children) while an outsider burns CPU. Returns (folded rows, stderr,
    the workers' CPU seconds)."""
    script = interp.place(SERVER)
    scratch = interp.scratch(tmp_path)
    out = os.path.join(str(tmp_path), "server.folded")
    master = interp.spawn([script, scratch.proc])
    outsider = interp.spawn([script, scratch.proc, "outsider"])
    try:
        read_json(scratch.host_path("state.json"), key="ready")
        tool = start_tool(pyprofile, ["-F", str(HZ), "-f", "-o", out, "-p", str(master.pid)] +
                          (["--children"] if children else []) + ["120"])
        with open(scratch.host_path("go"), "w"):
            pass
        rc, _, err = finish(tool, timeout=180)
        assert rc == 0, err
        truth = {w: worker_truth(scratch, w)
                 for w in ("early_worker", "forked_worker", "spawned_worker")}
    finally:
        master.kill()
        outsider.kill()
        scratch.cleanup()
    with open(out, encoding="utf-8") as fp:
        return parse_folded(fp.read()), err, truth


def test_children_of_a_forking_server(interp, tools, tmp_path):
    """-p MASTER --children: the worker forked before the start, the one
    forked after and the one spawned as a new interpreter each get their
    CPU time's worth of samples (within 20%); the busy process outside the
    tree gets none; the run ends when the tree has exited."""
    rows, err, truth = profile_server(interp, tools["pyprofile"], tmp_path, True)
    per = samples_by_function(rows)
    for worker, cpu in truth.items():
        want = cpu * HZ
        assert abs(per.get(worker, 0) - want) <= 0.20 * want, (worker, per, want, err)
    assert "outsider_spin" not in per, per
    assert "every target process has exited" in err


def test_without_children_a_hint_names_them(host_interp, tools, tmp_path):
    """-p MASTER alone: its worker is not profiled, and the summary says
    how many descendants were left out and how to include them."""
    script = host_interp.place(SERVER)
    scratch = host_interp.scratch(tmp_path)
    master = host_interp.spawn([script, scratch.proc])
    try:
        read_json(scratch.host_path("state.json"), key="ready")
        r = run([tools["pyprofile"], "-f", "-p", str(master.pid), "1"])
    finally:
        master.kill()
        scratch.cleanup()
    assert r.returncode == 0, r.stderr
    assert ("the given process has 1 descendant process, not traced: "
            "--children traces it too") in r.stderr, r.stderr
