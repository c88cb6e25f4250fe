"""A target's files are data, never paths to follow on the host (issue 24,
items 1-3).

A process in a chroot (or a chroot in PID and mount namespaces) loads a
library the test builds at run time (workloads/hostile_lib.c): stripped of
.symtab, with a .gnu_debuglink or a build-id whose debug file its root
holds as the owner of a hostile container would make it: a FIFO, a
symlink to an absolute path that exists only on the host (a host FIFO, or
a host ELF whose .symtab names the library's static function
HOST_SECRET_inner). The host, at the same paths, has the same FIFO or ELF.
The tools must end in bounded time (they used to block on the FIFO for
ever), print nothing of the host's files, and name the frames right (the
exported hostile_call from .dynsym, the static function by the debug file
inside the root) or mark them (libhostile.so+0x...). A core's NT_FILE path
that became a symlink out of --root must not be followed either.

Ground truth: what the library holds and where each file is, as built
here. Processes in our own root (host, pyenv) have no other root to escape
from: they run the FIFO and own-debug cases (a FIFO in their own root must
not block either). Run with:

    /usr/bin/python3 -m pytest -v tests/test_hostile_files.py
"""
import json
import os
import re
import resource
import shutil
import subprocess
import tempfile
import uuid

import pytest

from conftest import WORKLOADS, tool_path
from profiling import parse_folded, read_json

SOURCE = os.path.join(WORKLOADS, "hostile_lib.c")
WORKLOAD = os.path.join(WORKLOADS, "hostile_lib.py")
SECRET = "HOST_SECRET_inner"
LIB = "libhostile.so"
LINK = "libhostile.debug"
# a tool run takes seconds (a minute or more on a loaded machine); one
# blocked on a FIFO never ends
BOUND = 120
UNNAMED = re.compile(r"libhostile\.so\+0x[0-9a-f]+")


def gcc_build(out, inner, build_id):
    gcc = shutil.which("gcc")
    if not gcc or not shutil.which("objcopy"):
        pytest.skip("gcc or objcopy not installed")
    subprocess.run([gcc, "-shared", "-fPIC", "-O2", "-g", "-nostdlib", "-fno-stack-protector",
                    "-DINNER=" + inner, "-Wl,--build-id=" + build_id, "-o", out, SOURCE],
                   check=True)


class Libs:
    """The library, stripped, with its debug file; and the host's ELF of the
    same code and build-id whose .symtab names the static function SECRET."""

    def __init__(self, tmp, build_id):
        self.dir = tmp
        full = os.path.join(tmp, "full.so")
        gcc_build(full, "hostile_inner", build_id)
        self.debug = os.path.join(tmp, LINK)
        subprocess.run(["objcopy", "--only-keep-debug", full, self.debug], check=True)
        self.lib = os.path.join(tmp, LIB)
        subprocess.run(["objcopy", "--strip-all", "--add-gnu-debuglink=" + self.debug, full,
                        self.lib], check=True)
        self.evil = os.path.join(tmp, "host-evil.debug")
        gcc_build(self.evil, SECRET, build_id)
        self.fifo = os.path.join(tmp, "host.fifo")
        os.mkfifo(self.fifo)
        self.build_id = build_id[2:] if build_id.startswith("0x") else build_id


@pytest.fixture(scope="module")
def debuglinked(tmp_path_factory):
    """Found by .gnu_debuglink only: no build-id."""
    return Libs(str(tmp_path_factory.mktemp("debuglink")), "none")


@pytest.fixture(scope="module")
def build_ided(tmp_path_factory):
    """Found by build-id (a new one per run: paths of its own)."""
    return Libs(str(tmp_path_factory.mktemp("buildid")), "0x" + uuid.uuid4().hex + "aa55aa55")


def in_own_root(interp):
    return interp.root is None


