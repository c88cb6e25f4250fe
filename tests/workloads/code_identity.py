"""Code objects that only their identity tells apart, for the naming tests.

    python code_identity.py STATE.json MODE GENERATIONS

Waits for SIGUSR1, then runs GENERATIONS generations one after another,
each compiling and running a small module, and writes STATE.json
({"pid", "ready", "done", ...}) at the end. MODE:

  late_hash  generation N compiles burn_late_hash_NNN() from a file named
             "<late-hash-NNN>" (a new string, not hashed yet: 3.8-3.12
             do not hash it when compiling), runs it for 1 ms, hashes the
             file name at once (as formatting a traceback would, through
             linecache's dict), then runs it for 5 ms more: a sample of
             the first millisecond reaches user space after the hash.
             Every generation (its module code too) stays alive, so its
             code can always be named. "gens": number of generations,
             "codes": the address (id) of every code object that ran.
  same_name  generation N compiles, from "<string>" like exec() of a
             string, a module whose function burn_string() and whose
             <module> code have the same names and file name in every
             generation, but sit 3 x N lines lower; runs it for about
             0.3 s of CPU and drops it, so the next generation's code
             objects (and often their line tables) take the freed
             addresses. "cpu": {N: CPU seconds}, "lines": {N: [the
             function's while line, its hot line, the <module> line that
             calls it]}, "reused": how many generations reused a code
             address of the one before.
"""
import gc
import json
import os
import signal
import sys
import time

OUT, MODE, GENERATIONS = sys.argv[1], sys.argv[2], int(sys.argv[3])
LATE_HASH = '''
def burn_late_hash_{n:03d}(until):
    while time.thread_time() < until:
        sum(range(2000))
'''
SAME_NAME = '''{pad}def burn_string(until):
    while time.thread_time() < until:
        sum(range(20000))
burn_string(time.thread_time() + 0.3)
'''
go = []


def write(**state):
    state["pid"] = os.getpid()
    with open(OUT + ".tmp", "w") as fp:
        json.dump(state, fp)
    os.rename(OUT + ".tmp", OUT)


def code_addresses(code):
    found = {id(code)}
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            found |= code_addresses(const)
    return found


def late_hash():
    alive = []
    for n in range(GENERATIONS):
        filename = "<late-hash-%03d>" % n
        namespace = {"time": time}
        module = compile(LATE_HASH.format(n=n), filename, "exec")
        exec(module, namespace)
        burn = namespace["burn_late_hash_%03d" % n]
        burn(time.thread_time() + 0.001)
        hash(filename)
        burn(time.thread_time() + 0.005)
        alive.append((module, burn))  # a sample in the module's own code too
    # every code object that can run here: the generations' and the stack's
    codes = set().union(*(code_addresses(m) for m, _ in alive))
    frame = sys._getframe()
    while frame:
        codes.add(id(frame.f_code))
        frame = frame.f_back
    write(ready=True, done=True, gens=GENERATIONS, codes=sorted(codes))


def same_name():
    cpu, lines, reused, before = {}, {}, 0, set()
    for n in range(GENERATIONS):
        pad = "\n" * (3 * n)
        code = compile(SAME_NAME.format(pad=pad), "<string>", "exec")
        now = code_addresses(code)
        reused += bool(now & before)
        t0 = time.thread_time()
        exec(code, {"time": time})
        cpu[n] = time.thread_time() - t0
        lines[n] = [3 * n + 2, 3 * n + 3, 3 * n + 4]
        before = now
        del code
        gc.collect()
    write(ready=True, done=True, cpu=cpu, lines=lines, reused=reused)


def main():
    signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
    write(ready=True)
    while not go:
        time.sleep(0.01)
    {"late_hash": late_hash, "same_name": same_name}[MODE]()


main()
