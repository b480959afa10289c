#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Install the build tree into a temporary prefix and check what a user gets:

* the documentation in share/doc/gr-transient (README, LICENSE, CHANGELOG,
  MANIFEST and every page of docs/), a man page per program that `man` finds;
* every path named by the GRC block documentation, the docstrings of the
  installed package (modules and bindings) and the --help of every program
  exists under the prefix (paths are written relative to it: share/...);
* `--version` of every program and gnuradio.transient.__version__ give the
  project version;
* the uninstall script removes every installed file again.

usage: check_install.py BUILD_DIR SOURCE_DIR VERSION man|no-man
(no-man: the build made no man pages, as without help2man)
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROGRAMS = ("transient-detect", "transient-demo", "transient-bench",
            "transient-flowgraph-bench")
DETECTORS = ("edges", "boxcar", "spiir", "kalman")
# A path a user is told about: under the prefix (share/..., optionally written
# from /usr/local or /usr), or a source-tree path (docs/..., examples/...) that
# an installed text must not name.
PATH_RE = re.compile(r"(?<![\w/.-])(?:/usr(?:/local)?/)?"
                     r"((?:share|docs|examples)/[\w.*/-]*[\w*])")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def check_paths(prefix, where, text):
    text = re.sub(r"-\n\s*", "-", text)  # argparse wraps lines at hyphens
    for m in PATH_RE.finditer(text):
        path = m.group(1)
        if not glob.glob(os.path.join(prefix, path)):
            fail("%s names %s, which is not installed under the prefix" % (where, path))


def run(cmd, env, **kw):
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300, **kw)


def main():
    build, source, version, man = sys.argv[1:5]
    manifest = os.path.join(build, "install_manifest.txt")
    saved = manifest + ".check_install"
    had_manifest = os.path.exists(manifest)
    if had_manifest:  # the manifest of the user's own install stays as it was
        shutil.copy2(manifest, saved)
    prefix = tempfile.mkdtemp(prefix="tr_install_")
    try:
        r = subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if r.returncode != 0:
            fail("cmake --install: " + r.stderr)
            return
        shutil.copy2(manifest, os.path.join(prefix, "manifest.txt"))
        check_prefix(prefix, source, version, man == "man")
        r = run(["cmake", "-DMANIFEST=" + os.path.join(prefix, "manifest.txt"), "-P",
                 os.path.join(source, "cmake", "uninstall.cmake")], os.environ)
        if r.returncode != 0:
            fail("uninstall: " + r.stderr)
        left = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs
                if f != "manifest.txt"]
        if left:
            fail("uninstall left %d files, e.g. %s" % (len(left), left[0]))
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
        if had_manifest:
            os.replace(saved, manifest)
        elif os.path.exists(manifest):
            os.remove(manifest)


def check_prefix(prefix, source, version, man):
    doc = os.path.join(prefix, "share", "doc", "gr-transient")
    wanted = ["README.md", "LICENSE", "CHANGELOG.md", "MANIFEST.md"]
    wanted += [os.path.basename(p) for p in glob.glob(os.path.join(source, "docs", "*.md"))]
    for name in wanted:
        if not os.path.isfile(os.path.join(doc, name)):
            fail("share/doc/gr-transient/%s not installed" % name)

    inits = glob.glob(os.path.join(prefix, "lib*", "python3*", "*-packages", "gnuradio",
                                   "transient", "__init__.py"))
    if len(inits) != 1:
        fail("no single installed gnuradio/transient package: %s" % inits)
        return
    pkg = os.path.dirname(inits[0])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(pkg))
    env["PATH"] = os.path.join(prefix, "bin") + os.pathsep + env.get("PATH", "")
    env["MANPATH"] = os.path.join(prefix, "share", "man")
    # the installed libraries, not those of an earlier install on this machine
    libdirs = sorted({os.path.dirname(p) for p in
                      glob.glob(os.path.join(prefix, "lib*", "**", "libtransient.so*"),
                                recursive=True)})
    env["LD_LIBRARY_PATH"] = os.pathsep.join(libdirs + [env.get("LD_LIBRARY_PATH", "")])

    for yml in sorted(glob.glob(os.path.join(prefix, "share", "gnuradio", "grc", "blocks",
                                             "transient_*.yml"))):
        with open(yml) as f:
            check_paths(prefix, os.path.basename(yml), f.read())
    for py in sorted(glob.glob(os.path.join(pkg, "*.py"))):
        with open(py) as f:
            check_paths(prefix, "gnuradio/transient/" + os.path.basename(py), f.read())
    # Docstrings of the bindings and of everything the package exports.
    r = run([sys.executable, "-c",
             "import inspect\nfrom gnuradio import transient\n"
             "print(transient.__version__)\n"
             "for n in dir(transient):\n"
             "    o = getattr(transient, n)\n"
             "    print(inspect.getdoc(o) or '')\n"
             "    for m in dir(o) if inspect.isclass(o) else ():\n"
             "        print(inspect.getdoc(getattr(o, m, None)) or '')\n"],
            env, cwd=prefix)
    if r.returncode != 0:
        fail("import of the installed package: " + r.stderr)
    else:
        if r.stdout.split("\n", 1)[0] != version:
            fail("gnuradio.transient.__version__ is %r, not %s" %
                 (r.stdout.split("\n", 1)[0], version))
        check_paths(prefix, "the docstrings of gnuradio.transient", r.stdout)

    for prog in PROGRAMS:
        exe = os.path.join(prefix, "bin", prog)
        if not os.access(exe, os.X_OK):
            fail("bin/%s not installed" % prog)
            continue
        r = run([exe, "--version"], env, cwd=prefix)
        if r.returncode != 0 or r.stdout.strip() != "%s %s" % (prog, version):
            fail("%s --version: status %d, %r" % (prog, r.returncode, r.stdout + r.stderr))
        helps = [[exe, "--help"]]
        if prog == "transient-detect":
            helps += [[exe, d, "--help"] for d in DETECTORS]
        if prog == "transient-bench":
            helps += [[exe, "--detector", d, "--help"] for d in DETECTORS]
        for cmd in helps:
            r = run(cmd, env, cwd=prefix)
            if r.returncode != 0 or "usage" not in r.stdout:
                fail("%s: status %d, %r" % (" ".join(cmd[1:]), r.returncode, r.stderr))
            check_paths(prefix, prog + " " + " ".join(cmd[1:]), r.stdout)
        if not man:
            continue
        r = run(["man", "-w", prog], env)
        page = os.path.join(prefix, "share", "man", "man1", prog + ".1")
        if r.returncode != 0 or os.path.realpath(r.stdout.strip()) != os.path.realpath(page):
            fail("man -w %s: %r (status %d)" % (prog, r.stdout + r.stderr, r.returncode))
        elif version not in open(page).read():
            fail("the man page of %s does not give version %s" % (prog, version))


if __name__ == "__main__":
    main()
    if failures:
        print("%d problem(s)" % len(failures))
        sys.exit(1)
    print("installed tree: documentation, man pages, paths, versions and uninstall OK")
