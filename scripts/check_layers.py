#!/usr/bin/env python3
"""Check the include layering of the source tree (Python 3 standard library only).

Scans the #include "..." lines of every C, C++ and CUDA file, maps each file to
its folder (layer), prints the folder-level dependency graph and exits with 1
on an include the layering forbids or on a cycle between folders.

Layers, lowest first; an arrow is "may include":
  lib/core/include/transient  public C headers: include nothing internal
  include/gnuradio         GNU Radio block headers -> lib/core/include/transient
  cuda/common              CUDA helpers -> lib/core/include/transient
  cuda/<det>               CUDA launchers and kernels -> cuda/common
  lib/core/common          core helpers -> cuda/common C headers (.h)
  lib/core/<det>           detector core -> lib/core/common, cuda/<det> and
                           cuda/common C headers (the launcher interface, .h)
  lib                      GNU Radio block shells -> public headers, cuda/power
  python                   bindings -> public headers
  apps, bench, tests       programs: may include any library folder
No library folder includes another detector's folder, cuda/ never includes
lib/core, and nothing includes the programs (tests may use the benchmarks' flow graph cases).

Usage: scripts/check_layers.py [--root DIR] [--dot] [--quiet]
"""

import argparse
import os
import re
import sys

SOURCE_EXT = (".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".cuh")
DETECTORS = ("edges", "boxcar", "spiir", "kalman", "power")
# Include roots, in the order the build's targets list them; a quoted include
# is looked up next to the including file first, then under each root.
INCLUDE_ROOTS = ("lib/core/include", "include", "lib/core", "cuda", "tests/core", "lib")
PROGRAMS = ("apps", "bench", "tests")

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def folder_of(rel):
    """Layer of a file given by its path relative to the root, or None."""
    parts = rel.split("/")
    top = parts[0]
    if rel.startswith("lib/core/include/"):
        return "lib/core/include/transient"  # the core's public headers
    if top == "include" and len(parts) > 2:
        return "include/" + parts[1]
    if top == "lib" and len(parts) > 3 and parts[1] == "core":
        return "lib/core/" + parts[2]
    if top == "lib" and len(parts) == 2:
        return "lib"
    if top == "cuda" and len(parts) > 2:
        return "cuda/" + parts[1]
    if top in ("python", "apps", "bench", "tests"):
        return top
    return None


def allowed(src, dst, header):
    """Whether folder src may include a file of folder dst (header: its name)."""
    if src == dst:
        return True
    c_header = header.endswith(".h")
    if src == "lib/core/include/transient":
        return False
    if src == "include/gnuradio":
        return dst == "lib/core/include/transient"
    if src == "cuda/common":
        return dst == "lib/core/include/transient"
    if src.startswith("cuda/"):
        return dst in ("lib/core/include/transient", "cuda/common")
    if src == "lib/core/common":
        return dst == "lib/core/include/transient" or (dst == "cuda/common" and c_header)
    if src.startswith("lib/core/"):
        det = src.split("/")[2]
        if dst in ("lib/core/include/transient", "lib/core/common"):
            return True
        return dst in ("cuda/common", "cuda/" + det) and c_header
    if src == "lib":
        return dst in ("lib/core/include/transient", "include/gnuradio", "cuda/power")
    if src == "python":
        return dst in ("lib/core/include/transient", "include/gnuradio")
    if src in PROGRAMS:
        return dst not in PROGRAMS or (src == "tests" and dst == "bench")
    return False


def source_files(root):
    for d, dirs, files in os.walk(root):
        # Skip hidden folders and build trees (anything CMake configured).
        dirs[:] = sorted(
            x for x in dirs
            if not x.startswith(".")
            and not os.path.exists(os.path.join(d, x, "CMakeCache.txt"))
        )
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                yield os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")


def resolve(root, rel, name):
    """Path (relative to root) that `#include "name"` in file rel names, or None."""
    here = os.path.dirname(rel)
    cand = os.path.normpath(os.path.join(here, name)).replace(os.sep, "/")
    if os.path.isfile(os.path.join(root, cand)):
        return cand, False
    found = []
    for r in INCLUDE_ROOTS:
        p = os.path.normpath(os.path.join(r, name)).replace(os.sep, "/")
        if os.path.isfile(os.path.join(root, p)):
            found.append(p)
    if not found:
        return None, False
    return found[0], len(set(found)) > 1


def find_cycles(graph):
    """Cycles (as lists of folders) of a {folder: set(folder)} graph."""
    cycles, state, stack = [], {}, []

    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                cycles.append(stack[stack.index(w):] + [w])
            elif w not in state:
                visit(w)
        stack.pop()
        state[v] = 2

    for v in sorted(graph):
        if v not in state:
            visit(v)
    return cycles


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                    help="source tree (default: this script's repository)")
    ap.add_argument("--dot", action="store_true", help="print the graph in dot")
    ap.add_argument("--quiet", action="store_true", help="print problems only")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    edges = {}  # (src, dst) -> [("file:line", included file)]
    problems = []
    for rel in source_files(root):
        src = folder_of(rel)
        if src is None:
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target, ambiguous = resolve(root, rel, m.group(1))
                if target is None:
                    continue  # a system or generated header
                where = "%s:%d" % (rel, no)
                if ambiguous:
                    problems.append("ambiguous %s: \"%s\" exists under several include "
                                    "roots" % (where, m.group(1)))
                dst = folder_of(target)
                if dst is None or dst == src:
                    continue
                edges.setdefault((src, dst), []).append((where, target))

    graph = {}
    lines = []
    for (src, dst), uses in sorted(edges.items()):
        bad = [u for u in uses if not allowed(src, dst, u[1])]
        if not bad:
            graph.setdefault(src, set()).add(dst)
            lines.append("ok        %s -> %s (%d)" % (src, dst, len(uses)))
        else:
            graph.setdefault(src, set()).add(dst)
            for where, target in bad:
                problems.append("forbidden %s -> %s: %s includes %s" %
                                (src, dst, where, target))
    for cycle in find_cycles(graph):
        problems.append("cycle     " + " -> ".join(cycle))

    if args.dot:
        print("digraph layers {")
        for (src, dst) in sorted(edges):
            print('  "%s" -> "%s";' % (src, dst))
        print("}")
    elif not args.quiet:
        print("\n".join(lines))
    for p in problems:
        print(p)
    print("layers: %d folder edges, %d problems" % (len(edges), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
