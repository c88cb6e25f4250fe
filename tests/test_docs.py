"""The documentation against the tools: man pages, example files, README.

No BPF and no root needed. Checks that
  - every tool built by tools/meson.build has a man page (man/TOOL.8), an
    example file (examples/TOOL_example.txt) and a row in the README's table,
    and that the README lists no tool that is not built;
  - every man page renders without warnings (man --warnings, groff -ww) and
    has bcc's section layout;
  - the options of a man page's OPTIONS section are exactly those of the
    tool's --help, and every option used in its SYNOPSIS and EXAMPLES, in
    the commands of the example files and of the README exists in --help;
  - each example file ends with the tool's current --help text.
--help is read from the tool's source (tools/TOOL.c), so nothing needs to be
built; when the tool is built, the binary's --help must be that same text.
Run with:

    /usr/bin/python3 -m pytest -v tests/test_docs.py
"""
import glob
import os
import re
import shlex
import shutil
import subprocess

import pytest

import interpreters

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("PYBPF_BUILD", os.path.join(REPO, "build"))
MAN_DIR = os.path.join(REPO, "man")
EXAMPLES_DIR = os.path.join(REPO, "examples")

# bcc's man page layout; AUTHOR may come before SEE ALSO
SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "REQUIREMENTS", "OPTIONS", "EXAMPLES",
            "FIELDS", "OVERHEAD", "SOURCE", "OS", "STABILITY", "SEE ALSO"]
OPTIONAL_SECTIONS = {"AUTHOR": "SEE ALSO"}  # section: the one it must precede
UNFINISHED = re.compile(r"PLACEHOLDER|\bTODO\b|\bTBD\b|\bXXX\b")
OPTION_RE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def read(path):
    with open(path, encoding="utf-8") as fp:
        return fp.read()


def tools():
    """Names of the executables tools/meson.build builds."""
    names = re.findall(r"executable\(\s*'([^']+)'", read(os.path.join(REPO, "tools",
                                                                      "meson.build")))
    assert names, "no executable() in tools/meson.build"
    return sorted(names)


TOOLS = tools()
MAN_PAGES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(MAN_DIR, "*.8")))
EXAMPLE_FILES = sorted(os.path.basename(p)
                       for p in glob.glob(os.path.join(EXAMPLES_DIR, "*_example.txt")))


# --- --help --------------------------------------------------------------

def _c_macros():
    """#define NAME "string" from the library's and the tools' sources."""
    macros = {}
    for path in glob.glob(os.path.join(REPO, "lib", "**", "*.h"), recursive=True) + \
            glob.glob(os.path.join(REPO, "tools", "*.[ch]")):
        for name, lit in re.findall(r'^#define\s+([A-Z_][A-Z0-9_]*)\s+"((?:[^"\\]|\\.)*)"',
                                    read(path), re.M):
            macros[name] = lit
    return macros


def _c_unescape(lit):
    return re.sub(r'\\(["\\n t])', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1),
                                                                      m.group(1)), lit)


def help_from_source(tool):
    """The usage_text of tools/TOOL.c: its string literals (and string
    macros) concatenated, as the compiler does."""
    src = read(os.path.join(REPO, "tools", tool + ".c"))
    m = re.search(r'usage_text\[\]\s*=((?:\s*(?:"(?:[^"\\]|\\.)*"|[A-Z_][A-Z0-9_]*))+)\s*;',
                  src)
    assert m, "no usage_text in tools/%s.c" % tool
    macros = _c_macros()
    parts = []
    for lit, ident in re.findall(r'"((?:[^"\\]|\\.)*)"|([A-Z_][A-Z0-9_]*)', m.group(1)):
        if ident:
            assert ident in macros, "usage_text of %s uses unknown macro %s" % (tool, ident)
            lit = macros[ident]
        parts.append(_c_unescape(lit))
    return "".join(parts)


_help_cache = {}


def help_text(tool):
    if tool not in _help_cache:
        _help_cache[tool] = help_from_source(tool)
    return _help_cache[tool]


def help_options(tool):
    """The options --help describes, as a set of spellings ("-p", "--pid")."""
    opts = set()
    for line in help_text(tool).splitlines():
        m = re.match(r"^ {2,}(-[A-Za-z0-9])(?:,\s+(--[a-z][\w-]*))?(?=[\s=]|$)", line)
        if m:
            opts.update(o for o in m.groups() if o)
            continue
        m = re.match(r"^ {2,}(--[a-z][\w-]*)(?=[\s=]|$)", line)
        if m:
            opts.add(m.group(1))
    assert opts, "no options found in the --help of %s" % tool
    return opts


