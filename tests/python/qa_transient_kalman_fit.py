#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of transient-kalman-fit (apps/transient_kalman_fit.py) in process:
labelled and ranged recordings (samples and seconds, raw and SigMF), the
held-back split, the ROC it prints, and bad inputs (a one-line error naming
the file, exit status 2, nothing written, an existing output kept without
--force)."""

import io
import os
import tempfile

import numpy as np
from gnuradio import gr_unittest
from gnuradio import transient
from gnuradio.transient import kalman_signals as ks
from gnuradio.transient import sigmf

from app_module import load_app  # tests/python

tool = load_app("transient_kalman_fit.py")
M = 64


def recording(folder, n=200000, spacing=1200, seed=4):
    """Raw float32 recording of AR(1) bursts in AR(2) noise and its labels
    CSV (with a header): (data path, labels path, bursts)."""
    on = np.arange(3000, n - M, spacing)
    x, on = ks.gaussian_bursts(n, on, M=M, noise_ar=[1.2, -0.5], noise_var=1.0,
                               target_ar=[0.8], target_var=0.6, seed=seed)
    data = os.path.join(folder, "rec.f32")
    x.tofile(data)
    labels = os.path.join(folder, "rec.csv")
    with open(labels, "w") as f:
        f.write("start,stop\n")
        for o in on:
            f.write("%d,%d\n" % (o, o + M - 1))
    return data, labels, [(int(o), int(o) + M - 1) for o in on]


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    rc = tool.run(argv, out, err)
    return rc, out.getvalue(), err.getvalue()


class qa_transient_kalman_fit(gr_unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.data, self.labels, self.bursts = recording(self.dir)
        self.model = os.path.join(self.dir, "model.trkalm")

    def tearDown(self):
        self.tmp.cleanup()

    def assertError(self, argv, rc, *names):
        code, out, err = run(argv)
        self.assertEqual(code, rc, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertTrue(err.startswith("transient-kalman-fit: error: "), err)
        for name in names:
            self.assertIn(name, err)
        self.assertFalse(os.path.exists(self.model))
        self.assertEqual([f for f in os.listdir(self.dir) if f.startswith(".transient")], [])

    def test_001_labels(self):
        rc, out, err = run([self.data, "-o", self.model, "--labels", self.labels])
        self.assertEqual(rc, 0, err)
        self.assertIn("noise: AR(2)", out)
        self.assertIn("burst: AR(1)", out)
        self.assertIn("burst: M = %d" % M, out)
        nb = len(self.bursts)
        held = int(np.ceil(0.25 * nb))
        self.assertIn("%d bursts (%d fitted, %d held back)" % (nb, nb - held, held), out)
        rows = [l.split() for l in out.splitlines() if l.strip().startswith("1e-0")]
        self.assertEqual([r[0] for r in rows], ["1e-02", "1e-03", "1e-04"])
        # pfa, pd (threshold) at the fitted alpha and at 1e-9, energy pd
        self.assertEqual([len(r) for r in rows], [6, 6, 6])
        for r in rows[:2]:
            self.assertGreater(float(r[1]), float(r[5]))
            self.assertGreater(float(r[3]), float(r[5]))
        self.assertNotIn("n/a", out)
        self.assertEqual(err, "")
        m = transient.kalman_model_load(self.model)
        self.assertEqual((m["Q"], m["M"]), (2, M))
        self.assertIn("--model-file %s" % self.model, out)

    def test_002_too_little_noise_held_back(self):
        # 5 % of about 150000 noise samples: no threshold at 1e-4, said so
        rc, out, err = run([self.data, "-o", self.model, "--labels", self.labels,
                            "--holdout", "0.05"])
        self.assertEqual(rc, 0, err)
        rows = [l.split() for l in out.splitlines() if l.strip().startswith("1e-0")]
        self.assertEqual(rows[2][1:], ["n/a", "n/a", "n/a"])
        self.assertNotEqual(rows[1][1], "n/a")
        self.assertIn("warning: n/a: fewer than 1/rate held-back noise samples", err)

    def test_003_ranges_in_seconds_and_force(self):
        rate = 1000.0
        sig = ["--signal=%g:%g" % (a / rate, b / rate) for a, b in self.bursts]
        argv = [self.data, "-o", self.model, "--rate", "1000", "--units", "seconds",
                "--noise", "0:2.9"] + sig + ["--holdout", "0"]
        rc, out, err = run(argv)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("held-back data", out)
        with open(self.model, "rb") as f:
            first = f.read()
        # an existing output is kept without --force
        code, out, err = run(argv)
        self.assertEqual(code, 2)
        self.assertIn("%s exists" % self.model, err)
        with open(self.model, "rb") as f:
            self.assertEqual(f.read(), first)
        rc, out, err = run(argv + ["--force", "--envelope", "rect", "--M", "40"])
        self.assertEqual(rc, 0, err)
        self.assertEqual(transient.kalman_model_load(self.model)["M"], 40)

    def test_004_part_of_the_recording(self):
        # bursts after sample 100000 only, noise from their gaps: the fit reads
        # the stretch from 10 M before the first range, positions stay absolute
        late = [r for r in self.bursts if r[0] >= 100000]
        sig = ["--signal=%d:%d" % r for r in late]
        gaps = ["--noise=%d:%d" % (b + M, a) for (_, b), (a, _) in zip(late[:-1], late[1:])]
        rc, out, err = run([self.data, "-o", self.model] + gaps + sig)
        self.assertEqual(rc, 0, err)
        self.assertIn("%d bursts" % len(late), out)
        self.assertIn("alpha = %.6g" % (len(late) / 200000.0), out)

    def test_005_one_signal_segment(self):
        # one stretch holding the signal throughout (a long burst), no ROC
        x = np.fromfile(self.data, dtype=np.float32)
        y, _ = ks.gaussian_bursts(len(x), [100000], M=20001, noise_ar=[1.2, -0.5],
                                  target_ar=[0.8], target_var=0.6, seed=8)
        path = os.path.join(self.dir, "long.f32")
        y.tofile(path)
        rc, out, err = run([path, "-o", self.model, "--noise", "0:90000", "--signal",
                            "100000:120000", "--holdout", "0"])
        self.assertEqual(rc, 0, err)
        self.assertIn("burst: AR(1)", out)
        self.assertIn("burst: M = 20001", out)
        self.assertEqual(transient.kalman_model_load(self.model)["M"], 20001)

    def test_006_sigmf_and_complex(self):
        x = np.fromfile(self.data, dtype=np.float32)
        base = os.path.join(self.dir, "rec")
        z = (x + 0j).astype(np.complex64)
        z.tofile(base + ".sigmf-data")
        sigmf.write_meta(base + ".sigmf-meta", sigmf.new_meta("cf32_le", 1000.0))
        self.assertError([base + ".sigmf-meta", "-o", self.model, "--labels", self.labels],
                         2, "is complex", "--complex-to")
        rc, out, err = run([base + ".sigmf-meta", "-o", self.model, "--labels", self.labels,
                            "--complex-to", "real"])
        self.assertEqual(rc, 0, err)
        self.assertIn("at 1000 Hz", out)

    def test_007_bad_input(self):
        missing = os.path.join(self.dir, "none.f32")
        self.assertError([missing, "-o", self.model, "--labels", self.labels], 2, missing)
        bad = os.path.join(self.dir, "bad.csv")
        with open(bad, "w") as f:
            f.write("start,stop\n100,200\n300,x\n")
        self.assertError([self.data, "-o", self.model, "--labels", bad], 2, bad + ":3")
        with open(bad, "w") as f:
            f.write("start,stop\n")
        self.assertError([self.data, "-o", self.model, "--labels", bad], 2, bad, "no bursts")
        self.assertError([self.data, "-o", self.model, "--labels", self.labels, "--noise",
                          "0:999999"], 2, "outside", self.data)
        self.assertError([self.data, "-o", self.model], 2, "--signal")
        self.assertError([self.data, "-o", self.model, "--signal", "5:10"], 2, "--noise")
        self.assertError([self.data, "-o", self.model, "--labels", self.labels, "--signal",
                          "5:70"], 2, "not both")
        self.assertError([self.data, "-o", self.model, "--labels", self.labels, "--units",
                          "seconds"], 2, "sample rate", self.data)
        self.assertError([self.data, "-o", self.model, "--labels", self.labels, "--holdout",
                          "0.95"], 2, "--holdout")
        self.assertError([self.data, "-o", self.model, "--signal", "5:6", "--signal",
                          "50:51", "--noise", "100:2000"], 2, "M must be >= 3")
        self.assertError([self.data, "-o", os.path.join(self.dir, "no", "m"), "--labels",
                          self.labels], 2, "does not exist")
        self.assertError([self.data, "-o", self.model, "--signal", "3000:3063", "--noise",
                          "0:2900"], 2, "none left for the fit")
        self.assertError([self.data, "-o", self.model, "--labels", self.labels, "--noise",
                          "0:3100"], 2, self.data, "overlaps signal range 3000:3063")
        limit = tool.MAX_SAMPLES
        tool.MAX_SAMPLES = 100000
        try:
            self.assertError([self.data, "-o", self.model, "--labels", self.labels], 2,
                             self.data, "at most 100000 are read")
        finally:
            tool.MAX_SAMPLES = limit
        # noise labelled as bursts: nothing to fit, said so
        quiet = os.path.join(self.dir, "quiet.csv")
        with open(quiet, "w") as f:
            for a, b in zip([b for _, b in self.bursts[:-1]], [a for a, _ in self.bursts[1:]]):
                f.write("%d,%d\n" % (a + 200, a + 200 + M - 1))
        self.assertError([self.data, "-o", self.model, "--labels", quiet, "--noise",
                          "0:2900"], 2, self.data, "no power above the noise")

    def test_008_split(self):
        s = [(0, 10), (20, 30), (40, 50), (60, 70)]
        n = [(100, 200), (300, 400)]
        ts, hs, tn, hn = tool.split(s, n, 0.25)
        self.assertEqual((ts, hs), (s[:3], s[3:]))
        self.assertEqual((tn, hn), ([(100, 200), (300, 350)], [(350, 400)]))
        self.assertEqual(tool.gaps([(10, 20), (50, 60)], 100, 5), [(0, 10), (25, 50),
                                                                    (65, 100)])


if __name__ == "__main__":
    gr_unittest.run(qa_transient_kalman_fit)
