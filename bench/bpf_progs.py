"""The BPF programs a process holds and the kernel's accounting of them, for
the benchmarks (a helper module, not a script): /proc/PID/fdinfo of each
program fd, and bpf_prog_info for what fdinfo does not say. run_time_ns and
run_cnt count only while the kernel's accounting is on (bpf_stats()
below, or sysctl kernel.bpf_stats_enabled=1).

fdinfo is "key:\\tvalue" lines; a key is matched at the start of its line
only (a prog array map's fdinfo says "owner_prog_type:", which a plain
search for "prog_type:" mistakes for a program).
"""
import collections
import contextlib
import ctypes
import os

STATS = "/proc/sys/kernel/bpf_stats_enabled"
TRACEPOINT, PERF_EVENT, RAW_TRACEPOINT = 5, 7, 17  # enum bpf_prog_type

Prog = collections.namedtuple("Prog", "fd prog_type run_time_ns run_cnt prog_id")


def fdinfo_fields(text):
    """{key: value} of fdinfo text: one "key:<blanks>value" per line."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key and " " not in key:
            out[key] = value.strip()
    return out


def prog_fds(pid):
    """[Prog] of the BPF program fds process pid holds, by fd; [] if it is gone."""
    d = "/proc/%d/fdinfo" % pid
    try:
        names = sorted(os.listdir(d), key=int)
    except OSError:
        return []
    out = []
    for fd in names:
        try:
            with open(os.path.join(d, fd)) as f:
                fields = fdinfo_fields(f.read())
        except OSError:
            continue  # closed meanwhile
        if "prog_type" not in fields:
            continue
        out.append(Prog(int(fd), int(fields["prog_type"]), int(fields.get("run_time_ns", 0)),
                        int(fields.get("run_cnt", 0)), int(fields.get("prog_id", 0))))
    return out


SYS_BPF = 321  # x86_64
BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD, BPF_ENABLE_STATS = 13, 15, 32


def stats_enabled():
    with open(STATS) as f:
        return f.read().strip() == "1"


@contextlib.contextmanager
def bpf_stats():
    """with bpf_stats(): the kernel counts BPF run time inside. Through
    BPF_ENABLE_STATS, whose fd keeps it on until closed, and not the
    sysctl: other users of the accounting (another benchmark, the
    sysctl) are left as they are."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 1)(0)  # BPF_STATS_RUN_TIME
    fd = libc.syscall(SYS_BPF, BPF_ENABLE_STATS, attr, ctypes.sizeof(attr))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "BPF_ENABLE_STATS")
    try:
        yield
    finally:
        os.close(fd)


INFO_NAME, INFO_VERIFIED_INSNS = 64, 216  # offsets in struct bpf_prog_info


def prog_info(prog_id):
    """(name, verified_insns) of BPF program prog_id, or None."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 3)(prog_id, 0, 0)
    pfd = libc.syscall(SYS_BPF, BPF_PROG_GET_FD_BY_ID, attr, ctypes.sizeof(attr))
    if pfd < 0:
        return None
    buf = ctypes.create_string_buffer(256)
    info = (ctypes.c_uint64 * 2)(pfd | (256 << 32), ctypes.addressof(buf))
    ok = libc.syscall(SYS_BPF, BPF_OBJ_GET_INFO_BY_FD, info, ctypes.sizeof(info)) == 0
    os.close(pfd)
    if not ok:
        return None
    return (buf.raw[INFO_NAME:INFO_NAME + 16].rstrip(b"\0").decode(errors="replace"),
            int.from_bytes(buf.raw[INFO_VERIFIED_INSNS:INFO_VERIFIED_INSNS + 4], "little"))


def verified_insns(pid, name="on_sample"):
    """verified_insns of the program called name that process pid holds, or None."""
    for p in prog_fds(pid):
        info = prog_info(p.prog_id)
        if info and info[0] == name:
            return info[1]
    return None