class Target:
    """The workload running the library from a scratch directory of its
    root, and what was put in its root and on the host for it."""

    def __init__(self, interp, libs, tmp, mode):
        self.interp = interp
        self.scratch = interp.scratch(tempfile.mkdtemp(dir=tmp))
        self.cleanups = [self.scratch.cleanup]
        self.lib = self.scratch.proc_path(LIB)
        shutil.copyfile(libs.lib, self.scratch.host_path(LIB))
        self.mode = mode
        self.proc = None

    def host_file(self, path_in_root, make):
        """The host's own file at the path the process names (for a chroot
        a path of the host outside it; removed at the end)."""
        if in_own_root(self.interp):
            return
        if os.path.lexists(path_in_root):
            pytest.fail("%s exists on the host already" % path_in_root)
        made = []
        d = os.path.dirname(path_in_root)
        while not os.path.exists(d):
            made.append(d)
            d = os.path.dirname(d)
        os.makedirs(os.path.dirname(path_in_root), exist_ok=True)

        def undo():
            os.unlink(path_in_root)
            for d in made:  # deepest first
                os.rmdir(d)
        self.cleanups.append(undo)
        make(path_in_root)

    def root_file(self, path_in_root, make):
        """A file in the process's root (removed at the end)."""
        host = self.interp.host_path(path_in_root)
        os.makedirs(os.path.dirname(host), exist_ok=True)
        if os.path.lexists(host):
            os.unlink(host)
        make(host)
        self.cleanups.append(lambda: os.path.lexists(host) and os.unlink(host))

    def start(self, seconds=300, kw=None):
        script = self.interp.place(WORKLOAD)
        self.proc = self.interp.spawn([script, self.scratch.proc, self.lib, self.mode,
                                       str(seconds)], **(kw or {}))
        read_json(self.scratch.host_path("state.json"), key="ready", timeout=60)
        # (the host pid of a process in a PID namespace is asked of unshare:
        # one that is to crash may be gone by then)
        return self.proc.pid if self.mode != "crash" else None

    def close(self):
        if self.proc:
            self.proc.kill()
        for undo in reversed(self.cleanups):
            try:
                undo()
            except OSError:
                pass


def run_bounded(argv):
    """The tool's (returncode, stdout, stderr); it must end within BOUND s."""
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=BOUND,
                           universal_newlines=True, errors="replace")
    except subprocess.TimeoutExpired:
        pytest.fail("%s still running after %d s (blocked on a target's file?)" % (
            os.path.basename(argv[0]), BOUND))
    return r.returncode, r.stdout, r.stderr


def no_host_data(*texts):
    for t in texts:
        assert SECRET not in t, t[-3000:]


# -------------------------------------------------- item 1: .gnu_debuglink

def debuglink_case(t, libs, case):
    """What .gnu_debuglink names (LINK beside the library), in the root and
    on the host: 'fifo', 'host-elf' or 'own-debug'."""
    in_root = os.path.join(t.scratch.proc, LINK)
    if case == "fifo":
        if in_own_root(t.interp):
            t.root_file(in_root, os.mkfifo)
        else:  # a symlink out of the root to a host FIFO
            t.root_file(in_root, lambda p: os.symlink(libs.fifo, p))
        t.host_file(in_root, os.mkfifo)
    elif case == "host-elf":
        if in_own_root(t.interp):
            pytest.skip("the process's root is ours: no host file to escape to")
        t.root_file(in_root, lambda p: os.symlink(libs.evil, p))
        t.host_file(in_root, lambda p: shutil.copyfile(libs.evil, p))
    else:
        t.root_file(in_root, lambda p: shutil.copyfile(libs.debug, p))
        t.host_file(in_root, lambda p: shutil.copyfile(libs.evil, p))


def frames_of(rows, name):
    return sum(c for fr, _, c in rows if any(name in f for f in fr))


@pytest.mark.parametrize("case", ["fifo", "host-elf", "own-debug"])
def test_pyprofile_debuglink(interp, debuglinked, tmp_path, case):
    """pyprofile names the library's functions from .dynsym and from the
    debug file inside the root only; it no longer blocks on a FIFO or reads
    the host's file at the same path. (2 s at 299 Hz: the samples of 3 s at
    199 Hz.)"""
    t = Target(interp, debuglinked, str(tmp_path), "spin")
    try:
        debuglink_case(t, debuglinked, case)
        pid = t.start()
        rc, out, err = run_bounded([tool_path("pyprofile"), "-f", "-F", "299", "-p", str(pid),
                                    "2"])
    finally:
        t.close()
    assert rc == 0, err
    no_host_data(out, err)
    rows = parse_folded(out)
    assert frames_of(rows, "hostile_call") > 0, out[-2000:] + err
    if case == "own-debug":
        assert frames_of(rows, "hostile_inner") > 0, out[-2000:]
    else:
        # the static function: unnamed, marked as the file and its start
        assert sum(c for fr, _, c in rows if any(UNNAMED.fullmatch(f) for f in fr)) > 0, \
            out[-2000:]
        assert frames_of(rows, "hostile_inner") == 0, out[-2000:]


