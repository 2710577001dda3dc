#!/usr/bin/env python3
"""Finds import cycles between the modules of each crate in crates/, and fails if there is one.

A module's imports are the `crate::`, `super::` and `self::` paths in its code (`use` lines and
paths written inline; comments are skipped). Each import is an edge between two modules; an
edge between a module and one of its own descendants is left out, because a parent declares
and re-exports its children and a child may use its parent's shared types. Any other edge is
lifted to the two siblings below the modules' lowest common ancestor (`cc::bbr::probe_bw` ->
`cc::bbr_common::gain` is the edge `cc::bbr` -> `cc::bbr_common`). Within every folder the
siblings must form a directed acyclic graph: a cycle means two modules each need the other and
neither is the lower layer.

    python3 scripts/import_cycles.py            # every crate; exit 1 and the cycles if any
    python3 scripts/import_cycles.py --graph    # also print each folder's sibling edges
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE = re.compile(r"\buse\s+([^;]*);", re.S)


def modules(src):
    """Maps each module path (a tuple, () for the crate root) to its file."""
    found = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)[:-3].split(os.sep)
            if rel[-1] in ("lib", "main", "mod"):
                rel = rel[:-1]
            found[tuple(rel)] = os.path.join(dirpath, f)
    return found


TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_0-9]+)\s*([;{])")


def code_of(path):
    """The file's text without comments and without its inline `#[cfg(test)] mod ... { }`."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())
    while True:
        m = next((m for m in TEST_MOD.finditer(text) if m.group(2) == "{"), None)
        if m is None:
            return text
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        text = text[: m.start()] + text[i:]


def test_modules(codes):
    """Modules declared `#[cfg(test)] mod name;`: test code, left out of the graph with their
    descendants (tests may reach across layers)."""
    out = set()
    for here, code in codes.items():
        for m in TEST_MOD.finditer(code):
            if m.group(2) == ";":
                out.add(here + (m.group(1),))
    return out



def inline_modules(code, here):
    """Modules declared inline in a file (`mod tests { ... }`) are parts of the file's module."""
    return {here + (m,) for m in re.findall(r"\bmod\s+([a-z_0-9]+)\s*\{", code)}


def flatten(tree, prefix=""):
    """The paths of a use tree: `a::{b, c::{d, e}}` gives a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+[A-Za-z_][A-Za-z0-9_]*", "", tree))
    depth, start, parts = 0, 0, []
    brace = tree.find("{")
    if brace < 0:
        yield prefix + tree
        return
    head, body = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    for i, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    for part in parts:
        if part and part != "self":
            yield from flatten(part, prefix + head)
        elif part == "self":
            yield prefix + head.rstrip(":")


def resolve(kind, segments, here, known):
    """The deepest known module a path names, as a tuple; None when it leaves the crate."""
    if kind == "crate":
        base = ()
    elif kind == "self":
        base = here
    else:
        base = here[:-1]
    segments = list(segments)
    while segments and segments[0] == "super":
        if not base:
            return None
        base = base[:-1]
        segments.pop(0)
    target = base
    for seg in segments:
        if target + (seg,) in known:
            target = target + (seg,)
        else:
            break
    return target


def edges_of(crate_src):
    files = modules(crate_src)
    codes = {here: code_of(path) for here, path in files.items()}
    tests = test_modules(codes)
    codes = {h: c for h, c in codes.items() if not any(h[: len(t)] == t for t in tests)}
    known = set(files)
    for here, code in codes.items():
        known |= inline_modules(code, here)
    edges = set()
    for here, code in codes.items():
        paths = []
        for tree in USE.findall(code):
            for path in flatten(tree):
                m = PATH.match(path)
                if m:
                    paths.append((m.group(1), m.group(2)))
        paths += PATH.findall(code)
        for kind, rest in paths:
            segs = [s for s in rest.split("::") if s]
            target = resolve(kind, segs, here, known)
            if target is None:
                continue
            a, b = here, target
            if a[: len(b)] == b or b[: len(a)] == a:
                continue  # ancestor and descendant
            n = 0
            while a[n] == b[n]:
                n += 1
            edges.add((a[: n + 1], b[: n + 1]))
    return edges


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def name(module):
    return "::".join(module) or "crate"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", action="store_true", help="print every sibling edge")
    args = ap.parse_args()
    failed = False
    crates = os.path.join(ROOT, "crates")
    for crate in sorted(os.listdir(crates)):
        src = os.path.join(crates, crate, "src")
        if not os.path.isdir(src):
            continue
        edges = edges_of(src)
        if args.graph:
            for a, b in sorted(edges):
                print(f"{crate}: {name(a)} -> {name(b)}")
        for comp in cycles(edges):
            failed = True
            print(f"{crate}: import cycle between " + ", ".join(name(m) for m in comp))
    if failed:
        sys.exit(1)
    print("no import cycles")


if __name__ == "__main__":
    main()
