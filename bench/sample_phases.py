#!/usr/bin/env python3
"""Where a sample's BPF time goes, measured on this machine (a benchmark, not a test).

Two parts, in one run:
  - this machine's floor: what an empty BPF sampling program costs per run,
    and what each of the operations a walk is made of costs (an 8-byte read
    of user memory, a 4 KiB one, a hash look-up, a tail call), each in a
    program of its own attached like pyprofile's (cpu-clock, every CPU);
    figures of one machine can only be compared with another's through these;
  - pyprofile itself, compiled with clocks around its parts (PYBPF_PHASES=1,
    which pyprofile -v then prints): on deep_native.py (30 Python frames,
    ~20 native), at 999 Hz, with native stacks and with --no-native,
    alternated; the medians of each figure per Python sample.

The clocks cost some 20 ns each: the parts add up to more than the
program costs without them (bench/native_cost.py measures that).

Usage: sudo bench/sample_phases.py [--python /usr/bin/python3.11] [--seconds 4]
       [--rounds 3]
"""
import argparse
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD = os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build"))
PYPROFILE = os.path.join(BUILD, "tools", "pyprofile")
WORKLOAD = os.path.join(HERE, "deep_native.py")
sys.path.insert(0, HERE)
import smoke  # noqa: E402
from bpf_progs import bpf_stats, fdinfo_fields  # noqa: E402

PHASES = re.compile(r"BPF time per Python sample \(([\d.]+) of them, clocks on\): (.*)")
# the figures of the phases line, by name, in the order printed
FIGURES = [
    ("thread state ns", r"thread state (\d+) ns"),
    ("Python walk ns", r"Python walk (\d+) ns"),
    ("Python frames", r"\(([\d.]+) frames, [\d.]+ frame reads"),
    ("frame reads", r"([\d.]+) frame reads"),
    ("ns per frame read", r"frame reads of (\d+) ns"),
    ("code windows", r"([\d.]+) code windows"),
    ("identities read", r"([\d.]+) identities read"),
    ("ns per identity", r"identities read of (\d+) ns"),
    ("of them, a read failed", r"([\d.]+) with a read that failed"),
    ("Python store ns", r"with a read that failed; (\d+) ns storing"),
    ("new Python stacks", r"([\d.]+) new stacks\); native|([\d.]+) new stacks\); the rest"),
    ("native walk ns", r"native walk (\d+) ns"),
    ("native frames", r"native walk \d+ ns \(([\d.]+) frames"),
    ("stack reads", r"([\d.]+) stack reads"),
    ("ns per stack read", r"stack reads of (\d+) ns"),
    ("row searches", r"([\d.]+) row searches"),
    ("trie look-ups", r"([\d.]+) trie look-ups"),
    ("native store ns", r"trie look-ups; (\d+) ns storing"),
    ("new native stacks", r"trie look-ups; \d+ ns storing, ([\d.]+) new stacks"),
    ("rest ns", r"the rest (\d+) ns"),
]

FLOOR_PROGRAMS = r"""
#include <uapi/linux/bpf_perf_event.h>
struct floor_page { u64 w[512]; };
BPF_PERCPU_ARRAY(buf, struct floor_page, 1);
BPF_HASH(hash, u64, u64, 1024);
BPF_PROG_ARRAY(tail, 1);

int empty(struct bpf_perf_event_data *ctx) { return 0; }

int read8_x16(struct bpf_perf_event_data *ctx)
{
    u64 sp = ctx->regs.sp, v = 0;

    if ((ctx->regs.cs & 3) != 3)
        return 0;
#pragma unroll
    for (int i = 0; i < 16; i++)
        bpf_probe_read_user(&v, 8, (void *)(sp + i * 8));
    return 0;
}

int read4k(struct bpf_perf_event_data *ctx)
{
    u32 zero = 0;
    struct floor_page *b = buf.lookup(&zero);

    if (!b || (ctx->regs.cs & 3) != 3)
        return 0;
    bpf_probe_read_user(b, 4096, (void *)(ctx->regs.sp & ~4095ULL));
    return 0;
}

int hash_x16(struct bpf_perf_event_data *ctx)
{
    u64 k, n = 0;

#pragma unroll
    for (int i = 0; i < 16; i++) {
        k = i;
        if (hash.lookup(&k))
            n++;
    }
    return n;
}

int tailee(struct bpf_perf_event_data *ctx)
{
    u32 zero = 0;
    struct floor_page *b = buf.lookup(&zero);

    if (b && ++b->w[0] % 16)
        tail.call(ctx, 0);
    return 0;
}

int tail_x16(struct bpf_perf_event_data *ctx)
{
    u32 zero = 0;
    struct floor_page *b = buf.lookup(&zero);

    if (!b)
        return 0;
    b->w[0] = 0;
    tail.call(ctx, 0);
    return 0;
}
"""
# program -> (operations per run, what one is)
FLOOR_OPS = {
    "empty": (0, "an empty sampling program, per run"),
    "read8_x16": (16, "an 8-byte read of user memory"),
    "read4k": (1, "a 4 KiB read of user memory (one page)"),
    "hash_x16": (16, "a hash-map look-up"),
    "tail_x16": (16, "a tail call"),
}


