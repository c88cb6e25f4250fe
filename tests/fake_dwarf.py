"""A shared object whose DWARF describes CPython's structs with offsets we
choose: for tests of what the tools do with DWARF that does not fit the
interpreter it was found for.

The structs carry the names and member paths of offsets/field_specs.def,
each member at the offset asked for (nothing else in them is real), and
are compiled with gcc -g into a shared object (linked, so its DWARF needs
no relocation). Only what lib/cpython/offsets_dwarf.c looks at is there.
"""
import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPECS = os.path.join(REPO, "offsets", "field_specs.def")
SPEC_RE = re.compile(
    r"^PY_(FIELD|SIZE)\((\w+),\s*(\d+),\s*(\d+),\s*([^,]+?)(?:,\s*([\w.]+))?\)\s*$")


def specs_for(minor):
    """[(field, C type, member path or None)] of field_specs.def for 3.MINOR."""
    out = []
    with open(SPECS) as fp:
        for line in fp:
            m = SPEC_RE.match(line.strip())
            if m and int(m.group(3)) <= minor <= int(m.group(4)):
                out.append((m.group(2), m.group(5).strip(), m.group(6)))
    return out


def read_table(path):
    """{field: offset} of an offsets/cpython-3.N.offsets table."""
    values = {}
    with open(path) as fp:
        for line in fp:
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#") and parts[0] != "version":
                values[parts[0]] = int(parts[1])
    return values


def c_source(minor, offsets):
    """C declaring every struct of 3.MINOR's specs with the given offsets."""
    types = {}
    for field, ctype, path in specs_for(minor):
        types.setdefault(ctype, []).append((path, offsets[field]))
    lines = []
    for n, (ctype, members) in enumerate(sorted(types.items())):
        alts = []
        size = 0
        for k, (path, off) in enumerate(members):
            if path is None:  # sizeof(ctype)
                size = off
                continue
            head, _, rest = path.partition(".")
            if rest:
                # a named member holding the rest of the path, at offset 0
                alts.append("struct { struct { %s } %s; };" % (_nested(rest, off), head))
            else:  # padding names are unique: anonymous structs share a scope
                pad = "char _p%d[%d]; " % (k, off) if off else ""
                alts.append("struct { %schar %s; };" % (pad, head))
        if size:
            alts.append("char _size[%d];" % size)
        body = "union { %s };" % " ".join(alts)
        if ctype.startswith("struct "):
            lines.append("%s { %s };" % (ctype, body))
            lines.append("%s v%d;" % (ctype, n))
        else:
            lines.append("typedef struct { %s } %s;" % (body, ctype))
            lines.append("%s v%d;" % (ctype, n))
    return "\n".join(lines) + "\n"


def _nested(path, off):
    head, _, rest = path.partition(".")
    if rest:
        return "struct { %s } %s;" % (_nested(rest, off), head)
    pad = "char _p[%d]; " % off if off else ""
    return "%schar %s;" % (pad, head)


def build(minor, offsets, dest, workdir, build_id=None):
    """Writes DEST: a shared object with DWARF for 3.MINOR's structs at
    OFFSETS ({field: offset}); with BUILD_ID (hex), carrying that build-id,
    as the debug file of a binary with that build-id does."""
    src = os.path.join(workdir, "fake_cpython_%d.c" % minor)
    with open(src, "w") as fp:
        fp.write(c_source(minor, offsets))
    extra = ["-Wl,--build-id=0x" + build_id] if build_id else []
    subprocess.run(["gcc", "-g", "-shared", "-nostdlib", "-fno-eliminate-unused-debug-types",
                    "-o", dest, src] + extra, check=True)
    return dest
