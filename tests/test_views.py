"""pyprofile's other views of the same samples, against a launched
workload's own measures: --wall (on-CPU samples and off-CPU time in one
unit: shares of each function's wall time, the waiting part marked and
explained), --threads (process and thread at the root of each stack) and
--function (one frame per function, at its def line)."""
import os


from conftest import WORKLOADS
from profiling import parse_folded, frame_name, read_json
from test_launch import run

# 997 Hz: burn's 0.8 s of CPU gives some 800 samples, and its 15% bound is
# 4 standard deviations of their count (1.9 at 199 Hz)
HZ = 997
WORKLOAD = os.path.join(WORKLOADS, "views.py")
OFFCPU = "[off-CPU]"


def profile(interp, pyprofile, tmp_path, args):
    """pyprofile -F HZ -f ARGS -o OUT -- <interp> views.py STATE. Returns
    (folded rows, stderr, the workload's truth)."""
    script = interp.place(WORKLOAD)
    scratch = interp.scratch(tmp_path)
    out = os.path.join(str(tmp_path), "out.folded")
    try:
        r = run([pyprofile, "-F", str(HZ), "-f", "-o", out] + list(args) + ["--"] +
                interp.argv + [script, scratch.proc_path("state.json")])
        assert r.returncode == 0, r.stderr
        truth = read_json(scratch.host_path("state.json"), timeout=1)
    finally:
        scratch.cleanup()
    with open(out, encoding="utf-8") as fp:
        return parse_folded(fp.read()), r.stderr, truth


def innermost(frames, names):
    """The innermost frame of frames named one of names, or None."""
    for f in reversed(frames):
        if frame_name(f) in names:
            return frame_name(f)
    return None


def test_wall_shares_match_wall_time(interp, pyprofile, tmp_path):
    """beta's two functions, a CPU burst and a sleep, share its wall time
    as they measured it (within 5 points); burn's on-CPU part is its CPU
    time (within 15%) and the rest, runnable or waiting for the GIL, sits
    under [off-CPU]; nap's time is off-CPU (within 10% of its wall time),
    its [sleep] part the sleep it asked for (within 10%)."""
    rows, err, truth = profile(interp, pyprofile, tmp_path, ["--wall", "-U"])
    on = {"burn": 0, "nap": 0}
    off = {"burn": {}, "nap": {}}
    for frames, _, us in rows:
        f = innermost(frames, ("burn", "nap"))
        if not f:
            continue
        if OFFCPU in frames:
            assert frames.index(OFFCPU) == len(frames) - 2, frames  # then the reason
            off[f][frames[-1]] = off[f].get(frames[-1], 0) + us
        else:
            on[f] += us
    total = {f: on[f] + sum(off[f].values()) for f in on}
    wall = {f: truth[f]["wall"] for f in on}
    for f in on:
        share, want = total[f] / sum(total.values()), wall[f] / sum(wall.values())
        assert abs(share - want) <= 0.05, (f, share, want, on, off, err)
    cpu_us = truth["burn"]["cpu"] * 1e6
    assert abs(on["burn"] - cpu_us) <= 0.15 * cpu_us, (on, cpu_us, err)
    assert on["nap"] <= 0.02 * total["nap"], (on, off)
    nap_us = truth["nap"]["wall"] * 1e6
    assert abs(total["nap"] - nap_us) <= 0.10 * nap_us, (off, nap_us)
    asked_us = truth["nap"]["asked"] * 1e6  # the rest is waking: runnable, the GIL
    assert abs(off["nap"].get("[sleep]", 0) - asked_us) <= 0.10 * asked_us, (off, asked_us)
    assert set(off["burn"]) <= {"[runnable: waiting for a CPU]", "[GIL wait]"}, off
    assert "wall clock:" in err


def test_threads_at_the_root(interp, pyprofile, tmp_path):
    """--threads: every stack starts with its process and thread; each
    thread's own function is under its own thread only."""
    rows, err, truth = profile(interp, pyprofile, tmp_path, ["--threads", "-U"])
    seen = {}
    for frames, _, n in rows:
        assert frames[0].startswith("[PID ") and frames[1].startswith("[TID "), frames[:3]
        tid, name = frames[1][5:-1].split(" ", 1)
        for func in ("alpha_work", "burn"):
            if innermost(frames, (func,)):
                seen.setdefault(func, set()).add((int(tid), name))
    if interp.pidns:
        # the workload knows its tids in its own PID namespace, the tool
        # shows the host's: one thread each, by name, and not the same one
        (alpha_tid, alpha_name), = seen.get("alpha_work", {(0, None), (0, None)})
        (beta_tid, beta_name), = seen.get("burn", {(0, None), (0, None)})
        assert (alpha_name, beta_name) == ("alpha", "beta") and alpha_tid != beta_tid, seen
    else:
        assert seen.get("alpha_work") == {(truth["alpha_tid"], "alpha")}, (seen, err)
        assert seen.get("burn") == {(truth["beta_tid"], "beta")}, (seen, err)


def test_function_is_one_frame_at_its_def_line(interp, pyprofile, tmp_path):
    """Without --function alpha_work's samples fall on its two hot lines;
    with it, on one frame at its def line."""
    def lines(rows):
        found = {}
        for frames, _, n in rows:
            for f in frames:
                if frame_name(f) == "alpha_work":
                    line = int(f.rsplit(":", 1)[1].rstrip(")"))
                    found[line] = found.get(line, 0) + n
        return found

    plain, _, truth = profile(interp, pyprofile, tmp_path, ["-U"])
    hot = lines(plain)
    assert set(truth["alpha_hot"]) <= set(hot), (hot, truth)
    by_function, err, truth = profile(interp, pyprofile, tmp_path, ["-U", "--function"])
    assert set(lines(by_function)) == {truth["alpha_def"]}, (lines(by_function), err)
