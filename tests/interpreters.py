"""The matrix of real CPython interpreters the integration tests run against.

Found at collection time:
  host-3.11              Debian's stripped /usr/bin/python3.11
  pyenv-X.Y.Z            /root/.pyenv/versions/X.Y.Z/bin/pythonX.Y, X.Y >= 3.8
                         (older ones are only used to check "unsupported")
  <chroot>-X.Y           every python listed in the .pybpf-ready stamp of
                         ${PYBPF_CACHE:-/var/cache/pybpf-tools}/chroots/<chroot>
  <chroot>-X.Y-pidns     the same, started in a new PID namespace (bullseye's
                         python, and sid's 3.14 or else its newest)

Interpreter.spawn() starts a script and gives back a PyProcess whose .pid is
the host pid of the Python process itself (for the PID-namespace variant that
is the child of the `unshare` process). Interpreter.place() copies a file to
where the process can see it and returns that path; Interpreter.scratch()
makes a directory both sides can see. Things that are missing come back as
Unavailable(id, reason), so the tests can be skipped visibly.
"""
import os
import re
import shutil
import signal
import subprocess
import time
import uuid

CACHE = os.environ.get("PYBPF_CACHE", "/var/cache/pybpf-tools")
CHROOT_BASE = os.path.join(CACHE, "chroots")
CHROOTS = ("bullseye", "sid")
STAMP = ".pybpf-ready"
PYENV_VERSIONS = os.path.join(os.environ.get("PYENV_ROOT", "/root/.pyenv"), "versions")
HOST_PYTHON = "/usr/bin/python3.11"
IN_CHROOT_DIR = "/opt/pybpf-tests"
VERSION_H = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "lib", "cpython", "version.h")


def supported_minors():
    """The CPython 3 minor versions the tools support, first to last: read
    from lib/cpython/version.h, the one place the range is written."""
    with open(VERSION_H, encoding="utf-8") as fp:
        text = fp.read()
    first, last = (int(re.search(r"#define PY_MINOR_%s_SUPPORTED (\d+)" % end, text).group(1))
                   for end in ("FIRST", "LAST"))
    return range(first, last + 1)


MIN_SUPPORTED = (3, supported_minors()[0])

# Works on Python 2.7 too: prints "X.Y.Z" and sys.executable.
_PROBE = "import sys; print('.'.join(map(str, sys.version_info[:3]))); print(sys.executable)"


def _version_tuple(text):
    return tuple(int(x) for x in text.split("."))


def _clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.setdefault("LANG", "C.UTF-8")
    return env


class Unavailable:
    """An interpreter the matrix expects but that is not there."""

    def __init__(self, id, reason):
        self.id = id
        self.reason = reason

    def __repr__(self):
        return "Unavailable(%s: %s)" % (self.id, self.reason)


class PyProcess:
    """A running interpreter started by Interpreter.spawn()."""

    def __init__(self, interp, popen):
        self.interp = interp
        self.popen = popen
        self._pid = None if interp.pidns else popen.pid

    @property
    def pid(self):
        """Host pid of the Python process (waits for unshare's child)."""
        if self._pid is None:
            path = "/proc/%d/task/%d/children" % (self.popen.pid, self.popen.pid)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    with open(path) as fp:
                        kids = fp.read().split()
                except OSError:
                    kids = []
                if kids:
                    self._pid = int(kids[0])
                    break
                if self.popen.poll() is not None:
                    raise RuntimeError("unshare exited with %s" % self.popen.returncode)
                time.sleep(0.02)
            else:
                raise RuntimeError("no child of unshare pid %d" % self.popen.pid)
        return self._pid

    def alive(self):
        return self.popen.poll() is None

    def kill(self):
        """SIGKILL (pid 1 of a namespace ignores SIGTERM) and reap."""
        if self._pid is not None and self._pid != self.popen.pid:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.popen.poll() is None:
            try:
                self.popen.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


class Scratch:
    """A directory visible to the host (.host) and to the process (.proc)."""

    def __init__(self, host, proc, owned):
        self.host = host
        self.proc = proc
        self._owned = owned

    def host_path(self, name):
        return os.path.join(self.host, name)

    def proc_path(self, name):
        return os.path.join(self.proc, name)

    def cleanup(self):
        if self._owned:
            shutil.rmtree(self.host, ignore_errors=True)


