"""The example files against what the tools print now.

No BPF and no root needed: the texts are checked against the sources.
  - every usage block quoted in an example file ("Usage: TOOL ...") is the
    tool's current --help, line for line (up to a "[...]" that cuts it);
  - every line an example quotes from a tool's stderr ("TOOL: ..." and
    "WARNING: ...") can be printed by the current sources: it matches a
    format string of lib/ or tools/ (C string literals, adjacent ones
    joined as the compiler does, printf conversions turned into patterns),
    each %s filled with text another literal explains (or a name, where
    the format itself says enough), so a reworded or removed message fails
    here, and so does an old wording passed through a %s;
  - no line quoted from a tool says "1 runs": every plural(n, ONE, MANY)
    of the sources gives ONE for a count of 1.
Run with:

    /usr/bin/python3 -m pytest -v tests/test_examples.py
"""
import functools
import glob
import os
import re

import pytest

from test_docs import EXAMPLES_DIR, REPO, TOOLS, help_text

EXAMPLE_FILES = sorted(glob.glob(os.path.join(EXAMPLES_DIR, "*_example.txt")))
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
# printf conversions as the sources use them
CONVERSION = re.compile(r"%(%|[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L)?"
                        r"([diouxXeEfgGcsp]))")
# a format whose own text is at least this many letters may hold a word of
# free text in its %s (a process name, a path); in shorter ones ("%s: %s")
# and for text of several words, the %s must be text other literals explain
SUBSTANTIAL = 10
DEPTH = 6


def read(path):
    with open(path, encoding="utf-8") as fp:
        return fp.read()


def _unescape(lit):
    def one(m):
        e = m.group(1)
        if e[0] == "x":
            return chr(int(e[1:], 16))
        if e[0].isdigit():
            return chr(int(e, 8))
        return {"n": "\n", "t": "\t", "e": "\x1b"}.get(e, e)
    return re.sub(r"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)", one, lit)


def _strip_comments(src):
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


@functools.lru_cache(maxsize=None)
def source_literals():
    """Every C string literal of lib/ and tools/, adjacent ones joined, split
    at newlines: the pieces of text a line of output is made of."""
    out = set()
    paths = glob.glob(os.path.join(REPO, "lib", "**", "*.[ch]"), recursive=True) + \
        glob.glob(os.path.join(REPO, "tools", "*.[ch]"))
    for path in paths:
        src = _strip_comments(read(path))
        # a run of literals separated only by blanks (and macros we cannot
        # expand, which end the run)
        for run in re.finditer(r'"(?:[^"\\\n]|\\.)*"(?:\s*"(?:[^"\\\n]|\\.)*")*', src):
            text = "".join(_unescape(m) for m in LITERAL.findall(run.group(0)))
            for piece in text.split("\n"):
                if piece.strip():
                    out.add(piece)
    return frozenset(out)


def _pattern(fmt):
    """(regex, letters of literal text, number of %s) of a printf format."""
    parts, pos, slots = [], 0, 0
    for m in CONVERSION.finditer(fmt):
        parts.append(re.escape(fmt[pos:m.start()]))
        conv = m.group(2)
        if m.group(1) == "%":
            parts.append("%")
        elif conv == "s":
            parts.append("(.*?)")
            slots += 1
        elif conv in "diu":
            parts.append(r" *-?\d+")
        elif conv in "xXp":
            parts.append(r" *(?:0x)?[0-9a-fA-F]+")
        elif conv in "eEfgG":
            parts.append(r" *-?(?:\d+(?:\.\d*)?|inf|nan)(?:e[-+]\d+)?")
        elif conv == "c":
            parts.append(".")
        else:
            parts.append(".*?")
        pos = m.end()
    parts.append(re.escape(fmt[pos:]))
    letters = len(re.findall(r"[A-Za-z]", CONVERSION.sub("", fmt)))
    return "".join(parts), letters, slots


@functools.lru_cache(maxsize=None)
def formats():
    """[(compiled regex, letters, slots)] of every literal that can be a line
    or a part of one, the most specific first."""
    out = []
    for lit in source_literals():
        regex, letters, slots = _pattern(lit)
        out.append((re.compile(regex, re.S), letters, slots))
    out.sort(key=lambda f: -f[1])
    return out


def _slot_ok(text, depth, substantial):
    """A %s of a format: a name or a path (one word) where the format says
    enough around it, else text explained in its turn."""
    if substantial and not re.search(r"\s", text):
        return True
    return explained(text, depth + 1)