@pytest.mark.parametrize("tool", ["pyoffcpu", "pygil"])
def test_other_tools_debuglink_fifo(interp, debuglinked, tmp_path, tool):
    """pyoffcpu and pygil read the same names the same way: a FIFO where the
    debug link points, in the root or out of it, does not stall them."""
    t = Target(interp, debuglinked, str(tmp_path), "sleep" if tool == "pyoffcpu" else "spin")
    try:
        debuglink_case(t, debuglinked, "fifo")
        pid = t.start()
        rc, out, err = run_bounded([tool_path(tool), "-f", "-p", str(pid), "3"])
    finally:
        t.close()
    assert rc == 0, err
    no_host_data(out, err)
    if tool == "pyoffcpu":
        assert frames_of(parse_folded(out), "hostile_call") > 0, out[-2000:] + err


# ------------------------------------------- item 2: build-id, pydump -n

def build_id_path(libs):
    return "/usr/lib/debug/.build-id/%s/%s.debug" % (libs.build_id[:2], libs.build_id[2:])


def main_native(doc):
    proc = doc["processes"][0]
    main = [th for th in proc["threads"] if th["main"]]
    assert main, proc["threads"]
    return [f for f in main[0]["frames"] if f["kind"] == "native"]


@pytest.mark.parametrize("case", ["fifo", "host-elf", "own-debug"])
def test_pydump_native_build_id(interp, build_ided, pydump, tmp_path, case):
    """pydump -n looks a stripped library's debug file up by build-id inside
    the process's root, without following its absolute symlinks out to the
    host, and takes only a debug file of the same build-id."""
    if in_own_root(interp):
        pytest.skip("the process's root is ours: its /usr/lib/debug is the host's")
    t = Target(interp, build_ided, str(tmp_path), "sleep")
    try:
        where = build_id_path(build_ided)
        if case == "fifo":
            t.root_file(where, lambda p: os.symlink(build_ided.fifo, p))
        elif case == "host-elf":
            t.root_file(where, lambda p: os.symlink(build_ided.evil, p))
        else:
            t.root_file(where, lambda p: shutil.copyfile(build_ided.debug, p))
        t.host_file(where, lambda p: shutil.copyfile(build_ided.evil, p))
        pid = t.start()
        rc, out, err = run_bounded([pydump, "-j", "-n", "-p", str(pid)])
    finally:
        t.close()
    assert rc == 0, err
    no_host_data(out, err)
    frames = main_native(json.loads(out))
    ours = [f for f in frames if f["module"] and f["module"].endswith("/" + LIB)]
    assert ours, frames[:6]
    names = [f["name"] for f in ours]
    assert "hostile_call" in names, ours
    if case == "own-debug":
        assert "hostile_inner" in names, ours
    else:
        assert None in names and "hostile_inner" not in names, ours


# ------------------------------------------ item 3: pydump --core --root

def raise_core_limit():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def test_core_nt_file_symlink_out_of_root(interp, build_ided, pydump, tmp_path):
    """A core's NT_FILE paths are opened inside --root: the library, made an
    absolute symlink to a host ELF after the crash, is not followed out of
    the root (the host file's names and bytes would be served as the
    process's); its frames stay unnamed, the rest of the dump as it was."""
    from test_pydump_core import kernel_writes_core_file
    if in_own_root(interp):
        pytest.skip("a process in our root: --root is ours, nothing to escape")
    if not kernel_writes_core_file():
        pytest.skip("core_pattern does not write a core file beside the process")
    t = Target(interp, build_ided, str(tmp_path), "crash")
    try:
        t.start(kw={"preexec_fn": raise_core_limit, "cwd": str(tmp_path)})
        t.proc.popen.wait(timeout=60)
        core = t.scratch.host_path("core")
        cores = [n for n in os.listdir(t.scratch.host) if n.startswith("core")]
        assert len(cores) == 1, os.listdir(t.scratch.host)
        core = t.scratch.host_path(cores[0])
        argv = [pydump, "-j", "-n", "--core", core, "--root", interp.root]
        rc, before, err = run_bounded(argv)
        assert rc == 0, err
        # now the library's path is a symlink to the host's ELF
        lib = t.scratch.host_path(LIB)
        os.unlink(lib)
        os.symlink(build_ided.evil, lib)
        rc, out, err = run_bounded(argv)
    finally:
        t.close()
    assert rc == 0, err
    no_host_data(out, err)
    # the ground truth: the library's own frames, named from .dynsym
    named = [f["name"] for f in main_native(json.loads(before)) if LIB in (f["module"] or "")]
    assert "hostile_call" in named, named
    frames = main_native(json.loads(out))
    ours = [f for f in frames if LIB in (f["module"] or "")]
    assert ours and all(f["name"] is None for f in ours), frames[:6]
