#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cut a real interpreter binary down to a small ELF seed for fuzz_elf_image.

    elf_distill.py IN OUT

Keeps what lib/sys/elf_image.c is asked about, with the original bytes and
addresses: the symbols the tools look up (and some others) in .dynsym and
.symtab, the bytes those symbols cover (up to 2 KiB each: _PyRuntime's
_Py_DebugOffsets, Py_Version, type objects...), a window of .rodata around
the version string, the build-id note, .gnu_debuglink and the .bss header.
Each kept range gets a section and a PT_LOAD of its own. A 7 MB python3.11
becomes a few KB that mutations can cover.
"""
import re
import struct
import sys

WANTED = [b"_PyRuntime", b"Py_Version", b"Py_GetVersion", b"PyCode_Type", b"PyUnicode_Type",
          b"PyBytes_Type", b"_PyEval_EvalFrameDefault", b"_thread_db_pthread_tid"]
OTHERS = 24      # further symbols kept, in table order
CHUNK_MAX = 2048


def sections(data):
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    out = []
    for i in range(e_shnum):
        f = struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
        out.append(dict(zip(("name", "type", "flags", "addr", "offset", "size", "link",
                             "info", "align", "entsize"), f)))
    strtab = out[e_shstrndx]
    for s in out:
        raw = data[strtab["offset"] + s["name"]:]
        s["sname"] = raw[:raw.index(b"\0")].decode("latin-1")
    return out


def section_bytes(data, s):
    return data[s["offset"]:s["offset"] + s["size"]] if s["type"] != 8 else b""


def main(src, dst):
    data = open(src, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit("%s: not a 64-bit little-endian ELF" % src)
    secs = sections(data)
    by_name = {s["sname"]: s for s in secs}

    def containing(addr):
        for s in secs:
            if s["flags"] & 2 and s["type"] == 1 and s["addr"] <= addr < s["addr"] + s["size"]:
                return s
        return None

    chunks = []  # (name, vaddr, bytes)

    def keep(addr, size):
        s = containing(addr)
        if not s:
            return
        size = max(8, min(size, CHUNK_MAX, s["addr"] + s["size"] - addr))
        if any(v <= addr < v + len(b) for _, v, b in chunks):
            return
        off = s["offset"] + addr - s["addr"]
        chunks.append((s["sname"], addr, data[off:off + size]))

    symtabs = []
    for kind, strname in ((11, ".dynstr"), (2, ".strtab")):  # SHT_DYNSYM, SHT_SYMTAB
        tab = next((s for s in secs if s["type"] == kind), None)
        if not tab or tab["entsize"] != 24:
            continue
        strs = section_bytes(data, secs[tab["link"]])
        raw = section_bytes(data, tab)
        wanted, others = [], []
        for i in range(1, len(raw) // 24):
            ent = raw[i * 24:(i + 1) * 24]
            name_off, info, other, shndx, value, size = struct.unpack("<IBBHQQ", ent)
            name = strs[name_off:strs.index(b"\0", name_off)]
            if name in WANTED:
                wanted.append((name, ent))
            elif shndx and len(others) < OTHERS and name:
                others.append((name, ent))
        symtabs.append((kind, strname, wanted + others))
        for name, ent in wanted:
            _, _, _, shndx, value, size = struct.unpack("<IBBHQQ", ent)
            if shndx:
                keep(value, size or 16)
    rodata = by_name.get(".rodata")
    if rodata:
        m = re.search(rb"\x00(3\.\d+\.\d+(?:[abc]|rc)?\d*\+?)\x00", section_bytes(data, rodata))
        if m:
            keep(rodata["addr"] + max(0, m.start() - 512), 1024)

    # new file: header, phdrs, then section contents, then section headers
    shstr = bytearray(b"\0")

    def sname(n):
        off = len(shstr)
        shstr.extend(n.encode("latin-1") + b"\0")
        return off

    body = bytearray()
    shdrs = [struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)]
    phdrs = []
    nph = len(chunks) + 1
    base = 64 + 56 * nph

    def add(name, typ, flags, addr, content, link=0, info=0, align=1, entsize=0, size=None):
        while (base + len(body)) % 8:
            body.append(0)
        off = base + len(body)
        body.extend(content)
        shdrs.append(struct.pack("<IIQQQQIIQQ", sname(name), typ, flags, addr, off,
                                 len(content) if size is None else size, link, info, align,
                                 entsize))
        return len(shdrs) - 1, off

    note = by_name.get(".note.gnu.build-id")
    if note:
        idx, off = add(".note.gnu.build-id", 7, 2, note["addr"], section_bytes(data, note),
                       align=4)
        phdrs.append((1, 4, off, note["addr"], note["size"]))
    chunk_index = {}
    for name, vaddr, content in chunks:
        idx, off = add(name, 1, 3, vaddr, content, align=8)
        chunk_index[vaddr] = idx
        phdrs.append((1, 6, off, vaddr, len(content)))
    for kind, strname, syms in symtabs:
        strs = bytearray(b"\0")
        ents = bytearray(24)
        for name, ent in syms:
            _, info, other, shndx, value, size = struct.unpack("<IBBHQQ", ent)
            new_shndx = next((i for v, i in chunk_index.items() if v == value), 1 if shndx else 0)
            ents.extend(struct.pack("<IBBHQQ", len(strs), info, other, new_shndx, value, size))
            strs.extend(name + b"\0")
        stridx = len(shdrs) + 1
        add(".dynsym" if kind == 11 else ".symtab", kind, 2 if kind == 11 else 0, 0, bytes(ents),
            link=stridx, info=1, align=8, entsize=24)
        add(strname, 3, 2 if kind == 11 else 0, 0, bytes(strs))
    bss = by_name.get(".bss")
    if bss:
        add(".bss", 8, 3, bss["addr"], b"", align=32, size=bss["size"])
    link = by_name.get(".gnu_debuglink")
    if link:
        add(".gnu_debuglink", 1, 0, 0, section_bytes(data, link), align=4)
    shstrndx = len(shdrs)
    add(".shstrtab", 3, 0, 0, b"")  # placeholder, contents fixed below
    shstr_off = base + len(body)
    name_off = sname(".shstrtab")
    body.extend(shstr)
    shdrs[-1] = struct.pack("<IIQQQQIIQQ", name_off, 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0)
    while (base + len(body)) % 8:
        body.append(0)
    shoff = base + len(body)

    e_type = struct.unpack_from("<H", data, 16)[0]
    hdr = bytearray(data[:16])
    hdr += struct.pack("<HHIQQQIHHHHHH", e_type, 62, 1, 0, 64, shoff, 0, 64, 56, len(phdrs),
                       64, len(shdrs), shstrndx)
    ph = b"".join(struct.pack("<IIQQQQQQ", t, fl, off, va, va, sz, sz, 1)
                  for t, fl, off, va, sz in phdrs)
    ph += b"\0" * (56 * nph - len(ph))
    out = bytes(hdr) + ph + bytes(body) + b"".join(shdrs)
    with open(dst, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
