#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seeds for pydump's fuzz targets (run.sh seed_pydump).

  seed_pydump.py core OUT          a tiny ELF core: every note pydump reads
                                   (NT_PRSTATUS, NT_PRPSINFO, NT_SIGINFO,
                                   NT_AUXV, NT_FILE) and one memory segment
  seed_pydump.py cfi EH_SEED OUT   a fuzz_eh_frame seed, with a length and a
                                   stack image behind it (fuzz_cfi_unwind)
  seed_pydump.py net TABLE OUT     lines of /proc/net/TABLE, each after the
                                   inode it holds (fuzz_proc_net)
"""
import struct
import sys


def note(name, typ, desc):
    n = name + b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return struct.pack("<III", len(n), len(desc), typ) + pad(n) + pad(desc)


def core(out):
    regs = [0] * 27
    regs[16], regs[19], regs[15], regs[21] = 0x401000, 0x7ffc0000, 202, 0x7f0000001000
    prstatus = bytearray(336)
    struct.pack_into("<h", prstatus, 12, 11)
    struct.pack_into("<I", prstatus, 32, 4242)
    struct.pack_into("<27Q", prstatus, 112, *regs)
    psinfo = bytearray(136)
    struct.pack_into("<I", psinfo, 24, 4242)
    psinfo[40:47] = b"python3"
    files = (struct.pack("<QQ", 1, 4096) + struct.pack("<QQQ", 0x400000, 0x402000, 0)
             + b"/usr/bin/python3\0")
    auxv = struct.pack("<QQQQ", 9, 0x401000, 0, 0)
    siginfo = struct.pack("<iiiiQ", 11, 0, 1, 0, 0) + bytes(104)
    notes = (note(b"CORE", 1, bytes(prstatus)) + note(b"CORE", 3, bytes(psinfo))
             + note(b"CORE", 0x53494749, siginfo) + note(b"CORE", 6, auxv)
             + note(b"CORE", 0x46494c45, files))
    phoff, phnum = 64, 2
    data_at = phoff + 56 * phnum
    seg = bytes(range(256)) * 16
    ehdr = (b"\x7fELF\x02\x01\x01" + bytes(9)
            + struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, 0, 0, 64, 56, phnum, 0, 0, 0))
    ph = struct.pack("<IIQQQQQQ", 4, 4, data_at, 0, 0, len(notes), 0, 1)
    ph += struct.pack("<IIQQQQQQ", 1, 6, data_at + len(notes), 0x7ffc0000, 0, len(seg),
                      len(seg) * 2, 1)
    with open(out, "wb") as fp:
        fp.write(ehdr + ph + notes + seg)


def cfi(seed, out):
    d = open(seed, "rb").read()
    section = d[8:8 + 4096]
    with open(out, "wb") as fp:
        fp.write(d[:8] + struct.pack("<H", len(section)) + section + bytes(range(256)) * 8)


def net(table, out):
    lines = open(table, "rb").read().splitlines()[1:6]
    for i, line in enumerate(lines):
        f = line.split()
        # tcp/udp: inode is the 10th field; unix: the 7th
        col = 9 if b":" in f[1] else 6
        inode = int(f[col]) if len(f) > col and f[col].isdigit() else 0
        with open("%s-%d" % (out, i), "wb") as fp:
            fp.write(struct.pack("<Q", inode) + line)


if __name__ == "__main__":
    {"core": core, "cfi": cfi, "net": net}[sys.argv[1]](*sys.argv[2:])
