#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of gnuradio.transient.timeseries: SIGPROC .tim and PRESTO .dat/.inf
readers (the pulsar recording of examples/data and malformed files) and the
period helpers."""

import os
import shutil
import struct
import tempfile
import unittest

import numpy as np
from gnuradio.transient import timeseries as ts

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, os.pardir, os.pardir, "examples", "data")
TIM = os.path.join(DATA, "GBT_J1807-0847.tim")
DAT = os.path.join(DATA, "GBT_J1807-0847.dat")
INF = os.path.join(DATA, "GBT_J1807-0847.inf")


def sp_str(s):
    b = s.encode("ascii")
    return struct.pack("<i", len(b)) + b


def sigproc_header(fields):
    """fields: list of (keyword, kind, value) with kind 's', 'i', 'd' or 'b'."""
    out = sp_str("HEADER_START")
    for key, kind, value in fields:
        out += sp_str(key)
        if kind == "s":
            out += sp_str(value)
        elif kind == "i":
            out += struct.pack("<i", value)
        elif kind == "d":
            out += struct.pack("<d", value)
        else:
            out += struct.pack("<B", value)
    return out + sp_str("HEADER_END")


GOOD = [("source_name", "s", "FAKE"), ("nchans", "i", 1), ("nbits", "i", 32),
        ("tsamp", "d", 1e-3), ("tstart", "d", 60000.5), ("refdm", "d", 12.5),
        ("nifs", "i", 1)]


class qa_timeseries(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="qa_timeseries_")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return path

    def assertBad(self, path, fragment, reader=ts.read_timeseries):
        with self.assertRaises(ValueError) as cm:
            reader(path)
        self.assertIn(fragment, str(cm.exception))
        self.assertIn(os.path.splitext(os.path.basename(path))[0], str(cm.exception))

    # ---- the recording ------------------------------------------------------

    def test_001_tim(self):
        t = ts.read_tim(TIM)
        self.assertEqual(t.format, "sigproc-tim")
        self.assertEqual(t.nsamples, 131130)
        self.assertEqual(t.nchans, 1)
        self.assertEqual(t.data.dtype, np.float32)
        self.assertAlmostEqual(t.tsamp, 0.00016384, places=12)
        self.assertAlmostEqual(t.dm, 112.3802, places=6)
        self.assertEqual(t.source, "J1807-0847")
        self.assertAlmostEqual(t.mjd, 59313.309837974, places=8)
        self.assertEqual(t.fch1, 920.0)
        self.assertEqual(t.header["telescope_id"], 6)

    def test_002_dat_inf(self):
        d = ts.read_dat(DAT)
        self.assertEqual(d.format, "presto-dat")
        self.assertEqual(d.nsamples, 131072)
        self.assertAlmostEqual(d.tsamp, 0.00016384, places=12)
        self.assertAlmostEqual(d.dm, 112.3802, places=6)
        self.assertEqual(d.source, "J1807-0847")
        self.assertAlmostEqual(d.mjd, 59313.309837974340741, places=9)
        self.assertEqual(d.header["telescope"], "GBT")
        self.assertEqual(d.header["nchans"], 256)
        self.assertIn("4 polns were not summed", d.header["notes"])
        self.assertEqual(float(d.data[0]), 444259.0)
        self.assertEqual(ts.read_timeseries(INF).nsamples, 131072)

    def test_003_period_of_the_recording(self):
        # PSR J1807-0847: catalogue period about 0.16373 s.
        for path in (TIM, DAT):
            t = ts.read_timeseries(path)
            p = ts.estimate_period(t.data, t.tsamp, pmin=0.05, pmax=2.0)
            self.assertAlmostEqual(p["period"], 0.16372, delta=2e-4, msg=path)
            self.assertLess(p["sigma"], 5e-4)
            prof, counts = ts.fold(t.data, t.tsamp, p["period"], 64)
            self.assertEqual(int(counts.sum()), t.nsamples)
            self.assertGreater(np.max(prof) - np.median(prof), 5 * np.std(prof[:16]))

    # ---- malformed files ----------------------------------------------------

    def test_004_bad_sigproc(self):
        body = np.arange(10, dtype="<f4").tobytes()
        good = self.write("good.tim", sigproc_header(GOOD) + body)
        t = ts.read_tim(good)
        np.testing.assert_array_equal(t.data, np.arange(10, dtype=np.float32))
        self.assertEqual(t.dm, 12.5)
        self.assertBad(self.write("a.tim", b"\x05\x00\x00\x00HELLO" + body), "not a SIGPROC")
        self.assertBad(self.write("b.tim", sigproc_header(GOOD)[:40]), "truncated")
        self.assertBad(self.write("c.tim", sigproc_header(GOOD + [("bogus", "i", 1)]) + body),
                       "unknown SIGPROC header keyword 'bogus'")
        no_tsamp = [f for f in GOOD if f[0] != "tsamp"]
        self.assertBad(self.write("d.tim", sigproc_header(no_tsamp) + body), "no tsamp")
        neg = [f if f[0] != "tsamp" else ("tsamp", "d", -1.0) for f in GOOD]
        self.assertBad(self.write("e.tim", sigproc_header(neg) + body), "tsamp must be")
        bits = [f if f[0] != "nbits" else ("nbits", "i", 12) for f in GOOD]
        self.assertBad(self.write("f.tim", sigproc_header(bits) + body), "nbits = 12")
        self.assertBad(self.write("g.tim", sigproc_header(GOOD) + body[:-1]),
                       "not a whole number of samples")
        ns = GOOD + [("nsamples", "i", 11)]
        self.assertBad(self.write("h.tim", sigproc_header(ns) + body), "nsamples = 11")
        huge = self.write("i.tim", struct.pack("<i", 1 << 30) + b"HEADER_START")
        self.assertBad(huge, "not a SIGPROC header")
        # 8-bit signed, two channels: shape (n, 2)
        two = [f if f[0] not in ("nbits", "nchans") else
               (f[0], "i", 8 if f[0] == "nbits" else 2) for f in GOOD]
        t = ts.read_tim(self.write("j.fil", sigproc_header(two + [("signed", "b", 1)]) +
                                   np.array([-1, 2, 3, -4], dtype="i1").tobytes()))
        self.assertEqual(t.data.shape, (2, 2))
        np.testing.assert_array_equal(t.data, [[-1, 2], [3, -4]])
        self.assertEqual(t.format, "sigproc-fil")

    def test_005_bad_presto(self):
        with open(INF) as f:
            inf = f.read()
        data = np.arange(8, dtype="<f4").tobytes()

        def pair(name, text, body=data):
            self.write(name + ".inf", text)
            return self.write(name + ".dat", body)

        ok = pair("ok", inf.replace("131072", "8"))
        self.assertEqual(ts.read_dat(ok).nsamples, 8)
        self.assertBad(pair("short", inf), "describes 131072 float32 samples")
        self.assertBad(pair("nobins", "\n".join(l for l in inf.splitlines()
                                                 if "Number of bins" not in l)),
                       "Number of bins")
        self.assertBad(pair("notsamp", inf.replace("131072", "8").replace(
            "Width of each time series bin (sec)", "Width of each bin")),
                       "Width of each time series bin")
        self.assertBad(pair("badnum", inf.replace("131072", "8").replace(
            "112.3802", "lots")), "must be a number")
        self.assertBad(pair("zero", inf.replace("131072", "8").replace(
            "0.00016384", "0")), "must be positive")
        self.assertBad(pair("junk", "this is not an inf file\n"), "description = value")
        with self.assertRaises(OSError):
            ts.read_dat(os.path.join(self.dir, "missing.dat"))
        with self.assertRaises(ValueError):
            ts.read_timeseries(os.path.join(self.dir, "x.wav"))

    # ---- period helpers -----------------------------------------------------

    def test_006_period_helpers(self):
        rng = np.random.default_rng(1)
        tsamp, period, n = 1e-3, 0.2371, 60000
        x = rng.normal(0, 1, n)
        k = np.arange(int(n * tsamp / period))
        starts = np.round((0.05 + k * period) / tsamp).astype(int)
        for s in starts:
            x[s:s + 5] += 3.0
        p = ts.estimate_period(x, tsamp, pmin=0.05, pmax=1.0)
        self.assertAlmostEqual(p["period"], period, delta=3 * p["sigma"] + 1e-4)
        times = starts * tsamp
        noise_times = 0.05 + np.array([0.5, 20.45]) * period  # off the pulse phase
        fit = ts.period_from_arrivals(np.concatenate([times, noise_times]), 0.237)
        self.assertAlmostEqual(fit["period"], period, delta=2e-6)
        self.assertEqual(fit["n_used"], len(times))
        self.assertEqual(fit["n_off"], 2)
        self.assertEqual(fit["distinct_pulses"], len(times))
        self.assertRaises(ValueError, ts.period_from_arrivals, [1.0], 0.2)
        self.assertRaises(ValueError, ts.estimate_period, [1.0, np.nan, 2.0], 1e-3)
        self.assertRaises(ValueError, ts.fold, x, 0.0, 0.2)


if __name__ == "__main__":
    unittest.main()
