#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails on an #include that runs against the layers, or on an include cycle.

Layers (lib/meson.build): tools -> bpf -> cpython -> sys, and bpf -> report.
A layer may include any layer below it; report stands alone but for
sys/text_escape.h, the one escaping of target text every text sink shares.
lib/abi/ is the floor: the data layouts the BPF programs (bpf_c/) and user
space share, declarations only, which every layer but report may use;
bpf_c/ itself is BPF code, which no user-space layer includes.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOWED = {
    "tools": {"tools", "bpf", "cpython", "report", "sys", "abi"},
    "bpf": {"bpf", "cpython", "report", "sys", "abi"},
    "cpython": {"cpython", "sys", "abi", "offsets"},
    "report": {"report"},
    "sys": {"sys", "abi"},
    "bpf_c": {"bpf_c", "abi"},
    "abi": {"abi"},
}
# the only file of another layer report may include
REPORT_MAY_USE = {"lib/sys/text_escape.h"}
# generated files and the version header built by meson
GENERATED = {"pybpf_version.h", "profile.pb-c.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    parts = rel.split("/")
    if parts[0] == "lib":
        return parts[1]
    return parts[0]


def sources():
    for top in ("lib", "tools", "bpf_c"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def resolve(rel, inc):
    """The file an include names, relative to ROOT, or None if generated."""
    if inc in GENERATED:
        return None
    here = os.path.join(os.path.dirname(rel), inc)
    if os.path.exists(os.path.join(ROOT, here)):
        return os.path.normpath(here)  # next to the includer (tools/cli.h, bpf_c/, lib/abi/)
    for base in ("lib", ""):
        cand = os.path.join(base, inc)
        if os.path.exists(os.path.join(ROOT, cand)):
            return os.path.normpath(cand)
    return "?" + inc


def main():
    errors, graph = [], {}
    for rel in sorted(sources()):
        text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        src = layer_of(rel)
        graph[rel] = []
        for inc in INCLUDE.findall(text):
            target = resolve(rel, inc)
            if target is None:
                continue
            if target.startswith("?"):
                errors.append("%s: includes %s, which is no file of the tree" % (rel, inc))
                continue
            dst = layer_of(target)
            # lib/abi/ is also BPF text (bpf_c/embed_text.py inlines it), whose
            # includes resolve next to the includer: it names its siblings bare
            if rel.startswith("lib/") and "/" not in inc and not rel.startswith("lib/abi/"):
                errors.append('%s: #include "%s" does not name its layer (write "%s")'
                              % (rel, inc, os.path.relpath(target, "lib")))
            if dst not in ALLOWED.get(src, set()) and not (src == "report" and target in REPORT_MAY_USE):
                errors.append("%s (%s) includes %s (%s): against the layers" % (rel, src, target, dst))
            graph[rel].append(target)
    # include cycles between files
    state = {}

    def visit(node, path):
        state[node] = 1
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                cyc = path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
                errors.append("include cycle: " + " -> ".join(cyc))
            elif nxt in graph and not state.get(nxt):
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in graph:
        if not state.get(node):
            visit(node, [node])
    # a .c and its own .h count as one unit: a cycle through pairs
    units = {}
    for rel, incs in graph.items():
        u = os.path.splitext(rel)[0]
        units.setdefault(u, set()).update(os.path.splitext(t)[0] for t in incs
                                          if os.path.splitext(t)[0] != u)
    ustate = {}

    def uvisit(node, path):
        ustate[node] = 1
        for nxt in sorted(units.get(node, ())):
            if ustate.get(nxt) == 1:
                errors.append("cycle between units: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt in units and not ustate.get(nxt):
                uvisit(nxt, path + [nxt])
        ustate[node] = 2

    for node in sorted(units):
        if not ustate.get(node):
            uvisit(node, [node])
    for e in errors:
        print("check_layers: " + e)
    print("check_layers: %d files, %d includes, %d problems"
          % (len(graph), sum(len(v) for v in graph.values()), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
