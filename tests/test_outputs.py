"""pyprofile's reports read by the clients people open them with: the SVG
flame graph parsed as XML and rendered by headless Chromium, speedscope
files checked against the schema speedscope itself publishes (npm's
speedscope package), pprof files read by `go tool pprof` with its default
options, and --interval writing one pprof file per interval."""
import json
import os
import re
import shutil
import struct
import subprocess
import tarfile
import time
import xml.etree.ElementTree as ET
import zlib

import pytest

from conftest import REPO, WORKLOADS
import interpreters

DEMO = os.path.join(REPO, "examples", "demo", "demo_workload.py")
SPEEDSCOPE_NPM = "speedscope@1.25.0"
CACHE = os.environ.get("PYBPF_CACHE", "/var/cache/pybpf-tools")
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def demo():
    """The demo workload on Debian's python3.11 (known functions, a
    <module>, a lambda and a generator expression)."""
    if not os.access(interpreters.HOST_PYTHON, os.X_OK):
        pytest.skip("%s not installed" % interpreters.HOST_PYTHON)
    p = subprocess.Popen([interpreters.HOST_PYTHON, DEMO, "--seconds", "600"],
                         stdout=subprocess.DEVNULL)
    time.sleep(1)
    yield p.pid
    p.kill()
    p.wait()


# <module>, <lambda> and a generator expression inside it: names pprof's
# readers would "simplify" if they took them for C++
ANGLES = ("import sys\n"
          "square_all = lambda n: sum(x * x for x in range(n))\n"
          "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
          "while True:\n"
          "    square_all(2000)\n")


