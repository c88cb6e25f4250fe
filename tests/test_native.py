"""Native frames unwound in BPF from the binaries' unwind tables, on every
interpreter of the matrix (none but Debian's 3.15 keeps frame pointers):
placed under the Python frames that called them, named, and matched
against what the workload does and against perf's DWARF unwinder."""
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import BUILD, WORKLOADS
from test_hostile_maps import MARKER as MAPPING_CHANGED
import interpreters
from profiling import (cpu_seconds, finish, frame_name, parse_folded, run_on_cue, run_until,
                       start_tool, wall_seconds)

WORKLOAD = os.path.join(WORKLOADS, "native_work.py")
PY_FRAME = re.compile(r".* \(.*:(\d+|\?)\)$")


def is_python(frame):
    return bool(PY_FRAME.match(frame))


def walks_ended_early(err, pid):
    """(ended early, all) native walks of pid from the summary, or None."""
    m = re.search(r"native stacks of .*? \(PID %d\): (\d+) of (\d+) walks? ended early" % pid, err)
    return (int(m.group(1)), int(m.group(2))) if m else None


# CPU seconds each profiled workload (by PID) had while the tool ran: the
# samples a rate can give on a loaded machine.
CPU_GOT = {}


def enough_walks(pid, hz):
    """The walks a run must have counted: 75% of what its rate gives over
    the CPU time the workload had, and at least 100 (a share of them
    means something)."""
    return max(100, int(0.75 * hz * CPU_GOT[pid]))


MAX_RUN = 120  # s: a run that cannot get its CPU time by then fails on its counts


def profile(interp, tool, args, seconds, workload=None, waits=False):
    """Runs a workload (its argv, the script placed first; native_work.py
    if none) and the tool on it (run_until); (rows, stderr, pid). A
    sampling run lasts until the workload has had 75% of SECONDS of CPU
    time (what its busy thread gets in SECONDS on an idle machine), so a
    loaded machine's run counts as much as an idle one's; a run of WAITS
    lasts SECONDS. The CPU time the workload had meanwhile goes to
    CPU_GOT."""
    proc = interp.spawn(workload or [interp.place(WORKLOAD), "120"])
    try:
        time.sleep(1.5)  # past the imports
        clock, amount = (wall_seconds, seconds) if waits else (cpu_seconds, 0.75 * seconds)
        out, err, got = run_until(tool, ["-f", "-p", str(proc.pid)] + args, proc.pid, clock,
                                  amount, MAX_RUN)
        if not waits:
            CPU_GOT[proc.pid] = got
    finally:
        proc.kill()
    return parse_folded(out), err, proc.pid


def below(frames, name):
    """The frames after (called by) the last frame named name; none if no
    frame is (a sample taken while the call was still being made)."""
    idx = [i for i, f in enumerate(frames) if frame_name(f) == name]
    return frames[idx[-1] + 1:] if idx else []


@pytest.fixture(scope="module")
def cpu_profile(interp, pyprofile):
    return profile(interp, pyprofile, ["-U", "-F", "199"], 4)


def share(rows, where, has):
    """(samples of rows with frame `where` that satisfy has, all of them)."""
    picked = [(fr, c) for fr, _, c in rows if any(frame_name(f) == where for f in fr)]
    return sum(c for fr, c in picked if has(fr)), sum(c for _, c in picked)


def test_zlib_time_is_in_deflate(interp, cpu_profile):
    """do_zlib's samples go on into libz's deflate, below the Python frame
    that called compress, and only native frames follow it."""
    rows, err, pid = cpu_profile
    print("interpreter:", interp.id)
    hit, total = share(rows, "do_zlib", lambda fr: "deflate" in below(fr, "do_zlib"))
    assert total >= 100, err
    assert hit >= 0.85 * total, (hit, total, [r for r in rows if "do_zlib" in str(r)][:5])
    for frames, _, _ in rows:
        if any(frame_name(f) == "do_zlib" for f in frames):
            assert not any(is_python(f) for f in below(frames, "do_zlib")), frames


