#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gr_modtool add on a copy of the source tree, then configure and build it.

Copies the tracked files of the tree (git ls-files; without git every file
outside build trees and .git), runs gr_modtool add for a sync block with C++
and Python QA, checks that it listed the new files where the build takes
them, configures the copy with CUDA off and builds the block library, the
new block's binding (Ninja: its object file) and C++ QA, and runs the QA.
Exit status 77 (skip) when gr_modtool is not installed.
"""

import argparse
import os
import shutil
import subprocess
import sys

BLOCK = "myprobe_ff"


def tracked_files(src):
    """Paths relative to src of the files to copy."""
    if os.path.isdir(os.path.join(src, ".git")) or os.path.isfile(
            os.path.join(src, ".git")):
        out = subprocess.run(["git", "-C", src, "ls-files", "-z"], check=True,
                             stdout=subprocess.PIPE).stdout
        return [p for p in out.decode().split("\0") if p]
    files = []
    for root, dirs, names in os.walk(src):
        # build trees (in the tree or not) and git metadata stay behind
        dirs[:] = [d for d in dirs if d != ".git" and
                   not os.path.isfile(os.path.join(root, d, "CMakeCache.txt"))]
        files += [os.path.relpath(os.path.join(root, n), src) for n in names]
    return files


def copy_tree(src, dst):
    for rel in tracked_files(src):
        path = os.path.join(src, rel)
        if not os.path.isfile(path):  # deleted in the working tree
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(path, os.path.join(dst, rel))


def run(cmd, cwd):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=cwd, check=True, stdin=subprocess.DEVNULL)


def expect_in(path, text):
    with open(path) as f:
        if text not in f.read():
            sys.exit(f"{path} does not name {text}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--modtool", default="")
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--generator", default="")
    ap.add_argument("--python", default="", help="GNU Radio's python ('' = no bindings)")
    a = ap.parse_args()
    if not a.modtool or not os.path.isfile(a.modtool):
        print("gr_modtool is not installed: skipped")
        return 77

    src = os.path.join(a.work, "src")
    build = os.path.join(a.work, "build")
    shutil.rmtree(a.work, ignore_errors=True)
    copy_tree(a.source, src)

    run([a.modtool, "add", "-t", "sync", "-l", "cpp", "--argument-list", "",
         "--copyright", "gr-transient authors", "--add-cpp-qa", "--add-python-qa",
         "--scm-mode", "no", BLOCK], cwd=src)
    expect_in(os.path.join(src, "lib", "CMakeLists.txt"), f"{BLOCK}_impl.cc")
    expect_in(os.path.join(src, "lib", "CMakeLists.txt"), f"qa_{BLOCK}.cc")
    expect_in(os.path.join(src, "include", "gnuradio", "transient", "CMakeLists.txt"),
              f"{BLOCK}.h")
    expect_in(os.path.join(src, "python", "transient", "bindings", "CMakeLists.txt"),
              f"{BLOCK}_python.cc")
    expect_in(os.path.join(src, "python", "transient", "bindings", "python_bindings.cc"),
              f"bind_{BLOCK}(m);")
    expect_in(os.path.join(src, "grc", "CMakeLists.txt"), f"transient_{BLOCK}.block.yml")
    if not os.path.isfile(os.path.join(src, "python", "transient", f"qa_{BLOCK}.py")):
        sys.exit(f"gr_modtool wrote no python/transient/qa_{BLOCK}.py")

    configure = [a.cmake, "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                 "-DENABLE_CUDA=OFF", "-DENABLE_GNURADIO=ON"]
    if a.generator:
        configure += ["-G", a.generator]
    if a.python:
        configure += ["-DENABLE_PYTHON=ON", f"-DPYTHON_EXECUTABLE={a.python}"]
    else:
        configure += ["-DENABLE_PYTHON=OFF"]
    run(configure, cwd=a.work)

    qa = f"transient_qa_{BLOCK}.cc"
    targets = ["gnuradio-transient", qa]
    if a.python and a.generator == "Ninja":
        targets.append("python/transient/bindings/CMakeFiles/transient_python.dir/"
                       f"{BLOCK}_python.cc.o")
    jobs = str(max(1, min(2, os.cpu_count() or 1)))
    run([a.cmake, "--build", build, "-j", jobs, "--target"] + targets, cwd=a.work)
    run([os.path.join(build, "lib", qa)], cwd=build)
    print(f"gr_modtool add {BLOCK}: added, configured and built")
    return 0


if __name__ == "__main__":
    sys.exit(main())
