#!/usr/bin/env python3
"""Opcode totals and hot basic blocks of an Nsight Compute SASS listing.

    sass_summary.py [NAME=]ncu_sass.txt ...

Reads the per-instruction listing that boxcar_vs_aa.sh writes with
TR_PROFILE_SASS=1 (`ncu --page source --print-source sass`, one kernel) and
prints, from the column `Instructions Executed` (warp instructions):
  - the total and the opcode totals (opcode without modifiers, predicates
    dropped), one column per listing, so that two builds compare line by line;
  - per listing, the basic blocks (runs of consecutive instructions with the
    same execution count) holding at least 0.5 % of the executed instructions,
    with their instruction range, executions, length and opcode mix: this is
    how a kernel's phases (unrolled stages, scan, stores) show up without
    source correlation.
The listings are several MB; this summary is what a results folder keeps.
"""
import collections
import sys

SRC_COL, SRC_END = 19, 84  # the Source column of ncu's fixed-width table
EXECUTED = 3               # Instructions Executed: 4th number after Source
BLOCK_SHARE = 0.005


def parse(path):
    """(opcode, executions) per SASS instruction, in address order."""
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith("0x"):
                continue
            words = line[SRC_COL:SRC_END].split()
            nums = line[SRC_END:].split()
            if not words or len(nums) <= EXECUTED:
                sys.exit("%s: not an ncu SASS listing line: %s" % (path, line.strip()))
            op = words[1] if words[0].startswith("@") else words[0]
            rows.append((op.split(".")[0], int(nums[EXECUTED])))
    if not rows:
        sys.exit("%s: no SASS instruction lines" % path)
    return rows


def blocks(rows):
    """[first index, last index, executions, Counter of opcodes]"""
    out = []
    for i, (op, n) in enumerate(rows):
        if out and out[-1][2] == n and out[-1][1] == i - 1:
            out[-1][1] = i
            out[-1][3][op] += 1
        else:
            out.append([i, i, n, collections.Counter({op: 1})])
    return out


def main(argv):
    if not argv:
        sys.exit(__doc__)
    named = [a.split("=", 1) if "=" in a else [a, a] for a in argv]
    data = [(name, parse(path)) for name, path in named]
    totals = [(name, sum(n for _, n in rows)) for name, rows in data]
    ops = [collections.Counter() for _ in data]
    for c, (_, rows) in zip(ops, data):
        for op, n in rows:
            c[op] += n
    order = sorted(set().union(*ops), key=lambda o: -max(c[o] for c in ops))
    print("warp instructions executed (ncu 'Instructions Executed'), by opcode")
    print("%-10s" % "opcode" + "".join("%26s" % name for name, _ in totals))
    print("%-10s" % "total" + "".join("%18d (100%%) " % t for _, t in totals))
    for op in order:
        print("%-10s" % op + "".join("%18d %6.1f%%" % (c[op], 100.0 * c[op] / t)
                                     for c, (_, t) in zip(ops, totals)))
    for (name, rows), (_, t) in zip(data, totals):
        print("\n%s: basic blocks with >= %.1f%% of the instructions (%d SASS instructions)"
              % (name, 100 * BLOCK_SHARE, len(rows)))
        shown = 0
        for first, last, n, mix in blocks(rows):
            w = n * (last - first + 1)
            if w < BLOCK_SHARE * t:
                continue
            shown += w
            print("  %5d-%5d  executions %9d  length %4d  %5.1f%%  %s"
                  % (first, last, n, last - first + 1, 100.0 * w / t,
                     " ".join("%s:%d" % kv for kv in mix.most_common(9))))
        print("  shown: %.1f%% of %d" % (100.0 * shown / t, t))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
