"""The cache of compiled BPF programs (lib/bpf/bpf_cache.c): a run whose
program, flags, kernel and libbcc match an earlier one's takes the image
from the cache instead of compiling; a damaged or foreign entry, or a cache
directory others can write, is never used, and the run still profiles
right. (What start-up costs is measured by bench/startup.py, not here.)"""
import os
import shutil
import signal
import stat
import subprocess

import pytest

import interpreters
from profiling import parse_folded, frame_name

SPIN = ("import sys\n"
        "def spin_for_cache_test():\n"
        "    x = 0\n"
        "    while True:\n"
        "        x += 1\n"
        "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "spin_for_cache_test()\n")
COMPILED = "(compiled)"
CACHED = "(compiled earlier, from the cache)"


@pytest.fixture(scope="module")
def spinner():
    p = subprocess.Popen([interpreters.HOST_PYTHON, "-c", SPIN], stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"ready\n"
    yield p.pid
    p.send_signal(signal.SIGKILL)
    p.wait()


def profile(pyprofile, pid, cache):
    """pyprofile -v -f -p PID 1 with the cache at CACHE; returns (stderr,
    samples of the spinning function)."""
    env = dict(os.environ, PYBPF_BPF_CACHE=str(cache))
    r = subprocess.run([pyprofile, "-v", "-f", "-F", "199", "-p", str(pid), "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       universal_newlines=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = parse_folded(r.stdout)
    spin = sum(c for frames, _, c in rows
               if any(frame_name(f) == "spin_for_cache_test" for f in frames))
    assert spin > 0, r.stdout + r.stderr  # the program works, whatever its origin
    return r.stderr, spin


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory, pyprofile, spinner):
    """A cache directory after one run (the compiler ran once)."""
    base = tmp_path_factory.mktemp("bpfcache")
    cache = base / "bpf"
    err, _ = profile(pyprofile, spinner, cache)
    assert COMPILED in err, err
    return cache


def copy_of(warm_cache, tmp_path):
    cache = tmp_path / "bpf"
    shutil.copytree(str(warm_cache), str(cache))
    return cache


def test_first_run_compiles_and_stores_second_run_reads(warm_cache, tmp_path, pyprofile,
                                                        spinner):
    entries = list(warm_cache.glob("*.img"))
    assert len(entries) == 1, entries
    assert stat.S_IMODE(os.stat(str(warm_cache)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(str(entries[0])).st_mode) == 0o600
    cache = copy_of(warm_cache, tmp_path)
    err, _ = profile(pyprofile, spinner, cache)
    assert CACHED in err, err
    assert sorted(p.name for p in cache.glob("*")) == [entries[0].name]


def test_damaged_entry_is_not_used(warm_cache, tmp_path, pyprofile, spinner):
    """A truncated image is refused with a note, and the run compiles."""
    cache = copy_of(warm_cache, tmp_path)
    entry = next(cache.glob("*.img"))
    data = entry.read_bytes()
    entry.write_bytes(data[:len(data) - 100])
    err, _ = profile(pyprofile, spinner, cache)
    assert COMPILED in err and "not used" in err, err
    # and the entry was written anew
    assert entry.read_bytes() == data


def test_entry_of_another_key_is_a_miss(warm_cache, tmp_path, pyprofile, spinner):
    """An entry whose stored key differs (a hash collision, another kernel)
    is not taken for this run's."""
    cache = copy_of(warm_cache, tmp_path)
    entry = next(cache.glob("*.img"))
    data = bytearray(entry.read_bytes())
    at = data.index(b"kernel: ") + len(b"kernel: ")
    data[at] ^= 1
    entry.write_bytes(bytes(data))
    err, _ = profile(pyprofile, spinner, cache)
    assert COMPILED in err, err


def test_directory_others_can_write_is_not_used(warm_cache, tmp_path, pyprofile, spinner):
    cache = copy_of(warm_cache, tmp_path)
    os.chmod(str(cache), 0o777)
    err, _ = profile(pyprofile, spinner, cache)
    assert COMPILED in err and "BPF cache not used" in err, err


def test_cache_off(tmp_path, pyprofile, spinner):
    err, _ = profile(pyprofile, spinner, "off")
    assert COMPILED in err and "PYBPF_BPF_CACHE=off" in err, err
