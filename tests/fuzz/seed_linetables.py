#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Line tables of real code objects, as seeds for fuzz_linetable (run.sh).

    INTERPRETER seed_linetables.py dump > lines
        (any CPython 3.8+, also inside a chroot: reads nothing but its own
        stdlib) prints "minor firstlineno offset hex" per code object;
    python3 seed_linetables.py write OUTDIR TAG < lines
        writes fuzz_linetable inputs: minor - 8 (1 byte), firstlineno
        (int32), offset (int64, little endian), then the table.
"""
import sys

SAMPLE = '''
import os

class Outer:
    """doc"""
    def method(self, items):
        total = 0
        for i, x in enumerate(items):
            if x % 3 == 0:
                total += (x *
                          2)
            elif x:
                try:
                    total -= int(
                        str(x))
                except ValueError:
                    pass
            else:
                continue
        return [y for y in items
                if y] or total

    async def agen(self):
        async with self:
            yield 1

def inner():
    f = lambda a, b=2: (a +
                        b)
    with open(os.devnull) as fh:
        while fh.read(1):
            break
    return f(1)
'''


def codes(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            for sub in codes(c):
                yield sub


def dump():
    minor = sys.version_info[1]
    sources = [("<sample>", SAMPLE)]
    for name in ("textwrap", "json.decoder", "argparse"):
        try:
            mod = __import__(name, fromlist=["_"])
            with open(mod.__file__, encoding="utf-8") as f:
                sources.append((mod.__file__, f.read()))
        except Exception:
            pass
    n = 0
    for filename, src in sources:
        for co in codes(compile(src, filename, "exec")):
            table = co.co_lnotab if minor <= 9 else co.co_linetable
            # an offset somewhere inside the code, like a sampled frame's
            offset = (len(co.co_code) // 3) & ~1
            print(minor, co.co_firstlineno, offset, table.hex())
            n += 1
            if n >= 60:
                return


def write(outdir, tag):
    import os
    import struct
    os.makedirs(outdir, exist_ok=True)
    for i, line in enumerate(sys.stdin):
        minor, first, offset, hexs = line.split(" ", 3)
        data = struct.pack("<Biq", int(minor) - 8, int(first), int(offset))
        data += bytes.fromhex(hexs.strip())
        with open(os.path.join(outdir, "%s-3.%s-%03d" % (tag, minor, i)), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    if sys.argv[1:2] == ["dump"]:
        dump()
    elif sys.argv[1:2] == ["write"]:
        write(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
