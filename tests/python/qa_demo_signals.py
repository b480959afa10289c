#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of the demo's helpers: gnuradio.transient.demo_signals (seeded,
cached signals with their truth; the raw-file source block) and
gnuradio.transient.demo_score (matching and the table)."""

import os
import tempfile
import unittest

import numpy as np
from gnuradio import blocks, gr
from gnuradio.transient import demo_score as score
from gnuradio.transient import demo_signals as ds


def run_raw(path, fmt, offset=0, count=0):
    tb = gr.top_block()
    src = ds.RawFileSource(path, fmt, offset, count)
    x, s = blocks.vector_sink_f(), blocks.vector_sink_f()
    tb.connect((src, 0), x)
    tb.connect((src, 1), s)
    tb.run()
    return np.array(x.data(), np.float32), np.array(s.data(), np.float32)


class test_raw_file_source(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, a, name):
        path = os.path.join(self.dir.name, name)
        a.tofile(path)
        return path

    def test_float32(self):
        a = np.random.default_rng(1).normal(size=100003).astype("<f4")
        x, s = run_raw(self.write(a, "a.f32"), "float32")
        np.testing.assert_array_equal(x, a)
        np.testing.assert_array_equal(s, a)
        x, _ = run_raw(self.write(a, "b.f32"), "float32", offset=10, count=1000)
        np.testing.assert_array_equal(x, a[10:1010])
        # A count past the end stops at the end.
        x, _ = run_raw(self.write(a, "c.f32"), "float32", offset=100000, count=50)
        np.testing.assert_array_equal(x, a[100000:])

    def test_complex64(self):
        rng = np.random.default_rng(2)
        z = (rng.normal(size=70001) + 1j * rng.normal(size=70001)).astype("<c8")
        x, s = run_raw(self.write(z, "z.c64"), "complex64")
        np.testing.assert_allclose(s, np.abs(z) ** 2, rtol=1e-6)
        np.testing.assert_allclose(x, np.abs(z), rtol=1e-6)
        # A trailing partial sample (4 of 8 bytes) is not read.
        path = self.write(z, "t.c64")
        with open(path, "ab") as f:
            f.write(b"\0\0\0\0")
        x, _ = run_raw(path, "complex64", offset=70000)
        self.assertEqual(len(x), 1)

    def test_empty_and_invalid(self):
        x, s = run_raw(self.write(np.zeros(0, "<f4"), "e.f32"), "float32")
        self.assertEqual(len(x), 0)
        self.assertRaises(ValueError, ds.RawFileSource, "x", "int16")
        self.assertRaises(ValueError, ds.RawFileSource, "x", "float32", -1)
        self.assertRaises(ValueError, ds.RawFileSource, "x", "float32", 0, -5)


class test_signals(unittest.TestCase):

    def test_pulse_train_truth(self):
        x, truth = ds.pulse_train(200000, 3)
        self.assertEqual(x.dtype, np.float32)
        self.assertEqual(len(x), 200000)
        self.assertGreater(len(truth["time"]), 50)
        # Alternating polarities starting with a rising edge, times increasing.
        self.assertTrue(np.all(truth["polarity"][::2] == 1))
        self.assertTrue(np.all(truth["polarity"][1::2] == -1))
        self.assertTrue(np.all(np.diff(truth["time"]) > 0))
        # Cached: the same objects again, different seeds differ.
        self.assertIs(ds.pulse_train(200000, 3)[0], x)
        self.assertFalse(np.array_equal(ds.pulse_train(200000, 4)[0], x))

    def test_frb_field(self):
        x, truth = ds.frb_field(4 * 8192, 2)
        self.assertEqual(x.shape, (4 * 8192, ds.FRB_CHANNELS))
        self.assertEqual(len(ds.frb_samples(4 * 8192, 2)), 4 * 4 * 8192)
        for p in truth:
            self.assertGreater(p["extent"][0], ds.FRB_WINDOW)  # after the first statistics window
            self.assertTrue(9.0 <= p["snr"] <= 25.0)

    def test_kalman_bursts(self):
        x, onsets = ds.kalman_bursts(50000, 1)
        self.assertEqual(len(x), 50000)
        self.assertTrue(np.all(np.diff(onsets) >= 4 * (ds.KALMAN_M - 1)))
        self.assertTrue(np.all(onsets < 50000 - (ds.KALMAN_M - 1)))

    def test_recordings(self):
        self.assertEqual(len(ds.i2c_samples("")), 0)
        self.assertEqual(len(ds.pulsar_samples("")), 0)
        self.assertIsNone(ds.resolve("", "x"))
        self.assertEqual(ds.resolve("/a/b", "x"), "/a/b")
        self.assertRaises(FileNotFoundError, ds.resolve, "default", "no-such-file.dat")


class test_score(unittest.TestCase):

    def test_match(self):
        ref_t = np.array([10.0, 20.0, 30.0, 40.0])
        ref_p = np.array([1, -1, 1, -1])
        # A hit, a wrong polarity, a miss (none near 30), a hit, an extra.
        det_t = np.array([10.5, 20.2, 40.1, 55.0])
        det_p = np.array([1, 1, -1, 1])
        (di, ri), missed, extra = score.match(det_t, det_p, ref_t, ref_p, 0.0, 1.0)
        self.assertEqual(di.tolist(), [0, 2])
        self.assertEqual(ri.tolist(), [0, 3])
        self.assertEqual((missed, extra), (2, 2))

    def test_match_pulses(self):
        truth = [{"channel": 1, "extent": (100, 120), "snr": 10.0},
                 {"channel": 3, "extent": (500, 520), "snr": 10.0}]
        cands = [{"start": 110, "width": 4, "channel": 2, "snr": 9.0},   # neighbour: hit
                 {"start": 105, "width": 4, "channel": 1, "snr": 11.0},  # extra, louder
                 {"start": 500, "width": 8, "channel": 0, "snr": 9.0},   # 3 trials away
                 {"start": 900, "width": 8, "channel": 3, "snr": 9.0}]   # nothing there
        hit, false, extra = score.match_pulses(cands, truth)
        self.assertEqual(hit[0]["start"], 105)
        self.assertIsNone(hit[1])
        self.assertEqual((false, extra), (2, 1))

    def test_table(self):
        rows = [score.row("edges", "a", "cpu", 3, 3, 3, 0, 0, "ok"),
                score.row("boxcar", "b", "cuda", 2, 1, 1, 1, 0, "q", ["boxcar b: missed"])]
        t = score.format_table(rows).splitlines()
        self.assertEqual(len(t), 4)
        self.assertIn("false", t[0])
        self.assertTrue(t[3].endswith("q  FAIL"))
        t = score.format_table(rows, truth=False).splitlines()
        self.assertNotIn("hits", t[0])


if __name__ == "__main__":
    unittest.main()