@functools.lru_cache(maxsize=None)
def explained(text, depth=0):
    """Whether text can be made from the sources' literals: it starts with
    what a format prints, each %s of it a tool's name, a number, one word
    in a substantial format (a name, a path) or text explained the same way,
    and the rest (a line printed in parts) is explained too; DEPTH levels
    deep."""
    if not text or text in TOOLS or re.fullmatch(r"[\d.,:; ()/%-]*", text):
        return True
    if depth >= DEPTH:
        return False
    for regex, letters, slots in formats():
        for m in (regex.fullmatch(text), regex.match(text)):
            if not m or not m.end():
                continue
            if not all(_slot_ok(g, depth, letters >= SUBSTANTIAL) for g in m.groups()):
                continue
            if m.end() == len(text) or explained(text[m.end():], depth + 1):
                return True
    return False


def quoted_tool_lines(path):
    """(line number, line) of the lines an example quotes from a tool's stderr."""
    names = "|".join(map(re.escape, TOOLS))
    out = []
    for n, line in enumerate(read(path).splitlines(), 1):
        if re.match(r"^(?:%s): \S" % names, line) or line.startswith("WARNING: "):
            out.append((n, line))
    return out


def usage_blocks(path):
    """(line number, [lines]) of each quoted --help: from "Usage: TOOL" to
    the end of the file or a "[...]" line."""
    lines = read(path).splitlines()
    names = "|".join(map(re.escape, TOOLS))
    blocks = []
    for i, line in enumerate(lines):
        m = re.match(r"^Usage: (%s)\b" % names, line)
        if not m:
            continue
        block = []
        for rest in lines[i:]:
            if rest.strip() == "[...]":
                break
            block.append(rest)
        blocks.append((i + 1, m.group(1), block))
    return blocks


@functools.lru_cache(maxsize=None)
def plural_pairs():
    """{MANY: ONE} of every plural(n, "ONE", "MANY") in the sources."""
    pairs = {}
    for path in glob.glob(os.path.join(REPO, "lib", "**", "*.c"), recursive=True) + \
            glob.glob(os.path.join(REPO, "tools", "*.c")):
        for one, many in re.findall(r'\bplural\([^;]*?,\s*"([^"]*)",\s*"([^"]*)"\)',
                                    read(path), re.S):
            pairs[many] = one
    return pairs


def example_id(path):
    return os.path.basename(path)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=example_id)
def test_usage_blocks_are_current_help(path):
    blocks = usage_blocks(path)
    assert blocks, "%s quotes no usage message" % example_id(path)
    for lineno, tool, block in blocks:
        help_lines = help_text(tool).rstrip("\n").splitlines()
        while block and not block[-1].strip():
            block.pop()
        got = block[:len(help_lines)]
        assert got == help_lines[:len(got)], (
            "%s:%d: the usage block is not %s's current --help" % (example_id(path), lineno, tool))


def test_sources_give_formats():
    """The parsing above finds what it must (guards against a change of the
    sources' style making every line pass or fail for a wrong reason)."""
    assert explained("pyoffcpu: 2178 switches off CPU of 1 Python process (0 exited during "
                     "the run); 2178 with Python frames, 0 in threads without a Python "
                     "thread state")
    assert not explained("pyoffcpu: 2178 switches off CPU of 1 Python process (0 exited "
                         "during the run); 2178 with Python frames, 0 in threads without a "
                         "Python thread state, then an invented tail")
    assert not explained("pyprofile: an invented message of 3 samples")
    assert plural_pairs().get("runs") == "run"


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=example_id)
def test_quoted_lines_are_printed_now(path):
    lines = quoted_tool_lines(path)
    bad = ["%d: %s" % (n, line) for n, line in lines if not explained(line)]
    assert not bad, "%s quotes lines the tools do not print now:\n%s" % (
        example_id(path), "\n".join(bad))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=example_id)
def test_quoted_lines_say_one_in_the_singular(path):
    pairs = plural_pairs()
    # longest first: "1 switches off CPU" before "1 switches"
    manys = sorted((m for m in pairs if re.match(r"^[a-z]", m)), key=len, reverse=True)
    one_many = re.compile(r"(?<![\d.])1 (%s)\b" % "|".join(map(re.escape, manys)))
    bad = []
    for n, line in quoted_tool_lines(path):
        for m in one_many.finditer(line):
            bad.append("%d: ...%s... (1 %s)" % (n, m.group(0), pairs[m.group(1)]))
    assert not bad, "%s says a count of 1 in the plural:\n%s" % (example_id(path),
                                                                  "\n".join(bad))