class Interpreter:
    def __init__(self, id, kind, exe, root=None, pidns=False):
        self.id = id
        self.kind = kind            # "host", "pyenv" or "chroot"
        self.exe = exe              # path as the process sees it
        self.root = root            # chroot directory, or None
        self.pidns = pidns
        self.version = None         # (X, Y, Z), from probe()
        self.executable = None      # sys.executable, as the process sees it

    def __repr__(self):
        return "Interpreter(%s)" % self.id

    @property
    def argv(self):
        """Command prefix that starts this interpreter."""
        if self.root is None:
            return [self.exe]
        if self.pidns:
            return ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child",
                    "chroot", self.root, self.exe]
        return ["chroot", self.root, self.exe]

    def probe(self):
        """Asks the interpreter for its version; raises on failure."""
        out = subprocess.run(self.argv + ["-c", _PROBE], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, timeout=60, env=_clean_env(),
                             check=True, universal_newlines=True)
        lines = out.stdout.split("\n")
        self.version = _version_tuple(lines[0].strip())
        self.executable = lines[1].strip()
        return self

    def host_path(self, path):
        """Where a path the process sees is, from the host."""
        if self.root is None:
            return path
        return os.path.join(self.root, path.lstrip("/"))

    def place(self, src):
        """Makes file src visible to the process; returns its path there."""
        if self.root is None:
            return os.path.abspath(src)
        # each xdist worker a directory of its own: two test files may
        # place different files under one name
        inside = os.path.join(IN_CHROOT_DIR, os.environ.get("PYTEST_XDIST_WORKER", ""))
        dest_dir = self.host_path(inside)
        os.makedirs(dest_dir, exist_ok=True)
        dest = os.path.join(dest_dir, os.path.basename(src))
        # a name of its own per call: tests place files from several threads
        tmp = "%s.tmp.%s" % (dest, uuid.uuid4().hex)
        shutil.copyfile(src, tmp)
        os.rename(tmp, dest)
        return os.path.join(inside, os.path.basename(src))

    def scratch(self, host_tmp):
        """A directory for output files: host_tmp itself, or one under the
        chroot's /tmp (removed by cleanup())."""
        if self.root is None:
            return Scratch(str(host_tmp), str(host_tmp), owned=False)
        proc = "/tmp/pybpf-tests-%s" % uuid.uuid4().hex[:12]
        host = self.host_path(proc)
        os.makedirs(host)
        return Scratch(host, proc, owned=True)

    def spawn(self, args, stdout=subprocess.DEVNULL, stderr=None, **kw):
        """Starts the interpreter with args; returns a PyProcess."""
        popen = subprocess.Popen(self.argv + list(args), stdin=subprocess.DEVNULL,
                                 stdout=stdout, stderr=stderr, env=_clean_env(), **kw)
        return PyProcess(self, popen)


def _stamp_pythons(root):
    """Python binaries listed in a chroot's stamp: [(path, (X, Y))]."""
    found = []
    with open(os.path.join(root, STAMP)) as fp:
        for line in fp:
            m = re.match(r"^(/\S*/python(\d+)\.(\d+))$", line.strip())
            if m:
                found.append((m.group(1), (int(m.group(2)), int(m.group(3)))))
    return sorted(set(found), key=lambda x: x[1])


def _discover():
    matrix, old = [], []

    def add(interp, into):
        try:
            into.append(interp.probe())
        except Exception as e:  # noqa: BLE001 - the reason goes into the report
            into.append(Unavailable(interp.id, "probe failed: %s" % (e,)))

    # host
    if os.access(HOST_PYTHON, os.X_OK):
        add(Interpreter("host-3.11", "host", HOST_PYTHON), matrix)
    else:
        matrix.append(Unavailable("host-3.11", "%s not found" % HOST_PYTHON))

    # pyenv
    versions = []
    if os.path.isdir(PYENV_VERSIONS):
        for name in os.listdir(PYENV_VERSIONS):
            if re.match(r"^\d+\.\d+\.\d+$", name):
                versions.append(_version_tuple(name))
    if not versions:
        matrix.append(Unavailable("pyenv", "no pyenv builds in %s" % PYENV_VERSIONS))
        old.append(Unavailable("pyenv-old", "no pyenv builds in %s" % PYENV_VERSIONS))
    for v in sorted(versions):
        name = "%d.%d.%d" % v
        exe = os.path.join(PYENV_VERSIONS, name, "bin", "python%d.%d" % v[:2])
        interp = Interpreter("pyenv-" + name, "pyenv", exe)
        into = matrix if v[:2] >= MIN_SUPPORTED else old
        if os.access(exe, os.X_OK):
            add(interp, into)
        else:
            into.append(Unavailable(interp.id, "%s not found" % exe))
    if versions and not [v for v in versions if v[:2] < MIN_SUPPORTED]:
        old.append(Unavailable("pyenv-old", "no pyenv build older than 3.8"))

    # chroots
    have_unshare = shutil.which("unshare") is not None
    for chroot in CHROOTS:
        root = os.path.join(CHROOT_BASE, chroot)
        if not os.path.exists(os.path.join(root, STAMP)):
            why = "chroot %s not ready (no %s stamp)" % (root, STAMP)
            matrix.append(Unavailable(chroot, why))
            matrix.append(Unavailable(chroot + "-pidns", why))
            continue
        pythons = [(p, v) for p, v in _stamp_pythons(root)
                   if os.path.exists(os.path.join(root, p.lstrip("/")))]
        if not pythons:
            why = "chroot %s: stamp lists no existing python" % root
            matrix.append(Unavailable(chroot, why))
            matrix.append(Unavailable(chroot + "-pidns", why))
            continue
        for exe, v in pythons:
            add(Interpreter("%s-%d.%d" % (chroot, v[0], v[1]), "chroot", exe, root), matrix)
        pick = [p for p in pythons if p[1] == (3, 14)] or pythons[-1:]
        exe, v = pick[0]
        pid_id = "%s-%d.%d-pidns" % (chroot, v[0], v[1])
        if have_unshare:
            add(Interpreter(pid_id, "chroot", exe, root, pidns=True), matrix)
        else:
            matrix.append(Unavailable(pid_id, "unshare(1) not found"))
    return matrix, old


_cache = None


def discover():
    """([Interpreter|Unavailable] for the matrix, [...] for pythons < 3.8)."""
    global _cache
    if _cache is None:
        _cache = _discover()
    return _cache


def summary_lines():
    matrix, old = discover()
    ran = ["%s (%s)" % (i.id, ".".join(map(str, i.version)))
           for i in matrix if isinstance(i, Interpreter)]
    lines = ["pybpf interpreters: " + (", ".join(ran) or "NONE")]
    olds = ["%s (%s)" % (i.id, ".".join(map(str, i.version)))
            for i in old if isinstance(i, Interpreter)]
    lines.append("pybpf unsupported-version pythons: " + (", ".join(olds) or "none"))
    for i in matrix + old:
        if isinstance(i, Unavailable):
            lines.append("pybpf SKIPPED %s: %s" % (i.id, i.reason))
    return lines