def json_module_file(interp):
    """Where the interpreter's _json C module is: its file, or "" when it
    is built into the interpreter."""
    return subprocess.run(interp.argv + ["-c", "import _json; print(getattr(_json, '__file__', ''))"],
                          stdout=subprocess.PIPE, universal_newlines=True, timeout=60,
                          check=True).stdout.strip()


def test_json_time_is_in_the_c_encoder(interp, cpu_profile):
    """do_json's samples go on below iterencode into native code: the
    _json module's encoder, named where it has symbols, else as the module
    and its function's start; where _json is built into a stripped
    interpreter (Debian's 3.13+), its recursion of unnamed functions."""
    rows, err, _ = cpu_profile
    own_file = json_module_file(interp)

    def in_json(fr):
        # co_qualname from 3.11 on, co_name before
        native = below(fr, "JSONEncoder.iterencode") or below(fr, "iterencode")
        if own_file:
            return any("_json" in f or f.startswith("encoder_") for f in native)
        return len(native) >= 2 and not any(is_python(f) for f in native)

    hit, total = share(rows, "do_json", in_json)
    print("interpreter: %s, _json in %s" % (interp.id, own_file or "the interpreter"))
    assert total >= 40, err
    assert hit >= 0.7 * total, (hit, total, [r for r in rows if "do_json" in str(r)][:5])


def test_sort_callback_interleaves(interp, cpu_profile):
    """sorted(key=key_of): native frames of the sort sit between do_sort and
    key_of, in the order the program called them."""
    rows, err, _ = cpu_profile
    hit, total = share(rows, "key_of", lambda fr: any(
        not is_python(f) for f in fr[[frame_name(x) for x in fr].index("do_sort") + 1:
                                     [frame_name(x) for x in fr].index("key_of")]))
    assert total >= 30, err
    assert hit >= 0.9 * total, (hit, total)


def test_frames_are_named_and_rooted_in_python(interp, cpu_profile):
    """No bare [unknown] frame (an unnamed one says its module and offset);
    the interpreter's start-up frames are left out, so the main thread's
    stacks start at <module>; the summary counts walks that ended early."""
    rows, err, pid = cpu_profile
    for frames, _, _ in rows:
        assert not any(f.startswith("[unknown]") for f in frames), frames
    main = [(fr, c) for fr, _, c in rows if any(frame_name(f) == "do_zlib" for f in fr)]
    assert all(frame_name(fr[0]) == "<module>" for fr, _ in main), main[:3]
    assert "native frames not shown" not in err, err
    ends = walks_ended_early(err, pid)
    print("walks ended early: %s; %.2f s of CPU" % (ends, CPU_GOT[pid]))
    assert ends and ends[1] >= enough_walks(pid, 199), err
    assert ends[0] <= 0.05 * ends[1], err


def test_library_loaded_late_is_named_after_exit(interp, pyprofile, tmp_path):
    """A library the process maps while the profiler runs (bz2's) gets its
    rows and its names while the process lives: the process exits before
    the report, and its frames are still named, none [unknown]."""
    text, err, _ = run_on_cue(interp, pyprofile, os.path.join(WORKLOADS, "late_library.py"),
                              tmp_path, ["-U", "-F", "199", "-f"], ready="ready.json",
                              settle=1)  # its stacks of waiting drained and named first
    rows = parse_folded(text)
    print("interpreter:", interp.id)
    hit, total = share(rows, "do_bz2", lambda fr: any(
        f.startswith(("BZ2_", "libbz2.so")) for f in below(fr, "do_bz2")))
    assert total >= 100, err
    assert hit >= 0.85 * total, (hit, total, [r for r in rows if "do_bz2" in str(r)][:5])
    for frames, _, _ in rows:
        assert not any(f.startswith("[unknown]") for f in frames), frames


NOUNWIND_C = r"""
#include <string.h>

static char src[1 << 20], dst[1 << 20];
/* through a pointer: a call into libc, never inlined */
void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

__attribute__((noinline)) long nounwind_copy(int rounds)
{
	long sum = 0;

	for (int i = 0; i < rounds; i++) {
		copy_fn(dst, src, sizeof(dst));
		sum += dst[i & 1023];
		src[i & 1023] = (char)i;
	}
	return sum;
}
"""
NO_INFO_MARKER = "[native walk ended: no unwind info]"