def run_ns(fd):
    """The kernel's accounting of program fd: (run_time_ns, run_cnt)."""
    with open("/proc/self/fdinfo/%d" % fd) as f:
        kv = fdinfo_fields(f.read())
    return int(kv.get("run_time_ns", 0)), int(kv.get("run_cnt", 0))


def machine_floor(seconds, rounds):
    """{program: ns per run} (medians), each program sampling at 999 Hz on
    every CPU while a Python loop keeps each CPU busy in user mode; or a
    string saying why not."""
    try:
        from bcc import BPF, PerfType, PerfSWConfig
    except ImportError as e:
        return "no bcc Python module (python3-bpfcc): %s" % e
    b = BPF(text=FLOOR_PROGRAMS)
    b["tail"][ctypes.c_int(0)] = ctypes.c_int(b.load_func("tailee", BPF.PERF_EVENT).fd)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(os.cpu_count() or 1)]
    got = {name: [] for name in FLOOR_OPS}
    try:
        for _ in range(rounds):
            for name in FLOOR_OPS:
                fn = b.load_func(name, BPF.PERF_EVENT)
                t0, n0 = run_ns(fn.fd)
                b.attach_perf_event(ev_type=PerfType.SOFTWARE, ev_config=PerfSWConfig.CPU_CLOCK,
                                    fn_name=name, sample_freq=999)
                time.sleep(seconds)
                b.detach_perf_event(ev_type=PerfType.SOFTWARE, ev_config=PerfSWConfig.CPU_CLOCK)
                t1, n1 = run_ns(fn.fd)
                if n1 > n0:
                    got[name].append((t1 - t0) / (n1 - n0))
    finally:
        for p in busy:
            p.kill()
            p.wait()
        b.cleanup()
    return {name: statistics.median(v) for name, v in got.items() if v}


def machine_floor_apart(seconds, rounds):
    """machine_floor in a process of its own, so that bcc's Python module
    (its programs, maps and busy loops) is gone before pyprofile runs."""
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--floor-only",
                        "--seconds", str(seconds), "--rounds", str(rounds)],
                       stdout=subprocess.PIPE, universal_newlines=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return "the floor's run failed (exit %d)" % r.returncode


def phases_once(python, seconds, extra):
    """pyprofile -v with clocks on, on a fresh deep_native.py: {figure: value}.
    A workload found gone when pyprofile starts (seen twice, not understood:
    "no such process" 0.3 s after it was started) is started again, twice
    at most, with its exit status said."""
    for attempt in range(3):
        wl = subprocess.Popen([python, WORKLOAD, str(seconds + 5)], stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            err = subprocess.run([PYPROFILE, "-v", "-F", "999", "-f", "-p", str(wl.pid)]
                                 + extra + [str(int(seconds))], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, universal_newlines=True,
                                 env=dict(os.environ, PYBPF_PHASES="1")).stderr
        finally:
            gone = wl.poll()
            wl.kill()
            wl.wait()
        if "no such process" not in err:
            break
        print("the workload was gone when pyprofile started (exit status %s)%s"
              % (gone, ": again" if attempt < 2 else ""), flush=True)
    m = PHASES.search(err)
    if not m:
        sys.exit("pyprofile printed no phases:\n" + err[-3000:])
    got = {"samples": float(m.group(1))}
    for name, rx in FIGURES:
        f = re.search(rx, m.group(2))
        if f:
            got[name] = float(next(g for g in f.groups() if g is not None))
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--floor-only", action="store_true", help=argparse.SUPPRESS)
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), seconds=1, rounds=1)
    if os.geteuid() != 0:
        sys.exit("run as root")
    if args.floor_only:
        print(json.dumps(machine_floor(args.seconds, args.rounds)))
        return
    modes = {"native": [], "no-native": ["--no-native"]}
    got = {m: [] for m in modes}
    with bpf_stats():
        floor = machine_floor_apart(max(1.0, args.seconds / 2), args.rounds)
        for mode, extra in modes.items():  # the programs into the cache first
            phases_once(args.python, 1, extra)
        for r in range(args.rounds):
            for mode, extra in modes.items():
                got[mode].append(phases_once(args.python, args.seconds, extra))
                print("round %d, %s: %.0f samples" % (r + 1, mode, got[mode][-1]["samples"]),
                      flush=True)
    print()
    print("this machine's floor (BPF run time, medians of %d rounds):" % args.rounds)
    if isinstance(floor, str):
        print("  not measured:", floor)
    else:
        empty = floor.get("empty", 0.0)
        for name, (ops, what) in FLOOR_OPS.items():
            if name not in floor:
                continue
            per = floor[name] if not ops else (floor[name] - empty) / ops
            print("  %-42s %7.0f ns" % (what, per))
    print()
    print("pyprofile on %s, 30 Python + ~20 native frames, 999 Hz, clocks on "
          "(medians of %d rounds of %.0f s), per Python sample:"
          % (args.python, args.rounds, args.seconds))
    print("  %-20s %12s %12s" % ("", "native", "no-native"))
    for name, _ in FIGURES:
        row = [statistics.median(g[name] for g in got[m]) if all(name in g for g in got[m])
               else None for m in modes]
        print("  %-20s %12s %12s" % (name, *("-" if v is None else
                                            ("%.0f" % v if v >= 20 else "%.2f" % v)
                                            for v in row)))


if __name__ == "__main__":
    main()
