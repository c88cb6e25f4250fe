"""Hostile shared libraries for tests/test_hostile_elf.py (and the figures
in bench/hostile_elf.sh): a small library built with gcc at test time, then
changed in its section headers and bytes the way a hostile container could.

    python3 tests/elf_bombs.py KIND OUT.so     (KIND: see BOMBS)

Every variant still loads and runs (the loader reads program headers only),
and its functions keep their symbols and true unwind rules, so a tool that
survives it can still name them:

  notes    200 SHT_NOTE sections over one 8 MB stretch of the file (and
           the build-id's note section no longer typed SHT_NOTE)
  huge     sections beyond the end of the file, of absurd sizes, SHT_NOBITS
  many     65535 sections (extended numbering), all notes over the 8 MB
  ehframe  a .eh_frame whose second CIE has 60 KB of DW_CFA_nop, shared by
           200,000 FDEs (the library's own FDEs keep their CIE)
  bigcie   the same with a 1 MB CIE and 4,000 FDEs
"""
import os
import struct
import subprocess
import sys
import tempfile

SOURCE = r"""
/* what the workload calls through ctypes: bomb_spin -> bomb_helper, and
 * (in another thread) bomb_wait -> bomb_sleep */
__attribute__((noinline)) long bomb_helper(long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005L + 1442695040888963407L;
	__asm__ volatile("" : "+r"(x));
	return x;
}

long bomb_spin(long n)
{
	long x = n;

	for (long i = 0; i < n; i++)
		x ^= bomb_helper(x + i);
	return x;
}

/* a thread blocked in the library, for pydump -n: nanosleep by syscall */
__attribute__((noinline)) long bomb_sleep(long seconds)
{
	long ts[2] = { seconds, 0 }, rc;

	__asm__ volatile("syscall" : "=a"(rc) : "0"(35L), "D"(ts), "S"(0L) : "rcx", "r11", "memory");
	return rc;
}

long bomb_wait(long seconds)
{
	return bomb_sleep(seconds) + 1;
}

/* room for a .eh_frame made later (ehframe, bigcie) */
__attribute__((section(".eh_bomb"), used)) const unsigned char eh_bomb_pad[%d] = { 1 };
"""

PAD = 8 << 20
BLOB = 8 << 20
SHT_PROGBITS, SHT_SYMTAB, SHT_NOTE, SHT_NOBITS = 1, 2, 7, 8
SHDR = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr


