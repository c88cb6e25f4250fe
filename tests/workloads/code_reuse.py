"""Code objects freed and replaced at the same address, for the naming test.

    python code_reuse.py STATE.json GENERATIONS

Waits for SIGUSR1, then runs GENERATIONS generations one after another:
each compiles a small module (file name "<gen-NNN>") defining
burn_gen_NNN(), runs it for about 0.3 s of CPU, and drops every reference
to it, so the next generation's code objects (the same size) tend to take
the freed addresses. The process checks that they really did and writes
STATE.json: {"pid", "ready", "done", "reused": how many generations
reused a code address of the one before, "cpu": {gen name: CPU seconds}}.
"""
import gc
import json
import os
import signal
import sys
import time

OUT, GENERATIONS = sys.argv[1], int(sys.argv[2])
SOURCE = '''
def burn_gen_{n:03d}(until):
    s = 0
    while time.thread_time() < until:
        for i in range(500):
            s += i * i % 7
    return s
burn_gen_{n:03d}(time.thread_time() + 0.3)
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


def main():
    signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
    write(ready=True)
    while not go:
        time.sleep(0.01)
    cpu, reused, before = {}, 0, set()
    for n in range(GENERATIONS):
        code = compile(SOURCE.format(n=n), "<gen-%03d>" % n, "exec")
        now = code_addresses(code)
        reused += bool(now & before)
        t0 = time.thread_time()
        exec(code, {"time": time})
        cpu["burn_gen_%03d" % n] = time.thread_time() - t0
        before = now
        del code
        gc.collect()
    write(ready=True, done=True, reused=reused, cpu=cpu)


main()