@pytest.fixture(scope="session")
def libnounwind(tmp_path_factory):
    """A library without unwind information (no .eh_frame: no unwind
    tables and no start files, whose code has them) nor frame pointers."""
    if not shutil.which("gcc"):
        pytest.skip("no gcc to build the library")
    d = tmp_path_factory.mktemp("libnounwind")
    src, built = d / "nounwind.c", d / "libnounwind.so"
    src.write_text(NOUNWIND_C)
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-nostartfiles", "-fno-stack-protector",
                    "-fno-asynchronous-unwind-tables", "-fno-unwind-tables",
                    "-fomit-frame-pointer", "-o", str(built), str(src)], check=True)
    sections = subprocess.run(["readelf", "-SW", str(built)], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout
    assert not re.search(r"\.eh_frame +PROGBITS +\w+ +\w+ +0*[1-9a-f]", sections), sections
    return str(built)


def test_walk_ended_early_keeps_its_frames(interp, pyprofile, libnounwind):
    """A walk from libc's memcpy meets the library's nounwind_copy, code
    without unwind information, and cannot reach the eval loop: the frames
    it walked stay, on top of the Python frame that made the ctypes call,
    after a frame that says why the walk stopped; the summary counts the
    walks by that reason."""
    workload = [interp.place(os.path.join(WORKLOADS, "nounwind_spin.py")),
                interp.place(libnounwind), "120"]
    rows, err, pid = profile(interp, pyprofile, ["-U", "-F", "199"], 3, workload)
    print("interpreter:", interp.id)
    picked = [(fr, c) for fr, _, c in rows if any(frame_name(f) == "spin" for f in fr)]
    total = sum(c for _, c in picked)
    # enough samples for the shares below to mean something (the run lasts
    # until the busy thread has had 2.25 CPU-seconds: 447 samples)
    assert total >= 60, err
    kept = with_leaf = 0
    for frames, count in picked:
        after = below(frames, "spin")
        if after[:2] != [NO_INFO_MARKER, "nounwind_copy"]:
            continue
        kept += count
        # memcpy's frame: libc's, named or not, and nothing else
        if len(after) == 3 and ("memcpy" in after[2] or "memmove" in after[2] or
                                after[2].startswith("libc")):
            with_leaf += count
        assert len(after) <= 3, frames
    assert kept >= 0.9 * total, (kept, total, picked[:5])
    assert with_leaf >= 0.5 * total, (with_leaf, total, picked[:5])
    ends = walks_ended_early(err, pid)
    assert ends and ends[0] >= 0.5 * total, err
    assert re.search(r"walks ended early: \d+ met code without unwind information", err), err
    assert "native walks ended before the interpreter's eval loop" in err, err


PLT_C = r"""
#include <stdlib.h>
#include <string.h>
int (*volatile abs_ptr)(int);
long plt_spin(const char *s, long n)
{
	long t = 0;

	abs_ptr = abs; /* its address taken too: abs's stub is in .plt.got */
	for (long i = 0; i < n; i++) {
		t += (long)strlen(s + (i & 1));
		t += labs(-i);
		t += abs((int)-i);
	}
	return t;
}
"""
PLT_STUBS = {"strlen@plt", "labs@plt", "abs@plt"}
# what precedes or follows the PLT sections in such a library
PLT_NEIGHBOURS = {"_init", "_fini", "deregister_tm_clones", "register_tm_clones",
                  "__do_global_dtors_aux", "frame_dummy"}


@pytest.fixture(scope="session", params=["plt", "plt.sec"])
def libplt(request, tmp_path_factory):
    """A library that calls libc through its PLT: strlen and labs through
    .plt (or, built for IBT, .plt.sec), abs through .plt.got."""
    if not shutil.which("gcc"):
        pytest.skip("no gcc to build the library")
    d = tmp_path_factory.mktemp("libplt")
    src, built = d / "plt.c", d / ("libplt-%s.so" % request.param)
    src.write_text(PLT_C)
    ibt = ["-fcf-protection=full", "-Wl,-z,ibtplt"] if request.param == "plt.sec" else []
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-fno-builtin"] + ibt +
                   ["-o", str(built), str(src)], check=True)
    sections = subprocess.run(["readelf", "-SW", str(built)], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout
    for name in (".plt.got", ".plt.sec" if ibt else ".plt"):
        assert re.search(r"\%s +PROGBITS" % name, sections), sections
    return str(built)


def test_plt_stubs_are_named_after_their_targets(interp, pyprofile, libplt):
    """Samples in a PLT stub are named after the function the stub jumps
    to, from the relocation of its GOT slot (strlen@plt, labs@plt through
    .plt or .plt.sec, abs@plt through .plt.got), never after the symbol
    before the section (_init) or another neighbour."""
    workload = [interp.place(os.path.join(WORKLOADS, "plt_spin.py")),
                interp.place(libplt), "120"]
    # A stub is one jmp: how often a timer interrupt lands on it, and on
    # which of the three, is the CPU's affair (an AMD EPYC put 3% of the
    # loop's samples in stubs; another CPU half, each stub its share; CI's
    # put 11% on two stubs and none on the third; this VM 0.9% to 5% of
    # some 445 samples, and once none; on 2026-11-29 the same VM on another
    # host put none in 3 x 450, run after run, with every build). What is
    # held here is that a sampled stub is named so, so a run that sampled
    # none is followed by another, up to three, and a CPU that put none in
    # any skips the test, saying so (nothing to check: a fail there would
    # be the CPU's verdict, not the tool's); every byte of every stub is
    # held to objdump's names by test_plt_stub_names_match_objdump, and
    # every run here to no neighbour's name.
    stubs, totals = {}, []
    for _ in range(3):
        rows, err, pid = profile(interp, pyprofile, ["-U", "-F", "199"], 3, workload)
        picked = [(fr, c) for fr, _, c in rows if any(frame_name(f) == "plt_spin" for f in fr)]
        totals.append(sum(c for _, c in picked))
        assert totals[-1] >= 60, err
        for frames, count in picked:
            names = [frame_name(f) for f in frames]
            assert not PLT_NEIGHBOURS & set(names), frames
            after = below(frames, "plt_spin")
            if after and after[0].endswith("@plt"):
                assert after[0] in PLT_STUBS and len(after) == 1, frames
                stubs[after[0]] = stubs.get(after[0], 0) + count
        if stubs:
            break
    print("samples in plt_spin per run %s, in its stubs %s" % (totals, stubs))
    if not stubs:
        pytest.skip("this CPU put none of %s samples of the loop in a PLT stub" % totals)


def objdump_plt(path):
    """{address: name} of every byte of PATH's PLT sections by objdump's
    labels: the NAME@plt label the byte follows, or "[plt]" for code under
    no such label (PLT0, the lazy stubs of an IBT library's .plt)."""
    sections = {}
    for line in subprocess.run(["readelf", "-SW", path], stdout=subprocess.PIPE,
                               universal_newlines=True, check=True).stdout.splitlines():
        m = re.search(r"\] (\.plt(?:\.got|\.sec)?) +PROGBITS +([0-9a-f]+) +[0-9a-f]+ +([0-9a-f]+)", line)
        if m:
            start = int(m.group(2), 16)
            sections[m.group(1)] = (start, start + int(m.group(3), 16))
    assert ".plt" in sections and ".plt.got" in sections, sections
    names = {}
    for name, (start, end) in sections.items():
        text = subprocess.run(["objdump", "-d", "-j", name, path], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout
        labels = sorted((int(a, 16), n) for a, n in
                        re.findall(r"^([0-9a-f]+) <([^>]+)>:$", text, re.M))
        for addr in range(start, end):
            under = [n for a, n in labels if a <= addr]
            names[addr] = under[-1] if under and under[-1].endswith("@plt") else "[plt]"
    return names


def test_plt_stub_names_match_objdump(libplt):
    """Every byte of every PLT stub (.plt, .plt.got, .plt.sec) is named as
    objdump names the stub, at its offset in the stub; PLT0 and lazy stubs
    are [plt]. Exact, whatever the CPU: no sampling involved."""
    probe = os.path.join(BUILD, "tests", "plt_probe")
    if not os.access(probe, os.X_OK):
        pytest.fail("%s not built (set PYBPF_BUILD or build with meson first)" % probe)
    want = objdump_plt(libplt)
    assert {"strlen@plt", "labs@plt", "abs@plt"} <= set(want.values()), want
    out = subprocess.run([probe, libplt] + ["%x" % a for a in sorted(want)],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    got = dict(line.split(" ", 1) for line in out.splitlines())
    starts = {}  # each stub's first byte
    for addr, name in sorted(want.items()):
        if name != "[plt]":
            starts.setdefault(name, addr)
    wrong = []
    for addr, name in sorted(want.items()):
        name_got, _, off = got["%x" % addr].partition("+0x")
        if name_got != name or (name != "[plt]" and int(off, 16) != addr - starts[name]):
            wrong.append("%x: %s, objdump %s" % (addr, got["%x" % addr], name))
    assert not wrong, "\n".join(wrong[:40])


def test_vdso_is_unwound(interp, pyprofile):
    """time.thread_time() asks the kernel from inside the vDSO: walks go on
    through the vDSO's own unwind information (read from the process's
    memory) into libc's clock_gettime and up to the eval loop; none ends
    in 'no mapped file', and the vDSO's frame is named, under libc's."""
    workload = [interp.place(os.path.join(WORKLOADS, "vdso_clock.py")), "120"]
    rows, err, pid = profile(interp, pyprofile, ["-U", "-F", "199"], 3, workload)
    print("interpreter:", interp.id)
    picked = [(fr, c) for fr, _, c in rows if any(frame_name(f) == "tick" for f in fr)]
    total = sum(c for _, c in picked)
    assert total >= 60, err
    in_vdso = 0
    for frames, count in picked:
        after = below(frames, "tick")
        assert not any(f.startswith(("[native walk ended", "[unknown]", "[vdso]")) for f in after), \
            frames
        # libc's clock_gettime (its own name for it where it keeps .symtab)
        # and the vDSO's below it
        if any("clock_gettime" in a and "clock_gettime" in b for a, b in zip(after, after[1:])):
            in_vdso += count
    assert in_vdso >= 0.3 * total, (in_vdso, total, picked[:5])
    line = re.search(r"native stacks of .*? \(PID %d\):.*" % pid, err)
    assert not line or "no mapped file" not in line.group(0), err


def host_interp():
    for i in interpreters.discover()[0]:
        if isinstance(i, interpreters.Interpreter) and i.id == "host-3.11":
            return i
    pytest.skip("host python3.11 not available")


def test_startup_frames_are_kept_when_asked(pyprofile):
    """--startup-frames: the interpreter's start-up frames stay below
    <module> (Py_BytesMain is exported, so named even when stripped)."""
    rows, err, _ = profile(host_interp(), pyprofile, ["-U", "-F", "99", "--startup-frames"], 2)
    main = [(fr, c) for fr, _, c in rows if any(frame_name(f) == "do_zlib" for f in fr)]
    # a stack walked while the process's mappings were not yet known to
    # match (before user space first read them whole, any munmap counts as
    # a change) has its native frames left out and says so: a rehearsal had
    # one such sample (1 or 2 of about 70 in every run, until registration
    # read the mappings again at once after a change); at most 5% of them,
    # the rest with start-up frames, every one
    changed = sum(c for fr, c in main if fr[-1] == MAPPING_CHANGED)
    main = [(fr, c) for fr, c in main if fr[-1] != MAPPING_CHANGED]
    total = changed + sum(c for _, c in main)
    print("%d of %d samples in do_zlib marked %s" % (changed, total, MAPPING_CHANGED))
    assert main and changed <= 0.05 * total, err
    for frames, _ in main:
        startup = frames[:[frame_name(f) for f in frames].index("<module>")]
        assert "Py_BytesMain" in startup, frames


def test_blocked_thread_ends_in_libc(interp, pyoffcpu):
    """pyoffcpu: the sleeping thread's native frames go down to the libc
    call time.sleep makes (clock_nanosleep from 3.11 on, select before),
    and what follows it is libc's own (newer glibcs make the system call
    in an internal cancellation helper)."""
    # 3 s: each 50 ms sleep is followed by a wait for the GIL and, under
    # load, for a CPU, which shorten the time asleep (a rehearsal at a load
    # of 16 failed here with 2 s; its detail was not kept)
    rows, err, _ = profile(interp, pyoffcpu, ["-U"], 3, waits=True)
    want = "clock_nanosleep" if interp.version >= (3, 11) else "select"
    # the time it slept (not the GIL waits after each sleep, nor a
    # sleep begun before tracing, which has no stack)
    picked = [(fr, c) for fr, _, c in rows
              if any(frame_name(f) == "sleeper" for f in fr) and fr[-1] == "[sleep]"]
    total = sum(c for _, c in picked)
    assert total >= 1000000, (err, picked[:3])  # a second of sleep at least
    in_call = 0
    for frames, count in picked:
        native = [f for f in below(frames, "sleeper") if not f.startswith("[")]
        # libc's own name for it where libc has .symtab: __GI___clock_nanosleep
        at = [i for i, f in enumerate(native) if f.endswith(want)]
        if at and all(f.startswith(("libc.so", "__")) for f in native[at[0] + 1:]):
            in_call += count
    print("%s: %.2f s asleep, %.1f%% of it below %s" % (interp.id, total / 1e6,
                                                      100.0 * in_call / max(total, 1), want))
    assert in_call >= 0.9 * total, picked


def perf_stacks(pid, seconds):
    """perf record --call-graph dwarf on pid: ([(frames, count)] leaf
    first, the CPU seconds pid had while perf recorded)."""
    data = "/tmp/pybpf-perf-%d.data" % os.getpid()
    cpu0 = cpu_seconds(pid)
    subprocess.run(["perf", "record", "-q", "-F", "997", "--call-graph", "dwarf,16384",
                    "-o", data, "-p", str(pid), "--", "sleep", str(seconds)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, timeout=120)
    cpu = cpu_seconds(pid) - cpu0
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
                         timeout=300, universal_newlines=True).stdout
    os.unlink(data)
    stacks, cur = [], []
    for line in out.splitlines() + [""]:
        if line.strip():
            parts = line.split(None, 1)
            cur.append(parts[1].split("+0x")[0] if len(parts) > 1 else "[unknown]")
        elif cur:
            stacks.append(cur)
            cur = []
    return stacks, cpu


@pytest.mark.skipif(not shutil.which("perf"), reason="perf (linux-perf) is not installed")
def test_deflate_share_matches_perf(pyprofile, tmp_path):
    """Debian's python3.11 (no frame pointers): the share of samples in
    deflate matches perf's DWARF unwinder within 5 points, both sampling
    the same process at once (at 999 and 997 Hz, so neither keeps step
    with the other)."""
    out = str(tmp_path / "out.folded")
    proc = subprocess.Popen([host_interp().exe, WORKLOAD, "60"])
    try:
        time.sleep(1.5)
        tool = start_tool(pyprofile, ["-U", "-F", "999", "-o", out, "--format", "folded",
                                      "-p", str(proc.pid), "6"])
        perf, cpu = perf_stacks(proc.pid, 6)
        rc, _, err = finish(tool)
    finally:
        proc.kill()
    assert rc == 0, err
    with open(out, encoding="utf-8") as fp:
        rows = parse_folded(fp.read())
    ours_n = sum(c for _, _, c in rows)
    ours = sum(c for fr, _, c in rows if "deflate" in fr) / ours_n
    theirs = sum(1 for s in perf if "deflate" in s) / len(perf)
    print("deflate on the stack: pyprofile %.1f%% of %d, perf --call-graph dwarf %.1f%% of %d"
          " (%.2f CPU seconds)" % (100 * ours, ours_n, 100 * theirs, len(perf), cpu))
    # Both sample about 1,000 times per CPU second the process had, for
    # 6 s: some 6,000 samples each idle, 4,500 where the host's steal takes
    # a quarter (CI: perf got 74% of its rate); 1,400 in 4 s at a load of
    # 14 (2.3 CPU seconds, 60% of the rate). At 1,500 each, the least asked, the
    # two shares' difference has a standard deviation under 1.8 points, so
    # 5 points is not chance (at 199 Hz it was 2 standard deviations).
    assert min(ours_n, len(perf)) >= 1500, (ours_n, len(perf), cpu)
    assert abs(ours - theirs) <= 0.05, (ours, theirs)