def compile_library(out):
    """gcc, no libc (so that every chroot of the matrix loads it), and
    stripped like a distribution's library: its functions named by .dynsym,
    the tools look for a debug file by its build-id."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "bomb.c")
        with open(src, "w") as fp:
            fp.write(SOURCE % PAD)
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-nostdlib", "-o", out, src],
                       check=True)
        subprocess.run(["strip", "--strip-unneeded", out], check=True)


class Elf:
    def __init__(self, path):
        with open(path, "rb") as fp:
            self.b = bytearray(fp.read())
        (self.shoff,) = struct.unpack_from("<Q", self.b, 0x28)
        shnum, self.shstrndx = struct.unpack_from("<HH", self.b, 0x3c)
        self.shdrs = [list(SHDR.unpack_from(self.b, self.shoff + i * SHDR.size))
                      for i in range(shnum)]
        self.strtab_off = self.shdrs[self.shstrndx][4]

    def name(self, sh):
        start = self.strtab_off + sh[0]
        return self.b[start:self.b.index(b"\0", start)].decode()

    def section(self, name):
        return next(sh for sh in self.shdrs if self.name(sh) == name)

    def append(self, data, align=4096):
        self.b += b"\0" * (-len(self.b) % align)
        at = len(self.b)
        self.b += data
        return at

    def save(self, path, extra=()):
        """Writes the headers (with EXTRA after them) at the end of the
        file; 0xff00 and more by extended numbering."""
        shdrs = [list(sh) for sh in self.shdrs] + [list(sh) for sh in extra]
        n = len(shdrs)
        if n >= 0xff00:
            shdrs[0][5] = n  # sh_size of section 0: the count
        self.b += b"\0" * (-len(self.b) % 8)
        at = len(self.b)
        self.b += b"".join(SHDR.pack(*sh) for sh in shdrs)
        struct.pack_into("<Q", self.b, 0x28, at)
        struct.pack_into("<H", self.b, 0x3c, 0 if n >= 0xff00 else n)
        tmp = path + ".tmp"
        with open(tmp, "wb") as fp:
            fp.write(self.b)
        os.chmod(tmp, 0o755)
        os.rename(tmp, path)


def note_sections(elf, count):
    """COUNT notes over the same 8 MB of zeros; the build-id note hidden
    from a scan of note sections (its program header still has it)."""
    elf.section(".note.gnu.build-id")[1] = SHT_PROGBITS
    blob = elf.append(b"\0" * BLOB)
    return [[0, SHT_NOTE, 2, 0, blob, BLOB, 0, 0, 4, 0] for _ in range(count)]


def huge_sections(elf):
    end = len(elf.b)
    name = elf.section(".eh_frame")[0]  # a second ".eh_frame", never the first
    return [
        [0, SHT_PROGBITS, 2, 0, end + (1 << 30), 1 << 40, 0, 0, 1, 0],  # beyond the end
        [0, SHT_NOTE, 2, 0, 0, 1 << 62, 0, 0, 4, 0],                     # absurd size
        [0, SHT_SYMTAB, 0, 0, end + 4096, 24 << 30, 0, 0, 8, 24],        # symbols, beyond
        [0, SHT_NOBITS, 3, 0, 0, 1 << 40, 0, 0, 8, 0],                   # no bytes
        [name, SHT_NOBITS, 2, 0, 0, 1 << 40, 0, 0, 8, 0],
        [0, SHT_NOTE, 2, 0, end - 16, 1 << 20, 0, 0, 4, 0],              # across the end
    ]


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def records(data):
    """[(offset, bytes)] of the CIEs and FDEs of a .eh_frame."""
    out, p = [], 0
    while p + 4 <= len(data):
        (n,) = struct.unpack_from("<I", data, p)
        if n == 0:
            break
        out.append((p, data[p:p + 4 + n]))
        p += 4 + n
    return out


def eh_frame_bomb(elf, cie_nops, fdes):
    """Moves .eh_frame into .eh_bomb (the names swapped): the library's own
    CIE and FDEs (their pc-relative starts set for the new place), then a
    CIE of CIE_NOPS DW_CFA_nop shared by FDES FDEs of 16 bytes of code each,
    over the pad itself (no code: only the cost matters)."""
    real, pad = elf.section(".eh_frame"), elf.section(".eh_bomb")
    old = bytes(elf.b[real[4]:real[4] + real[5]])
    delta = real[3] - pad[3]
    out = bytearray()
    for _, rec in records(old):
        rec = bytearray(rec)
        if struct.unpack_from("<I", rec, 4)[0]:  # an FDE: pc_begin, sdata4 pcrel
            (pc,) = struct.unpack_from("<i", rec, 8)
            struct.pack_into("<i", rec, 8, pc + delta)
        out += rec
    cie_at = len(out)
    body = (struct.pack("<I", 0) + b"\x01zR\0" + uleb(1) + b"\x78" + b"\x10" + uleb(1) +
            b"\x1b" + b"\x0c\x07\x08\x90\x01" + b"\0" * cie_nops)
    body += b"\0" * (-len(body) % 4)
    out += struct.pack("<I", len(body)) + body
    first_code = pad[3] + ((len(out) + 20 * fdes + 4 + 15) & ~15)
    for i in range(fdes):
        here = len(out)
        pc = first_code + 16 * i
        field = pad[3] + here + 8
        out += struct.pack("<IIiI", 16, here + 4 - cie_at, pc - field, 16) + b"\0\0\0\0"
    out += b"\0\0\0\0"
    assert len(out) <= pad[5] and first_code + 16 * fdes <= pad[3] + pad[5], "pad too small"
    elf.b[pad[4]:pad[4] + len(out)] = out
    real[0], pad[0] = pad[0], real[0]


BOMBS = {
    "notes": lambda elf: note_sections(elf, 200),
    "huge": huge_sections,
    "many": lambda elf: note_sections(elf, 65535 - len(elf.shdrs)),
    "ehframe": lambda elf: eh_frame_bomb(elf, 60 << 10, 200000) or [],
    "bigcie": lambda elf: eh_frame_bomb(elf, 1 << 20, 3000) or [],
}


def make(kind, out):
    """Builds the library and turns it into bomb KIND at OUT ("plain":
    the library as gcc made it)."""
    compile_library(out)
    if kind == "plain":
        return out
    elf = Elf(out)
    extra = BOMBS[kind](elf)
    elf.save(out, extra)
    return out


if __name__ == "__main__":
    make(sys.argv[1], sys.argv[2])
