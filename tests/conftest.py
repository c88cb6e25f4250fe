"""Fixtures for the integration tests: the interpreter matrix and the tools.

`interp`     every interpreter of the matrix (tests/interpreters.py); missing
             ones are skipped with the reason, never dropped silently.
`old_interp` pyenv pythons older than 3.8 (for "unsupported" errors).
`pydump`     path of the built pydump ($PYBPF_BUILD or <repo>/build).
"""
import os

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