def unknown_options(tool, args):
    """Options in a command's arguments that the tool's --help lacks."""
    known = help_options(tool)
    bad = []
    for arg in args:
        if arg in (">", ">>", "|", "<", "2>", "&&", ";") or arg.startswith((">", "|")):
            break  # the rest is the shell's
        if arg == "--":
            break  # the rest is the command the tool runs
        if not arg.startswith("-") or arg == "-" or re.match(r"^-\d", arg):
            continue
        opt = arg.split("=", 1)[0]
        if opt in known:
            continue
        # bundled short flags, bcc style: -df
        if not opt.startswith("--") and all("-" + c in known for c in opt[1:]):
            continue
        bad.append(arg)
    return bad


# --- man pages -----------------------------------------------------------

def man_path(page):
    return os.path.join(MAN_DIR, page)


def deroff(text):
    """Roff source to plain text, enough for option names and commands."""
    text = re.sub(r"\\f(\[[^\]]*\]|.)", "", text)
    text = text.replace("\\-", "-").replace("\\(em", "--").replace("\\(en", "-")
    text = text.replace("\\e", "\\").replace("\\&", "").replace("\\ ", " ")
    return text


def sections(page):
    """[(name, [lines])] of a man page, in order."""
    out = []
    for line in read(man_path(page)).splitlines():
        m = re.match(r'^\.SH\s+"?([^"]+?)"?\s*$', line)
        if m:
            out.append((m.group(1), []))
        elif out:
            out[-1][1].append(line)
    return out


def section(page, name):
    for sec, lines in sections(page):
        if sec == name:
            return lines
    pytest.fail("%s has no %s section" % (page, name))


def tp_tags(lines):
    """The tag line after each .TP, de-roffed."""
    return [deroff(lines[i + 1]) for i, line in enumerate(lines[:-1])
            if line.strip() == ".TP"]


def example_commands(lines, tool):
    """Commands of an EXAMPLES section: .B lines that run the tool."""
    cmds = []
    for line in lines:
        if line.startswith(".B "):
            cmd = deroff(line[3:]).strip()
            if cmd.split()[:1] == [tool]:
                cmds.append(cmd)
    return cmds


def run_quiet(cmd, **kw):
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", MANWIDTH="80", MANPAGER="cat",
               PAGER="cat")
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=60, **kw)


def page_tool(page):
    return page[:-len(".8")]


# --- the tool set --------------------------------------------------------

@pytest.mark.parametrize("tool", TOOLS)
def test_tool_has_man_page(tool):
    assert tool + ".8" in MAN_PAGES, "tools/meson.build builds %s but man/%s.8 is missing" % (
        tool, tool)


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_has_example_file(tool):
    assert tool + "_example.txt" in EXAMPLE_FILES, (
        "tools/meson.build builds %s but examples/%s_example.txt is missing" % (tool, tool))


def test_no_doc_without_tool():
    orphans = [p for p in MAN_PAGES if page_tool(p) not in TOOLS]
    orphans += [e for e in EXAMPLE_FILES if e[:-len("_example.txt")] not in TOOLS]
    assert not orphans, "documentation of tools that are not built: %s" % orphans


@pytest.mark.parametrize("page", MAN_PAGES)
def test_man_page_installed(page):
    assert page in read(os.path.join(MAN_DIR, "meson.build")), (
        "man/meson.build does not install %s" % page)


@pytest.mark.parametrize("tool", TOOLS)
def test_example_file_installed(tool):
    text = read(os.path.join(EXAMPLES_DIR, "meson.build"))
    assert "'%s'" % tool in text or tool + "_example.txt" in text, (
        "examples/meson.build does not install %s_example.txt" % tool)


