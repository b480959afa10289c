#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of the SPIIR bank design (gnuradio.transient.spiir_design) and of the
bank file in Python (gnuradio.transient.spiir_bank).

The design needs only numpy: without GNU Radio the modules are taken from the
source tree and the tests that run the C core (through the bindings) are
skipped.
"""

import math
import os
import struct
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    from gnuradio import transient
    from gnuradio.transient import spiir_bank, spiir_design
    HAVE_CORE = hasattr(transient, "spiir_filter")
except ImportError:
    sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, "python", "transient"))
    import spiir_bank  # noqa: E402
    import spiir_design  # noqa: E402
    transient = None
    HAVE_CORE = False

sd = spiir_design
SpiirBank = spiir_bank.SpiirBank


class qa_spiir_design(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        # A binary neutron star chirp from 30 to 300 Hz: about 2500 cycles.
        cls.chirp = sd.newtonian_chirp(2048, 30.0, 300.0, m1=1.4, m2=1.4)
        cls.result = sd.design(cls.chirp.h, 2048)
        # A shorter one for the stream tests: 628 cycles in 20 s.
        cls.short = sd.newtonian_chirp(1024, 20.0, 200.0, duration=20.0)
        cls.short_design = sd.design_bank([cls.short.h], 1024)

    # ---- the chirp ----------------------------------------------------------

    def test_chirp(self):
        c = self.chirp
        self.assertAlmostEqual(c.chirp_mass, (1.4 * 1.4)**0.6 / 2.8**0.2, places=12)
        self.assertGreater(c.cycles, 2000)
        self.assertLess(c.cycles, 4000)
        self.assertAlmostEqual(float(np.sum(np.abs(c.h)**2)), 2.0, places=9)
        self.assertAlmostEqual(float(np.sum(c.h.real**2)), 1.0, delta=2e-3)
        # Frequency sweeps from f_low to f_high; the phase's derivative agrees.
        self.assertAlmostEqual(c.freq[0], 30.0, delta=0.01)
        self.assertAlmostEqual(c.freq[-1], 300.0, delta=1e-6)
        self.assertTrue(np.all(np.diff(c.freq) > 0))
        f_num = np.diff(c.phase) * c.sample_rate / (2 * math.pi)
        f_mid = 0.5 * (c.freq[1:] + c.freq[:-1])
        self.assertLess(np.max(np.abs(f_num - f_mid) / f_mid), 1e-4)
        # 0PN duration: tau(f) = 5/256 M^(-5/3) (pi f)^(-8/3).
        M = c.chirp_mass * sd.MSUN_S
        tau = lambda f: 5.0 / 256.0 * M**(-5.0 / 3.0) * (math.pi * f)**(-8.0 / 3.0)
        self.assertAlmostEqual(c.duration, tau(30.0) - tau(300.0), delta=1.0 / 2048)
        # Duration mode and chirp-mass mode give the same chirp.
        d = sd.newtonian_chirp(1024, 20.0, 200.0, duration=20.0)
        self.assertAlmostEqual(d.duration, 20.0, delta=1.0 / 1024)
        e = sd.newtonian_chirp(1024, 20.0, 200.0, mc=d.chirp_mass)
        np.testing.assert_allclose(e.h, d.h, rtol=0, atol=1e-12)

    # ---- the design ---------------------------------------------------------

    def test_match(self):
        """A few thousand cycles, a few hundred filters, match >= 0.99."""
        r = self.result
        self.assertGreaterEqual(len(r.filters), 200)
        self.assertLessEqual(len(r.filters), 600)
        self.assertGreaterEqual(r.match, 0.99)
        self.assertLessEqual(r.match, 1.0)
        # The bank's own match, recomputed from its coefficients.
        self.assertAlmostEqual(sd.match(r.filters, self.chirp.h, 2048), r.match, places=9)
        f = r.filters
        self.assertTrue(np.all(np.abs(f["a1"]) < 1))
        self.assertTrue(np.all(f["delay"] >= 0))
        self.assertEqual(int(f["delay"][0]), 0)  # the chirp's end: no delay
        self.assertTrue(np.all(np.diff(f["delay"]) > 0))
        self.assertLess(int(f["delay"].max()), len(self.chirp.h))
        # Filter frequencies follow the chirp down from f_high to f_low.
        self.assertTrue(np.all(np.diff(r.freq) <= 1e-9))
        self.assertLess(abs(r.freq[0] - 300.0), 25.0)
        self.assertLess(abs(r.freq[-1] - 30.0), 3.0)

    def test_impulse_response(self):
        """The summed impulse response, sampled, against the template."""
        c = self.short
        r = self.short_design.results[0]
        n = len(c.h)
        g = sd.impulse_response(r.filters, 1024, n + 4 * 1024)
        w = np.conj(c.h[::-1])
        overlap = abs(np.vdot(g[:n], w)) / (np.linalg.norm(g) * np.linalg.norm(w))
        self.assertAlmostEqual(overlap, r.match, delta=2e-4)
        # Normalised: |g|^2 = 2 (unit variance per quadrature in unit white noise).
        self.assertAlmostEqual(float(np.sum(np.abs(g)**2)), 2.0, delta=1e-3)
        # Fewer filters (larger epsilon) match worse: the test can fail.
        coarse = sd.design(c.h, 1024, epsilon=2.0)
        self.assertLess(len(coarse.filters), len(r.filters) / 3)
        self.assertLess(coarse.match, 0.99)

    def test_levels(self):
        """Each filter at the lowest rate whose resampler passband holds it."""
        r = self.result
        f, fs = r.filters, 2048.0
        freq = np.angle(f["a1"]) * fs / (2 * math.pi)
        bw = -np.log(np.abs(f["a1"])) * fs / (2 * math.pi)
        top = np.abs(freq) + bw
        L = f["level"]
        self.assertGreater(len(np.unique(L)), 2)
        ok = (L == 0) | (top <= sd.MR_PASSBAND * fs / 2.0**L)
        self.assertTrue(np.all(ok))
        higher = (L < 6) & (top <= sd.MR_PASSBAND * fs / 2.0**(L + 1))
        self.assertFalse(np.any(higher))
        single = sd.design(self.short.h, 1024, max_level=0)
        self.assertTrue(np.all(single.filters["level"] == 0))
        self.assertEqual(sd.assign_levels([100.0, 10.0], [0.0, 0.0], 1000, 3).tolist(),
                         [2, 3])
        # Latency budget: level L needs 55 (2^L - 1) - delay <= max_latency.
        self.assertEqual(sd.assign_levels([10.0] * 4, [0.0] * 4, 1000, 3,
                                          delay=[0, 55, 165, 385],
                                          max_latency=0).tolist(), [0, 1, 2, 3])
        with self.assertRaises(ValueError):
            sd.assign_levels([10.0], [0.0], 1000, 3, max_latency=0)

    def test_bank_of_templates(self):
        chirps = [sd.newtonian_chirp(1024, 20.0, 200.0, duration=d).h for d in (4.0, 6.0)]
        b = sd.design_bank(chirps, 1024)
        self.assertEqual(b.bank.ntemplates, 2)
        self.assertTrue(np.all(b.matches >= 0.99))
        self.assertEqual(b.bank.counts.tolist(), [len(r.filters) for r in b.results])

    # ---- through the C core ---------------------------------------------------

    @unittest.skipUnless(HAVE_CORE, "gnuradio.transient bindings not available")
    def test_injection(self):
        """A chirp in white noise is found at the expected SNR at the right time."""
        c = self.short
        design = self.short_design
        m = design.results[0].match
        a1, b0, delay, level, counts = design.bank.arrays()
        rng = np.random.default_rng(7)
        n = len(c.h) + 6000
        end = len(c.h) + 2500
        amp = 100.0
        x = rng.standard_normal(n).astype(np.float32)
        sd.inject(x, c.h, end, amp)
        z = transient.spiir_filter(x, a1, b0, delay, level, counts, design.bank.dt)
        self.assertEqual(z.shape, (n, 1))
        mag = np.abs(z[:, 0])
        self.assertEqual(int(np.argmax(mag)), end)
        # Expected SNR amp x match; unit noise per quadrature adds about +-1.
        self.assertAlmostEqual(mag[end] / (amp * m), 1.0, delta=0.04)
        # Against the exact (FFT) matched filter of the same data.
        exact = np.abs(sd.matched_filter(x, c.h))
        self.assertEqual(int(np.argmax(exact)), end)
        self.assertAlmostEqual(mag[end] / exact[end], m, delta=0.02)
        # Noise only: unit variance per quadrature.
        noise = transient.spiir_filter(
            rng.standard_normal(4 * len(c.h)).astype(np.float32), a1, b0, delay, level,
            counts, design.bank.dt)[len(c.h):, 0]
        self.assertAlmostEqual(float(np.var(noise.real)), 1.0, delta=0.1)
        self.assertAlmostEqual(float(np.var(noise.imag)), 1.0, delta=0.1)
        # Triggers: one, at the chirp's end.
        trig = transient.spiir_triggers(z, 8.0, 1024)
        self.assertEqual(len(trig), 1)
        self.assertEqual(int(trig["sample"][0]), end)
        self.assertLess(abs(trig["peak"][0] - end), 0.5)
        self.assertAlmostEqual(float(trig["snr"][0]), mag[end], places=3)
        # Complex input: the analytic signal gives the same peak.
        xc = (x + 0j).astype(np.complex64)
        zc = transient.spiir_filter(xc, a1, b0, delay, level, counts, design.bank.dt)
        np.testing.assert_allclose(zc, z, rtol=0, atol=1e-3)

    @unittest.skipUnless(HAVE_CORE, "gnuradio.transient bindings not available")
    def test_multirate(self):
        """The designed levels run multirate: the peak SNR of an injected chirp
        as in single rate, at the same sample (latency removed)."""
        c = self.short
        design = self.short_design
        a1, b0, delay, level, counts = design.bank.arrays()
        self.assertGreater(int(level.max()), 2)
        lat = transient.spiir_latency(a1, b0, delay, level, counts, design.bank.dt)
        self.assertGreaterEqual(lat, 0)
        rng = np.random.default_rng(3)
        n = len(c.h) + 4096
        end = len(c.h) + 2000
        x = rng.standard_normal(n).astype(np.float32)
        sd.inject(x, c.h, end, 50.0)
        z1 = np.abs(transient.spiir_filter(x, a1, b0, delay, level, counts,
                                           design.bank.dt)[:, 0])
        z2 = np.abs(transient.spiir_filter(x, a1, b0, delay, level, counts, design.bank.dt,
                                           multirate=True)[:, 0])
        self.assertEqual(int(np.argmax(z1)), end)
        self.assertEqual(int(np.argmax(z2)) - lat, end)
        self.assertAlmostEqual(z2[end + lat] / z1[end], 1.0, delta=0.01)
        # A latency budget of 0 keeps the filters near the chirp's end at rates
        # whose resampler delay their own delay absorbs: no lag at all.
        self.assertGreater(lat, 0)
        zero = sd.design_bank([c.h], 1024, max_latency=0)
        a1, b0, delay, level, counts = zero.bank.arrays()
        self.assertEqual(transient.spiir_latency(a1, b0, delay, level, counts, 1 / 1024), 0)
        self.assertGreater(int(level.max()), 2)
        z3 = np.abs(transient.spiir_filter(x, a1, b0, delay, level, counts, 1 / 1024,
                                           multirate=True)[:, 0])
        self.assertEqual(int(np.argmax(z3)), end)
        self.assertAlmostEqual(z3[end] / z1[end], 1.0, delta=0.01)

    @unittest.skipUnless(HAVE_CORE, "gnuradio.transient bindings not available")
    def test_core_rejects_bad_banks(self):
        a1, b0, delay, level, counts = self.short_design.bank.arrays()
        x = np.zeros(10, dtype=np.float32)
        bad = a1.copy()
        bad[3] = 1.0
        with self.assertRaisesRegex(ValueError, "unstable pole"):
            transient.spiir_filter(x, bad, b0, delay, level, counts, 1 / 1024)
        d = delay.copy()
        d[2] = -1
        with self.assertRaisesRegex(ValueError, "delay"):
            transient.spiir_filter(x, a1, b0, d, level, counts, 1 / 1024)
        with self.assertRaisesRegex(ValueError, "add up"):
            transient.spiir_filter(x, a1, b0, delay, level, [len(a1) - 1], 1 / 1024)
        with self.assertRaisesRegex(ValueError, "empty"):
            transient.spiir_filter(x, a1, b0, delay, level, [0, len(a1)], 1 / 1024)

    # ---- bank files -------------------------------------------------------------

    def test_bank_roundtrip(self):
        bank = sd.design_bank([self.short.h, self.short.h[-4000:]], 1024).bank
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bank.spiir")
            bank.save(path)
            with open(path, "rb") as fp:
                data = fp.read()
            same = SpiirBank.load(path)
        self.assertEqual(same, bank)
        self.assertEqual(same.dt, 1 / 1024)
        # The layout of <transient/spiir.h>, field by field.
        nt = bank.ntemplates
        total = int(bank.counts.sum())
        self.assertEqual(len(data), 24 + 4 * nt + 40 * total)
        self.assertEqual(data[:8], b"TRSPIIR1")
        self.assertEqual(struct.unpack_from("<IId", data, 8), (nt, 0, 1 / 1024))
        self.assertEqual(list(struct.unpack_from("<%dI" % nt, data, 24)),
                         bank.counts.tolist())
        f0 = bank.templates[0][1]
        rec = struct.unpack_from("<4d2i", data, 24 + 4 * nt + 40)
        self.assertEqual(rec, (f0["a1"].real, f0["a1"].imag, f0["b0"].real, f0["b0"].imag,
                               int(f0["delay"]), int(f0["level"])))
        # Arrays round trip.
        again = SpiirBank.from_arrays(*bank.arrays()[:3], counts=bank.counts, dt=bank.dt,
                                      level=bank.arrays()[3])
        self.assertEqual(again, bank)
        # Malformed files.
        for bad, what in ((data[:20], "truncated header"),
                          (b"XRSPIIR1" + data[8:], "magic"),
                          (data[:-1], "truncated"), (data + b"\0", "trailing"),
                          (data[:12] + b"\1\0\0\0" + data[16:], "reserved")):
            with self.assertRaisesRegex(ValueError, what):
                SpiirBank.frombytes(bad)

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cli.spiir")
            self.assertEqual(sd.main(["-o", path, "--rate", "1024", "--f-low", "20",
                                      "--f-high", "200", "--duration", "4",
                                      "--masses", "3", "3"]), 0)
            bank = SpiirBank.load(path)
        self.assertEqual(bank.ntemplates, 2)
        self.assertEqual(bank.dt, 1 / 1024)
        with self.assertRaises(SystemExit):
            sd.main(["-o", "x", "--rate", "1024", "--f-low", "20", "--f-high", "200"])

    # ---- invalid inputs ---------------------------------------------------------

    def test_invalid(self):
        h = self.short.h
        bad_chirps = [
            dict(sample_rate=1024, f_low=200, f_high=100, m1=1, m2=1),
            dict(sample_rate=1024, f_low=20, f_high=600, m1=1, m2=1),
            dict(sample_rate=1024, f_low=20, f_high=200, m1=-1, m2=1),
            dict(sample_rate=1024, f_low=20, f_high=200, m1=1),
            dict(sample_rate=1024, f_low=20, f_high=200, m1=1, m2=1, duration=3),
            dict(sample_rate=1024, f_low=20, f_high=200),
            dict(sample_rate=0, f_low=20, f_high=200, duration=3),
            dict(sample_rate=1024, f_low=float("nan"), f_high=200, duration=3),
            dict(sample_rate=1024, f_low=20, f_high=200, duration=-3),
            dict(sample_rate=1024, f_low=20, f_high=21, duration=1e-3),
        ]
        for kw in bad_chirps:
            with self.assertRaises(ValueError, msg=str(kw)):
                sd.newtonian_chirp(**kw)
        nan = h.copy()
        nan[5] = np.nan
        zero = h.copy()
        zero[10:20] = 0  # inside: trimming cannot remove it (ends are trimmed)
        for args, kw in [((np.vstack([h, h]), 1024), {}),
                         ((nan, 1024), {}), ((zero, 1024), {}), ((h[:8], 1024), {}),
                         ((h, 0), {}), ((h, 1024), dict(epsilon=0)),
                         ((h, 1024), dict(beta=-1)), ((h, 1024), dict(alpha=5)),
                         ((h, 1024), dict(max_level=17)), ((h, 1024), dict(passband=0.6)),
                         ((h, 1024), dict(epsilon=1e-9, max_filters=100))]:
            with self.assertRaises(ValueError, msg=str(kw)):
                sd.design(*args, **kw)
        with self.assertRaises(ValueError):
            sd.design_bank([], 1024)
        with self.assertRaises(ValueError):
            sd.inject(np.zeros(10), h, 10, 1.0)

        good = self.short_design.bank.templates[0]
        cases = []
        f = good.copy()
        f["a1"][2] = 1.0
        cases.append(([f], 1e-3, "unstable pole"))
        f = good.copy()
        f["a1"][2] = complex(np.nan, 0)
        cases.append(([f], 1e-3, "non-finite"))
        f = good.copy()
        f["delay"][1] = -1
        cases.append(([f], 1e-3, "delay"))
        f = good.copy()
        f["level"][1] = 17
        cases.append(([f], 1e-3, "level"))
        cases.append(([good, good[:0]], 1e-3, "empty"))
        cases.append(([], 1e-3, "at least one template"))
        cases.append(([good], 0.0, "dt"))
        cases.append(([good], float("inf"), "dt"))
        for templates, dt, msg in cases:
            with self.assertRaisesRegex(ValueError, msg):
                SpiirBank(templates, dt)
        with self.assertRaisesRegex(ValueError, "same length"):
            SpiirBank.from_arrays([0.5], [1, 2], [0], [1], 1e-3)
        with self.assertRaisesRegex(ValueError, "add up"):
            SpiirBank.from_arrays([0.5], [1], [0], [2], 1e-3)


if __name__ == "__main__":
    unittest.main(verbosity=2)
