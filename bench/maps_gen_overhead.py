#!/usr/bin/env python3
"""What watching mapping changes costs the machine (a benchmark, not a
test; it prints figures).

With native stacks on, the BPF tools attach programs to the syscalls
tracepoints of mmap, munmap, mremap, mprotect, pkey_mprotect,
remap_file_pages and shmat (bpf_c/maps_gen.bpf.h). Any syscalls
tracepoint puts every system call of the machine on the kernel's slower
path, and the programs run on every such call of every process (one hash
look-up for a process that is not watched). This measures, with a small C
program that is not profiled:

  getppid     ns per getppid() (every system call's share)
  mmap+munmap ns per pair of an anonymous 4 KiB mmap and its munmap (the
              programs' own calls)

in three modes, interleaved over rounds: no tool; pyprofile --no-native on
a sleeping Python process (no mapping programs); pyprofile (with them).

    sudo bench/maps_gen_overhead.py [--rounds N] [--calls N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smoke  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build")), "tools",
                    "pyprofile")
LOOP_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static long long now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}
int main(int argc, char **argv)
{
	long n = atol(argv[1]);
	long long t0 = now(), t1, t2;
	for (long i = 0; i < n; i++)
		getppid();
	t1 = now();
	for (long i = 0; i < n / 4; i++)
		munmap(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 4096);
	t2 = now();
	printf("%.1f %.1f\n", (double)(t1 - t0) / n, (double)(t2 - t1) / (n / 4));
	return 0;
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000000)
    smoke.option(ap)
    args = smoke.apply(ap.parse_args(), rounds=1, calls=20000)
    tmp = tempfile.mkdtemp()
    src, exe = os.path.join(tmp, "loop.c"), os.path.join(tmp, "loop")
    with open(src, "w") as fp:
        fp.write(LOOP_C)
    subprocess.run(["gcc", "-O2", "-o", exe, src], check=True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.2)"])
    time.sleep(1)
    modes = {"none": None, "no-native": ["--no-native"], "native": []}
    got = {m: ([], []) for m in modes}
    try:
        for _ in range(args.rounds):
            for mode, extra in modes.items():
                tool = None
                if extra is not None:
                    tool = subprocess.Popen([TOOL, "-p", str(sleeper.pid), "-F", "49"] + extra,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                            universal_newlines=True)
                    for line in tool.stdout:  # attached
                        if line.startswith("Sampling"):
                            break
                out = subprocess.run([exe, str(args.calls)], stdout=subprocess.PIPE,
                                     universal_newlines=True, check=True).stdout.split()
                got[mode][0].append(float(out[0]))
                got[mode][1].append(float(out[1]))
                if tool:
                    tool.terminate()
                    tool.wait()
    finally:
        sleeper.kill()
    print("%-10s %22s %22s" % ("mode", "getppid ns (median)", "mmap+munmap ns (median)"))
    for mode in modes:
        g, m = got[mode]
        print("%-10s %10.1f (%5.1f-%5.1f) %10.1f (%5.1f-%5.1f)" % (
            mode, statistics.median(g), min(g), max(g), statistics.median(m), min(m), max(m)))


if __name__ == "__main__":
    main()
