#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A help2man include file with the --help of each detector of a program, so
that its man page holds every option, not only the top-level usage.

    man_include.py OUT app APP.py          argparse program: its subcommands
    man_include.py OUT bench EXE D1 D2 ..  transient-bench: --detector D --help
"""

import argparse
import importlib.util
import subprocess
import sys


def roff(text):
    """Preformatted roff of a plain text (backslashes, leading dots and quotes)."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return ".nf\n" + "\n".join(out) + "\n.fi\n"


def app_sections(path):
    spec = importlib.util.spec_from_file_location("tr_man_app", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    parser = mod.build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [(name, p.format_help()) for a in subs for name, p in a.choices.items()]


def bench_sections(exe, detectors):
    return [(d, subprocess.run([exe, "--detector", d, "--help"], check=True,
                               stdout=subprocess.PIPE, universal_newlines=True).stdout)
            for d in detectors]


def main():
    out, kind = sys.argv[1:3]
    if kind == "app":
        sections = app_sections(sys.argv[3])
    else:
        sections = bench_sections(sys.argv[3], sys.argv[4:])
    with open(out, "w") as f:
        f.write("[DETECTORS]\n")
        for name, text in sections:
            f.write(".SS %s\n%s" % (name, roff(text)))


if __name__ == "__main__":
    main()
