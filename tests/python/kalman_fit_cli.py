#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""transient-kalman-fit as installed (the generated program, argv[1]) end to
end: --help, --version, a labelled recording of AR(2) bursts in AR(2) noise
fitted (orders, the ROC table, a model file the detector loads and that
transient-detect kalman (argv[2]) runs with), the refusal to replace it, a
bad input. Exit 0 when all hold; the first failure is printed, exit 1."""

import os
import subprocess
import sys
import tempfile

import numpy as np
from gnuradio import transient
from gnuradio.transient import kalman_signals as ks


def check(cond, what):
    if not cond:
        sys.stderr.write("FAIL: %s\n" % what)
        sys.exit(1)


def main(prog, detect):
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([prog, "--help"], capture_output=True, text=True)
        check(r.returncode == 0 and "--labels" in r.stdout and "--force" in r.stdout,
              "--help")
        r = subprocess.run([prog, "--version"], capture_output=True, text=True)
        check(r.returncode == 0 and r.stdout.startswith("transient-kalman-fit "),
              "--version: %r" % r.stdout)
        M = 92
        on = np.arange(2000, 398000, 1500)
        x, on = ks.gaussian_bursts(400000, on, M=M, noise_ar=[1.2, -0.5], noise_var=1.0,
                                   target_ar=[0.3, -0.6], target_var=0.5, seed=21)
        data = os.path.join(d, "rec.f32")
        x.tofile(data)
        labels = os.path.join(d, "rec.csv")
        with open(labels, "w") as f:
            f.write("start,stop\n" + "".join("%d,%d\n" % (o, o + M - 1) for o in on))
        model = os.path.join(d, "rec.trkalm")
        r = subprocess.run([prog, data, "-o", model, "--labels", labels], capture_output=True,
                           text=True)
        sys.stdout.write(r.stdout + r.stderr)
        check(r.returncode == 0, "fit: exit %d" % r.returncode)
        check("noise: AR(2)" in r.stdout and "burst: AR(2)" in r.stdout, "orders")
        rows = [l.split() for l in r.stdout.splitlines() if l.strip().startswith("1e-0")]
        check(len(rows) == 3 and all(float(row[1]) > float(row[5]) and
                                     float(row[3]) > float(row[5]) for row in rows),
              "ROC: the Kalman detector above the energy detector at every rate")
        alpha = [l.split()[2] for l in r.stdout.splitlines() if l.startswith("alpha = ")]
        check(len(alpha) == 1, "alpha printed")
        m = transient.kalman_model_load(model)
        check((m["Q"], m["M"]) == (2, M), "model file: Q, M")
        before = os.stat(model).st_mtime_ns
        r = subprocess.run([prog, data, "-o", model, "--labels", labels], capture_output=True,
                           text=True)
        check(r.returncode == 2 and "exists" in r.stderr and
              os.stat(model).st_mtime_ns == before, "existing output kept without --force")
        r = subprocess.run([prog, data + ".missing", "-o", model + "2", "--labels", labels],
                           capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and ".missing" in r.stderr and
              not os.path.exists(model + "2"), "missing input: %r" % r.stderr)
        r = subprocess.run([detect, "kalman", data, "--model-file", model, "--Ns", "30",
                            "--alpha", alpha[0], "--backend", "cpu", "-o", "-", "-q"], capture_output=True, text=True)
        check(r.returncode == 0 and len(r.stdout.splitlines()) > 10,
              "transient-detect kalman with the fitted model: %r" % r.stderr)
    print("transient-kalman-fit end to end: OK")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