@pytest.fixture(scope="module")
def angles():
    if not os.access(interpreters.HOST_PYTHON, os.X_OK):
        pytest.skip("%s not installed" % interpreters.HOST_PYTHON)
    p = subprocess.Popen([interpreters.HOST_PYTHON, "-c", ANGLES], stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"ready\n"
    yield p.pid
    p.kill()
    p.wait()


def profile(pyprofile, pid, path, fmt, seconds=4, extra=()):
    r = subprocess.run([pyprofile, "-F", "199", "-p", str(pid), "-o", str(path),
                        "--format", fmt] + list(extra) + [str(seconds)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r


# ------------------------------------------------------------------ SVG

def boxes(svg_path):
    """[(label, tooltip, x, y, width, fill)] of the flame graph's boxes."""
    root = ET.parse(str(svg_path)).getroot()
    out = []
    for g in root.iter(SVG_NS + "g"):
        if g.get("class") != "f":
            continue
        rect = g.find(SVG_NS + "rect")
        out.append((g.get("data-l"), g.find(SVG_NS + "title").text, float(rect.get("x")),
                    int(rect.get("y")), float(rect.get("width")), rect.get("fill")))
    return root, out


def texts(root):
    return {t.get("id"): "".join(t.itertext()) for t in root.iter(SVG_NS + "text")}


def test_svg_one_box_per_function_with_lines_in_tooltip(pyprofile, demo, tmp_path):
    """A function's lines are one box labelled "name (file.py)", the full
    path and each line's share in its tooltip; title and subtitle say what,
    how long, when; the legend names the colours."""
    out = tmp_path / "cpu.svg"
    profile(pyprofile, demo, out, "svg")
    root, bs = boxes(out)
    t = texts(root)
    assert t["title"] == "pyprofile: CPU Flame Graph of PID %d (python3.11)" % demo, t
    sub = t["subtitle"]
    assert re.match(r"4 s, from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \w+, sampled at 199 Hz, "
                    r"\d+ samples, Python 3\.11\.\d+$", sub), sub
    parse = [b for b in bs if b[0] == "parse_records (demo_workload.py)"]
    # one box under main(): the lines of parse_records are not split
    assert len(parse) == 1, [b[:2] for b in bs]
    tip = parse[0][1]
    assert tip.startswith("parse_records (%s) (" % DEMO), tip
    lines = re.findall(r"^line (\d+): (\d+) samples? \(([\d.]+)% of the function here\)$",
                       tip, re.M)
    assert len(lines) >= 2, tip  # its loop runs over several lines
    src = open(DEMO).read().splitlines()
    first = next(i for i, l in enumerate(src, 1) if l.startswith("def parse_records"))
    end = next(i for i, l in enumerate(src, 1) if i > first and l.startswith("def "))
    assert all(first < int(n) < end for n, _, _ in lines), (first, end, lines)
    assert abs(sum(float(p) for _, _, p in lines) - 100) < 1, lines
    # every box label is a name with a base name, never a path
    assert not any("/" in b[0] for b in bs if "(" in b[0]), [b[0] for b in bs]
    legend = [e.get("fill") for e in root.iter(SVG_NS + "rect") if e.get("class") == "legend"]
    names = [t.text for t in root.iter(SVG_NS + "text") if t.text in
             ("Python", "native (C)", "kernel", "unknown or marker", "thread")]
    assert len(legend) == 5 and len(names) == 5, (legend, names)
    # Python boxes wear the Python colour of the legend (green: G highest)
    rgb = [tuple(map(int, re.findall(r"\d+", b[5]))) for b in bs if b[0].endswith(".py)")]
    assert rgb and all(g > r and g > b for r, g, b in rgb), rgb


def read_png(path):
    """(width, height, [(r, g, b)] row-major) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, px = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                row[i] = (row[i] + a) & 255
            elif f == 2:
                row[i] = (row[i] + b) & 255
            elif f == 3:
                row[i] = (row[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        px.extend(tuple(row[i:i + 3]) for i in range(0, stride, bpp))
        prev = row
    return w, h, px


def test_svg_renders_in_chromium(pyprofile, demo, tmp_path):
    """What a person sees: tests/svg_screenshot.sh (headless Chromium) draws
    the boxes (the script ran: labels placed, nothing hidden) and the
    legend."""
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("chromium not installed (apt-get install chromium)")
    svg = tmp_path / "cpu.svg"
    profile(pyprofile, demo, svg, "svg")
    png = tmp_path / "cpu.png"
    r = subprocess.run([os.path.join(REPO, "tests", "svg_screenshot.sh"), str(svg), str(png)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=180)
    assert r.returncode == 0, r.stderr
    w, h, px = read_png(str(png))
    assert (w, h) == (1400, 900)
    _, bs = boxes(svg)
    colours = {tuple(map(int, re.findall(r"\d+", b[5]))) for b in bs}
    seen = set(px)
    # the boxes' own colours are on screen (most of them: tiny ones are not)
    shown = [c for c in colours if c in seen]
    assert len(shown) >= len(colours) // 2, (len(shown), len(colours))
    # the wide bottom box ("all") spans the width: 1180 of 1200 px
    root_fill = tuple(map(int, re.findall(r"\d+", next(b[5] for b in bs if b[0] == "all"))))
    widest = max(sum(1 for x in range(w) if px[y * w + x] == root_fill) for y in range(h))
    assert widest >= 1100, widest


# ----------------------------------------------------------- speedscope

def speedscope_schema():
    """speedscope's own file-format schema, from its npm package (fetched
    once into the cache directory with npm's client)."""
    d = os.path.join(CACHE, "npm", SPEEDSCOPE_NPM.replace("@", "-"))
    schema = os.path.join(d, "package", "dist", "release", "file-format-schema.json")
    if not os.path.exists(schema):
        if not shutil.which("npm"):
            pytest.skip("npm not installed (apt-get install npm)")
        os.makedirs(d, exist_ok=True)
        r = subprocess.run(["npm", "pack", SPEEDSCOPE_NPM, "--pack-destination", d],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=300, cwd=d)
        tgz = [f for f in os.listdir(d) if f.endswith(".tgz")]
        if r.returncode != 0 or not tgz:
            pytest.skip("npm pack %s failed: %s" % (SPEEDSCOPE_NPM, r.stdout[-500:]))
        with tarfile.open(os.path.join(d, tgz[0])) as t:
            t.extract("package/dist/release/file-format-schema.json", d)
    with open(schema) as fp:
        return json.load(fp)


def test_speedscope_fits_its_schema_in_time_units(pyprofile, demo, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = speedscope_schema()
    out = tmp_path / "cpu.json"
    profile(pyprofile, demo, out, "speedscope", seconds=3)
    doc = json.load(open(str(out)))
    jsonschema.validate(doc, schema)
    period = 1000000000 // 199  # the sampling period pyprofile reports
    prof = doc["profiles"][0]
    assert prof["unit"] == "nanoseconds" and prof["name"].endswith("(%d)" % demo), prof["name"]
    assert prof["endValue"] == sum(prof["weights"]) > 0
    assert all(w % period == 0 for w in prof["weights"]), (period, prof["weights"][:10])
    frames = doc["shared"]["frames"]
    parse = [f for f in frames if f["name"].startswith("parse_records (demo_workload.py:")]
    assert parse and all(f["file"] == DEMO and isinstance(f["line"], int) for f in parse), parse


# ---------------------------------------------------------------- pprof

def go_pprof(args, tmp_path):
    go = shutil.which("go") or ("/usr/bin/go" if os.path.exists("/usr/bin/go") else None)
    if not go:
        pytest.skip("go tool pprof not installed (golang-go)")
    env = dict(os.environ, HOME=str(tmp_path), GOCACHE=str(tmp_path / "gocache"), GOFLAGS="")
    r = subprocess.run([go, "tool", "pprof"] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300, universal_newlines=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def raw_sections(raw):
    """go tool pprof -raw: {'Samples': [...], 'Locations': [...], 'Mappings': [...]}"""
    out, cur = {}, None
    for line in raw.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            cur = out.setdefault(line.rstrip(":"), [])
        elif cur is not None and line.strip():
            cur.append(line)
    return out


def test_pprof_names_as_written_and_labels(pyprofile, angles, tmp_path):
    """With default options (symbolization and demangling on), <module>,
    <lambda> and <genexpr> come out as written; samples carry pid, thread,
    thread_name, comm and python_version; Python lines sit on locations
    without a machine address."""
    demo = angles
    out = tmp_path / "cpu.pb.gz"
    profile(pyprofile, demo, out, "pprof", seconds=2)
    top = go_pprof(["-top", "-nodecount=500", str(out)], tmp_path)
    names = {l.split()[-1] for l in top.splitlines() if re.match(r"\s*[\d.]+\w*\s+[\d.]+%", l)}
    assert {"<module>", "<lambda>", "<lambda>.<locals>.<genexpr>"} <= names, top
    assert not any("[[" in n for n in names), top
    assert "File: python3.11" in top, top
    traces = go_pprof(["-traces", str(out)], tmp_path)
    ver = subprocess.run([interpreters.HOST_PYTHON, "-c",
                          "import platform; print(platform.python_version())"],
                         stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    # thread_name: the OS name, as the program never imported threading
    for label, value in (("pid", str(demo)), ("thread", str(demo)), ("comm", "python3.11"),
                         ("thread_name", "python3.11"), ("python_version", ver)):
        assert re.search(r"^\s*%s:\s+%s$" % (label, re.escape(value)), traces, re.M), (
            label, traces[:1500])
    raw = raw_sections(go_pprof(["-raw", str(out)], tmp_path))
    py = [l for l in raw["Locations"] if "<string>:" in l]
    assert py and all(re.match(r"\s*\d+: 0x0 ", l) for l in py), py[:5]


def test_pprof_names_and_labels_on_every_interpreter(interp, pyprofile, tmp_path):
    """<module>, <lambda> and the generator expression in it (qualified
    names from 3.11 on, plain co_name before) come out of go tool pprof as
    the interpreter names them, and python_version is the interpreter's."""
    src = tmp_path / "angles.py"
    src.write_text(ANGLES)
    proc = interp.spawn([interp.place(str(src))], stdout=subprocess.PIPE)
    try:
        assert proc.popen.stdout.readline() == b"ready\n"
        out = tmp_path / "cpu.pb.gz"
        profile(pyprofile, proc.pid, out, "pprof", seconds=2, extra=["-U"])
    finally:
        proc.kill()
    top = go_pprof(["-top", "-nodecount=500", str(out)], tmp_path)
    names = {l.split()[-1] for l in top.splitlines() if re.match(r"\s*[\d.]+\w*\s+[\d.]+%", l)}
    qualified = interp.version >= (3, 11)
    want = {"<module>", "<lambda>",
            "<lambda>.<locals>.<genexpr>" if qualified else "<genexpr>"}
    assert want <= names, (sorted(names), top)
    traces = go_pprof(["-traces", str(out)], tmp_path)
    ver = "%d.%d.%d" % interp.version
    assert re.search(r"^\s*python_version:\s+%s$" % re.escape(ver), traces, re.M), traces[:1000]
    assert re.search(r"^\s*pid:\s+%d$" % proc.pid, traces, re.M), traces[:1000]


def build_id(path):
    """The GNU build-id of an ELF file, from readelf."""
    r = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                       universal_newlines=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    return m.group(1) if m else None


def test_pprof_native_frames_keep_file_build_id_and_address(pyprofile, tmp_path):
    """Debian's 3.15 keeps frame pointers: its native frames are locations
    at their own addresses under a mapping of the file they are in, with
    its build-id (what a back end symbolizes with); distinct addresses stay
    distinct locations."""
    matrix, _ = interpreters.discover()
    it = next((e for e in matrix if e.id == "sid-3.15"), None)
    if it is None or isinstance(it, interpreters.Unavailable):
        pytest.skip("sid-3.15 chroot not available")
    script = it.place(os.path.join(WORKLOADS, "sort_key.py"))
    proc = it.spawn([script, "60"])
    try:
        time.sleep(1)
        out = tmp_path / "cpu.pb.gz"
        profile(pyprofile, proc.pid, out, "pprof", seconds=3, extra=["-U"])
        exe = os.readlink("/proc/%d/exe" % proc.pid)
    finally:
        proc.kill()
    raw = raw_sections(go_pprof(["-raw", str(out)], tmp_path))
    maps = {}
    for l in raw["Mappings"]:
        m = re.match(r"\s*(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S+) ?(\S*)", l)
        if m:
            maps[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16), m.group(5),
                                m.group(6))
    interp = [k for k, v in maps.items() if v[2] == "/usr/bin/python3.15"]
    assert interp, raw["Mappings"]
    assert maps[interp[0]][3] == build_id(exe), (exe, maps)
    native = []
    for l in raw["Locations"]:
        m = re.match(r"\s*\d+: (0x[0-9a-f]+) M=(\d+)", l)
        if m:
            native.append((int(m.group(1), 16), m.group(2)))
    inside = [(a, k) for a, k in native if k in interp]
    assert len(inside) >= 3, raw["Locations"][:20]
    lo, hi = maps[interp[0]][:2]
    assert all(lo <= a < hi for a, _ in inside), (hex(lo), hex(hi), inside[:5])
    assert len({a for a, _ in inside}) == len(inside)  # one location per address


@pytest.mark.serial  # (conftest.py: every Python process)
def test_interval_writes_one_profile_per_interval(pyprofile, demo, tmp_path):
    """--interval 1 for 3 s: three files named by the strftime pattern at
    each interval's start, each a profile of its own second (go tool pprof
    reads each), together holding every sample."""
    pattern = str(tmp_path / "cpu-%Y%m%dT%H%M%S.pb.gz")
    r = subprocess.run([pyprofile, "-F", "199", "-p", str(demo), "--format", "pprof",
                        "--interval", "1", "-o", pattern, "3"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    assert r.returncode == 0, r.stderr
    files = sorted(f for f in os.listdir(str(tmp_path)) if f.endswith(".pb.gz"))
    assert "3 reports written" in r.stderr, (r.stderr, files)
    assert len(files) == 3 and all(re.match(r"cpu-\d{8}T\d{6}\.pb\.gz$", f) for f in files), files
    stamps = [time.mktime(time.strptime(f[4:19], "%Y%m%dT%H%M%S")) for f in files]
    assert all(0 <= b - a <= 2 for a, b in zip(stamps, stamps[1:])), files
    ms = lambda v, u: float(v) * (1000 if u == "s" else 1)
    total = 0
    for f in files:
        top = go_pprof(["-top", str(tmp_path / f)], tmp_path)
        d = re.search(r"Duration: ([\d.]+)(ms|s)", top)
        assert d and 500 <= ms(*d.groups()) <= 1600, top[:400]
        m = re.search(r"Total samples = ([\d.]+)(ms|s)", top)
        total += ms(*m.groups()) if m else 0
    m = re.search(r"(\d+) samples of", r.stderr)
    want = int(m.group(1)) * 1000 / 199
    assert m and abs(total - want) <= 0.02 * want + len(files), (total, want, r.stderr)
    # without a pattern that names files apart: refused
    r = subprocess.run([pyprofile, "--interval", "1", "-o", str(tmp_path / "one.pb.gz"), "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 2 and "strftime" in r.stderr, r.stderr