@pytest.mark.parametrize("tool", TOOLS)
def test_built_help_is_the_source_help(tool):
    exe = os.path.join(BUILD, "tools", tool)
    if not os.access(exe, os.X_OK):
        pytest.skip("%s is not built" % exe)
    if os.path.getmtime(exe) < os.path.getmtime(os.path.join(REPO, "tools", tool + ".c")):
        pytest.skip("%s is older than tools/%s.c (not rebuilt yet)" % (exe, tool))
    r = run_quiet([exe, "--help"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == help_text(tool)


# --- man pages -----------------------------------------------------------

@pytest.mark.parametrize("page", MAN_PAGES)
def test_man_renders_without_warnings(page):
    if not shutil.which("man"):
        pytest.skip("man (man-db) is not installed")
    for args in (["man", "--warnings", "-l", man_path(page)],
                 ["man", "--warnings=all", "-l", man_path(page)]):
        r = run_quiet(args)
        assert r.returncode == 0 and r.stderr == "", "%s:\n%s" % (" ".join(args), r.stderr)
        assert r.stdout.strip(), "%s printed nothing" % " ".join(args)


@pytest.mark.parametrize("page", MAN_PAGES)
def test_groff_without_warnings(page):
    if not shutil.which("groff"):
        pytest.skip("groff is not installed")
    r = run_quiet(["groff", "-ww", "-man", "-z", man_path(page)])
    assert r.returncode == 0 and r.stderr == "", r.stderr


@pytest.mark.parametrize("page", MAN_PAGES)
def test_man_layout(page):
    tool = page_tool(page)
    text = read(man_path(page))
    first = text.splitlines()[0]
    assert re.match(r'^\.TH %s 8 +"\d{4}-\d\d-\d\d" "USER COMMANDS"$' % re.escape(tool),
                    first), "first line: %r" % first
    names = [name for name, _ in sections(page)]
    expected = list(SECTIONS)
    for opt, before in OPTIONAL_SECTIONS.items():
        if opt in names:
            expected.insert(expected.index(before), opt)
    assert names == expected, "sections of %s: %s, expected %s" % (page, names, expected)
    name_line = " ".join(l for l in section(page, "NAME") if l.strip())
    assert deroff(name_line).startswith(tool + " - "), name_line
    assert not UNFINISHED.search(text), "unfinished text: %s" % UNFINISHED.search(text).group(0)
    source = "\n".join(section(page, "SOURCE"))
    assert "%s_example.txt" % tool in source


@pytest.mark.parametrize("page", MAN_PAGES)
def test_man_options_are_the_help_options(page):
    tool = page_tool(page)
    documented = set()
    for tag in tp_tags(section(page, "OPTIONS")):
        documented.update(OPTION_RE.findall(tag))
    known = help_options(tool)
    assert sorted(documented - known) == [], "in man/%s OPTIONS but not in --help" % page
    assert sorted(known - documented) == [], "in --help but not in man/%s OPTIONS" % page


@pytest.mark.parametrize("page", MAN_PAGES)
def test_man_synopsis_options_exist(page):
    tool = page_tool(page)
    text = deroff(" ".join(l[3:] for l in section(page, "SYNOPSIS") if l.startswith(".B ")))
    used = set()
    for word in OPTION_RE.findall(text):
        # bundled short flags in the first group: [-hfdv]
        if not word.startswith("--") and len(word) > 2:
            used.update("-" + c for c in word[1:])
        else:
            used.add(word)
    known = help_options(tool)
    assert sorted(used - known) == [], "in man/%s SYNOPSIS but not in --help" % page
    # every option, in one of its spellings
    for line in help_text(tool).splitlines():
        m = re.match(r"^ {2,}(-[A-Za-z0-9])?(?:,\s+)?(--[a-z][\w-]*)?(?=[\s=]|$)", line)
        if m and any(m.groups()):
            spellings = {o for o in m.groups() if o}
            assert spellings & used, "%s missing from man/%s SYNOPSIS" % (
                "/".join(sorted(spellings)), page)


@pytest.mark.parametrize("page", MAN_PAGES)
def test_man_examples_use_real_options(page):
    tool = page_tool(page)
    cmds = example_commands(section(page, "EXAMPLES"), tool)
    assert cmds, "man/%s EXAMPLES runs no %s command" % (page, tool)
    for cmd in cmds:
        assert unknown_options(tool, shlex.split(cmd)[1:]) == [], cmd


# --- example files -------------------------------------------------------

def example_path(tool):
    return os.path.join(EXAMPLES_DIR, tool + "_example.txt")


def commands_in_text(text):
    """(tool, args) of every shell command that runs one of the tools: lines
    "# ./TOOL ...", "# TOOL ...", "$ TOOL ..." or, in code blocks, "TOOL ..."."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\s*(?:[#$]\s+)?(?:sudo\s+)?(?:\./|\S*/)?(%s)(\s.*)?$"
                     % "|".join(map(re.escape, TOOLS)), line)
        if not m:
            continue
        rest = (m.group(2) or "").split("#", 1)[0]  # a trailing comment
        try:
            args = shlex.split(rest)
        except ValueError:
            continue
        out.append((m.group(1), args, line.strip()))
    return out


@pytest.mark.parametrize("tool", TOOLS)
def test_example_commands_use_real_options(tool):
    text = read(example_path(tool))
    cmds = [c for c in commands_in_text(text) if c[1] or c[2].startswith(("#", "$"))]
    assert any(t == tool for t, _, _ in cmds), "%s_example.txt runs no %s" % (tool, tool)
    for t, args, line in cmds:
        assert unknown_options(t, args) == [], line


@pytest.mark.parametrize("tool", TOOLS)
def test_example_ends_with_current_help(tool):
    text = read(example_path(tool))
    assert text.startswith("Demonstrations of %s," % tool), text.splitlines()[0]
    m = re.search(r"^USAGE message:\n\n# (?:\./)?%s (?:-h|--help)\n" % re.escape(tool), text,
                  re.M)
    assert m, "%s_example.txt does not end with 'USAGE message:' and the -h output" % tool
    assert text[m.end():].rstrip("\n") == help_text(tool).rstrip("\n"), (
        "the usage message in %s_example.txt is not the current --help" % tool)


# --- README --------------------------------------------------------------

def readme():
    return read(os.path.join(REPO, "README.md"))


def readme_table_tools():
    return re.findall(r"^\|\s*`([\w-]+)`\s*\|", readme(), re.M)


@pytest.mark.parametrize("tool", TOOLS)
def test_readme_table_lists_tool(tool):
    assert tool in readme_table_tools(), "README's tool table has no row for %s" % tool


def test_readme_table_lists_only_built_tools():
    extra = sorted(set(readme_table_tools()) - set(TOOLS))
    assert extra == [], "README's tool table lists tools tools/meson.build does not build"


def test_readme_commands_use_real_options():
    blocks = re.findall(r"^```(?:sh|console|shell)?\n(.*?)^```", readme(), re.M | re.S)
    cmds = [c for b in blocks for c in commands_in_text(b)]
    assert cmds, "no tool commands in the README's code blocks"
    for tool, args, line in cmds:
        assert unknown_options(tool, args) == [], line


# The supported range is written once, in lib/cpython/version.h; these texts
# state it. Other ranges end where a mechanism ended: the built-in offset
# tables (the last offsets/cpython-3.N.offsets) and asyncio's task sets read
# through sys.modules (3.13, the last minor without the published lists).
RANGE_TEXTS = ["README.md", "debian/control"] + sorted(
    os.path.relpath(p, REPO) for p in glob.glob(os.path.join(MAN_DIR, "*.8")))
RANGE_RE = re.compile(r"\b3\.(\d+)t? to 3\.(\d+)t?\b")


def _historical_range_ends():
    tables = glob.glob(os.path.join(REPO, "offsets", "cpython-3.*.offsets"))
    return {max(int(re.search(r"3\.(\d+)", os.path.basename(t)).group(1)) for t in tables), 13}


@pytest.mark.parametrize("path", RANGE_TEXTS)
def test_supported_range_in_docs(path):
    """Each text says the range version.h gives, and no range of CPython
    versions in it ends at another minor than the last supported, unless it
    ends where a mechanism did: after a port (offsets/README.md) a stale
    "3.8 to 3.15" fails here."""
    minors = interpreters.supported_minors()
    first, last = minors[0], minors[-1]
    with open(os.path.join(REPO, path), encoding="utf-8") as fp:
        text = fp.read()
    if "3.%d to 3.%d" % (first, last) not in text:
        pytest.fail("%s does not state the supported range 3.%d to 3.%d" % (path, first, last))
    allowed = _historical_range_ends() | {last}
    for m in RANGE_RE.finditer(text):
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo >= first:  # a range of minors (not "3.1 to 3.2 s")
            if hi not in allowed:
                pytest.fail("%s: \"%s\" (line %d): the last supported minor is 3.%d" % (
                    path, m.group(0), text.count("\n", 0, m.start()) + 1, last))
