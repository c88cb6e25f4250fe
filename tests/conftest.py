"""Fixtures for the integration tests: the interpreter matrix and the tools.

`interp`     every interpreter of the matrix (tests/interpreters.py); missing
             ones are skipped with the reason, never dropped silently.
`old_interp` pyenv pythons older than 3.8 (for "unsupported" errors).
`pydump`     path of the built pydump ($PYBPF_BUILD or <repo>/build).

The full tier runs in two passes (setup.sh test): every test not marked
`serial` on two pytest-xdist workers, one test file per worker at a time
(a file's module-scoped workloads stay on one worker), then the `serial`
tests alone. A test is `serial` when it runs a BPF tool over every Python
process of the machine (it would see, and slow, the other worker's
workloads) or measures cost; under xdist, a tool started that way by a test
not so marked fails the test (_host_wide_guard below), so a missing mark
shows on every machine, not only where the two passes happen to collide.
"""
import os
import subprocess

import pytest

import interpreters

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build"))
WORKLOADS = os.path.join(REPO, "tests", "workloads")


def tool_path(name):
    return os.path.join(BUILD, "tools", name)


def pytest_report_header(config):
    lines = interpreters.summary_lines()
    lines.append("pybpf build dir: %s (pydump %s)" % (
        BUILD, "present" if os.access(tool_path("pydump"), os.X_OK) else "MISSING"))
    return lines


def _params(entries):
    params = []
    for e in entries:
        if isinstance(e, interpreters.Unavailable):
            params.append(pytest.param(e, id=e.id, marks=pytest.mark.skip(reason=e.reason)))
        else:
            params.append(pytest.param(e, id=e.id))
    return params


BPF_TOOLS = ("pyprofile", "pyoffcpu", "pygil", "pymem")
# options that name the processes a BPF tool looks at, or end it before it
# looks at any
_TARGETED = ("-p", "--pid", "-t", "--tid", "--", "-h", "--help", "--version")
# files whose tests take longest, first: xdist hands out whole files in
# collection order, so the last file to start is a short one
_LONGEST_FIRST = ("test_native.py", "test_labs.py", "test_pyprofile.py", "test_hostile_elf.py",
                  "test_pygil.py", "test_walker.py", "test_hostile_files.py",
                  "test_asyncio.py", "test_views.py", "test_hostile_text.py")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "serial: runs a BPF tool over every Python process, or measures cost; "
        "run alone, after the parallel pass (setup.sh test)")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _host_wide_guard()


def pytest_collection_modifyitems(session, config, items):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: i for i, name in enumerate(_LONGEST_FIRST)}
    # stable: within a file, the order stays the file's own
    items.sort(key=lambda it: rank.get(os.path.basename(str(it.fspath)), len(rank)))


_file_seconds = {}


def pytest_runtest_logreport(report):
    # on xdist's controller too: the workers send it their reports
    name = report.nodeid.split("::", 1)[0]
    _file_seconds[name] = _file_seconds.get(name, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """The time each test file took (setup, call and teardown of all its
    tests, summed over the workers), longest first: where a faster suite
    has to look, and what _LONGEST_FIRST should list."""
    if not _file_seconds:
        return
    terminalreporter.write_sep("=", "seconds per test file (all workers)")
    longest = sorted(_file_seconds.items(), key=lambda kv: -kv[1])
    for name, seconds in longest[:20]:
        terminalreporter.write_line("%8.1f  %s" % (seconds, name))
    terminalreporter.write_line("%8.1f  in all, %d files" % (sum(_file_seconds.values()),
                                                            len(_file_seconds)))


def host_wide_tool(args):
    """The BPF tool args would run over every Python process, or None. The
    tool may come after a wrapper (setpriv ..., python -c MEASURE ...), or
    inside a shell's command line (sh -c "... pyprofile 1")."""
    if isinstance(args, (str, bytes)):
        args = [args]
    args = [a.decode() if isinstance(a, bytes) else str(a) for a in args]
    for i, arg in enumerate(args):
        name = os.path.basename(arg)
        if name in BPF_TOOLS:
            rest = args[i + 1:]
            if any(a in _TARGETED or a.startswith(("--pid=", "--tid=")) or
                   (a[:2] in ("-p", "-t") and a[2:].isdigit()) for a in rest):
                return None
            return name
        if " " in arg:
            for tool in BPF_TOOLS:
                if tool_path(tool) + " " in arg and " -p " not in arg and " --pid " not in arg:
                    return tool
    return None


_current = {"item": None}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current["item"] = item  # (module-scoped fixtures start in its setup)
    yield
    _current["item"] = None


def _host_wide_guard():
    """Under xdist, a test that starts a BPF tool over every process must be
    marked serial (see the module's docstring): Popen refuses it."""
    real_init = subprocess.Popen.__init__

    def guarded_init(self, args, *a, **kw):
        item = _current["item"]
        tool = host_wide_tool(args)
        if tool and item is not None and not item.get_closest_marker("serial"):
            raise AssertionError("%s runs %s over every Python process: mark it "
                                 "@pytest.mark.serial (tests/conftest.py)" % (item.nodeid, tool))
        real_init(self, args, *a, **kw)

    subprocess.Popen.__init__ = guarded_init


def pytest_generate_tests(metafunc):
    matrix, old = interpreters.discover()
    if "interp" in metafunc.fixturenames:
        # module scope: one workload per interpreter serves several tests
        metafunc.parametrize("interp", _params(matrix), scope="module")
    if "old_interp" in metafunc.fixturenames:
        metafunc.parametrize("old_interp", _params(old))


@pytest.fixture(scope="session")
def pydump():
    path = tool_path("pydump")
    if not os.access(path, os.X_OK):
        pytest.fail("%s not built (set PYBPF_BUILD or build with meson first)" % path)
    return path


def _built(name):
    path = tool_path(name)
    if not os.access(path, os.X_OK):
        pytest.fail("%s not built" % path)
    return path


@pytest.fixture(scope="session")
def pymem():
    return _built("pymem")


@pytest.fixture(scope="session")
def pyprofile():
    return _built("pyprofile")


@pytest.fixture(scope="session")
def pyoffcpu():
    return _built("pyoffcpu")


@pytest.fixture(scope="session")
def pygil():
    return _built("pygil")


@pytest.fixture(scope="session")
def workloads():
    return WORKLOADS
