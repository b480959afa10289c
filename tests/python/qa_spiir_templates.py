#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Templates into the SPIIR design (spiir_templates, spiir_design):

  * real templates become analytic; leading/trailing zeros are trimmed (a
    tapered, zero-padded h+ + i hx designs); zeros inside are refused;
  * files: .npy, text (time, h) and (time, h+, hx), HDF5 (hplus, hcross, time),
    resampled to the data rate; the merger index from time 0;
  * lalsimulation approximants give a clear error without lalsuite;
  * design_target reaches the target match, refuses an unreachable one;
  * the default latency budget keeps whitened templates' multirate latency at
    55 samples (without it: thousands);
  * the autocorrelation chi-square of the core against numpy, and its
    separation of an injected chirp from a sine-Gaussian glitch of the same SNR.
"""

import math
import os
import tempfile

import numpy as np
from gnuradio import gr_unittest
from gnuradio import transient as tr
from gnuradio.transient import spiir_design as sd
from gnuradio.transient import spiir_search as ss
from gnuradio.transient import spiir_templates as st

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                     os.pardir))
WAVEFORM = os.path.join(ROOT, "examples", "data", "GW150914_4_NR_waveform.txt")


def bank_arrays(filters):
    f = np.asarray(filters)
    return (f["a1"], f["b0"], f["delay"].astype(np.int64), f["level"].astype(np.int64),
            np.array([len(f)], dtype=np.int64))


def tapered_chirp(fs=2048.0, pad=300):
    """A 0PN chirp with Hann-tapered ends, zero-padded: h+ + i hx."""
    c = sd.newtonian_chirp(fs, 30.0, 300.0, m1=10, m2=10)
    n = len(c.h)
    m = 200
    w = np.ones(n)
    w[:m] = 0.5 * (1 - np.cos(np.pi * np.arange(m) / m))
    w[-m:] = w[:m][::-1]
    h = np.zeros(n + 2 * pad, dtype=np.complex128)
    h[pad:pad + n] = c.h * w
    return c, h


class qa_spiir_templates(gr_unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="qa_spiir_templates_")

    def tearDown(self):
        for f in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, f))
        os.rmdir(self.tmp)

    def test_001_real_becomes_analytic(self):
        c = sd.newtonian_chirp(2048, 30, 300, m1=10, m2=10)
        a = st.analytic(c.h.real)
        self.assertTrue(np.allclose(a.real, c.h.real))
        # the analytic signal has (almost) no negative frequencies
        spec = np.abs(np.fft.fft(a))**2
        neg = spec[len(a) // 2 + 1:].sum() / spec.sum()
        self.assertLess(neg, 1e-12)
        r_real = sd.design(c.h.real, 2048)
        r_an = sd.design(a, 2048)
        self.assertEqual(len(r_real.filters), len(r_an.filters))
        self.assertAlmostEqual(r_real.match, r_an.match, places=12)
        self.assertGreater(r_real.match, 0.99)

    def test_002_zero_padded_tapered_template(self):
        c, h = tapered_chirp()
        r = sd.design(h, 2048)
        self.assertGreater(r.match, 0.99)
        # the trimmed template: its end is the chirp's end
        self.assertEqual(sd.design(h[300:-300], 2048).match, r.match)
        # the taper's own end values are exact zeros too: trimmed with the padding
        t = st.as_template(h, 2048)
        self.assertEqual(len(t), len(c.h) - 2)
        inner = h.copy()
        inner[1000] = 0
        with self.assertRaisesRegex(ValueError, "vanishes inside it"):
            sd.design(inner, 2048)
        with self.assertRaisesRegex(ValueError, "all zeros"):
            sd.design(np.zeros(100), 2048)

    def test_003_files(self):
        fs = 4096.0
        d = np.loadtxt(WAVEFORM)
        t = st.load_template(WAVEFORM, fs)
        self.assertEqual(t.merger_index, int(np.argmin(np.abs(d[:, 0]))) - 0)
        self.assertAlmostEqual(t.end_to_merger, d[-1, 0], delta=1.5 / fs)
        self.assertTrue(np.allclose(t.h.real, d[:, 1]))
        # three columns: h+ + i hx kept as given
        three = os.path.join(self.tmp, "w3.txt")
        hx = np.roll(d[:, 1], 3)
        np.savetxt(three, np.column_stack([d[:, 0], d[:, 1], hx]))
        t3 = st.load_template(three, fs)
        self.assertTrue(np.allclose(t3.h, d[:, 1] + 1j * hx))
        # .npy at the data rate, and at twice it (resampled)
        npy = os.path.join(self.tmp, "w.npy")
        np.save(npy, d[:, 1])
        self.assertTrue(np.allclose(st.load_template(npy, fs).h.real, d[:, 1]))
        c = sd.newtonian_chirp(2 * fs, 30, 300, m1=10, m2=10)
        np.save(npy, c.h.real)
        tr2 = st.load_template(npy, fs, file_rate=2 * fs)
        ref = c.h.real[::2]  # band-limited far below fs / 2: every other sample
        self.assertEqual(len(tr2.h), len(ref))
        m = len(ref) - 100
        err = np.abs(tr2.h.real[100:m] - ref[100:m]).max() / np.abs(ref).max()
        self.assertLess(err, 0.01)
        # HDF5 with hplus, hcross and time
        import h5py
        h5 = os.path.join(self.tmp, "w.h5")
        with h5py.File(h5, "w") as f:
            f["hplus"] = d[:, 1]
            f["hcross"] = hx
            f["time"] = d[:, 0]
        th = st.load_template(h5, fs)
        self.assertTrue(np.allclose(th.h, d[:, 1] + 1j * hx))
        self.assertEqual(th.merger_index, t.merger_index)
        # bad files name themselves
        bad = os.path.join(self.tmp, "bad.txt")
        with open(bad, "w") as f:
            f.write("1 2 3 4\n5 6 7 8\n")
        with self.assertRaisesRegex(ValueError, "bad.txt: expected two columns"):
            st.load_template(bad, fs)
        with open(bad, "w") as f:
            f.write("0 1\n0.5 2\n0.6 3\n")
        with self.assertRaisesRegex(ValueError, "not uniformly sampled"):
            st.load_template(bad, fs)
        with h5py.File(h5, "w") as f:
            f["other"] = d[:, 1]
        with self.assertRaisesRegex(ValueError, "no h\\+ dataset"):
            st.load_template(h5, fs)

    def test_004_approximant_needs_lalsuite(self):
        try:
            import lalsimulation  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ValueError, "pip install lalsuite"):
                st.approximant("IMRPhenomD", 36, 29, 4096)
            return
        t = st.approximant("IMRPhenomD", 36, 29, 4096, f_low=20)
        self.assertGreater(sd.design(t.h, 4096, epsilon=0.05).match, 0.95)

    def test_005_target_match(self):
        c = sd.newtonian_chirp(2048, 30, 300, m1=1.4, m2=1.4)
        for target in (0.99, 0.995):
            r = sd.design_target(c.h, 2048, target)
            self.assertGreaterEqual(r.match, target)
            self.assertLess(r.epsilon, 0.4)
        loose = sd.design_target(c.h, 2048, 0.98)
        tight = sd.design_target(c.h, 2048, 0.995)
        self.assertLess(len(loose.filters), len(tight.filters))
        with self.assertRaisesRegex(ValueError, "misses the target"):
            sd.design_target(c.h, 2048, 0.99999, epsilon_min=0.1)
        with self.assertRaises(ValueError):
            sd.design_target(c.h, 2048, 1.5)

    def whitened_nr(self, fs=4096.0):
        psd = tr.psd_design(fs, 16384)
        w = tr.Whitener(fs, psd, 20.0)
        return st.whiten_template(st.load_template(WAVEFORM, fs), w.taps())

    def test_006_latency_budget(self):
        fs = 4096.0
        t = self.whitened_nr(fs)
        # the merger stays inside the whitened, energy-trimmed template
        self.assertTrue(0 < t.merger_index < len(t.h) - 1)
        lat = {}
        for ml in (None, sd.DEFAULT_MAX_LATENCY, 0):
            r = sd.design_target(t.h, fs, 0.97, max_latency=ml)
            lat[ml] = tr.spiir_latency(*bank_arrays(r.filters), 1.0 / fs)
        self.assertLessEqual(lat[sd.DEFAULT_MAX_LATENCY], sd.DEFAULT_MAX_LATENCY)
        self.assertEqual(lat[0], 0)
        self.assertGreater(lat[None], 4 * sd.DEFAULT_MAX_LATENCY)

    def chisq_trial(self, bank, ac, h, fs, kind, snr, rng):
        """The loudest trigger's (snr, chisq) of a chirp or a sine-Gaussian
        glitch injected into white noise with the bank's SNR `snr`."""
        n = len(h) + int(4 * fs)
        end = len(h) + int(2 * fs)
        x = rng.standard_normal(n)
        if kind == "chirp":
            sig = np.zeros(n)
            sd.inject(sig, h, end, 1.0)
        else:
            sig = sd.sine_gaussian(fs, 150.0, 9.0, n, end)
        z0 = tr.spiir_filter(sig.astype(np.float32), *bank, 1.0 / fs)[:, 0]
        x += sig * snr / np.abs(z0).max()
        z = tr.spiir_filter(x.astype(np.float32), *bank, 1.0 / fs)
        trig = tr.spiir_triggers(z, 6.0, len(h))
        trig = trig[trig["sample"] > len(h)]
        k = int(np.argmax(trig["snr"]))
        s = trig["sample"][k:k + 1].astype(np.int64)
        chi = tr.spiir_autochisq(z, s, np.zeros(1, np.int64), ac[None, :])[0]
        # numpy: gstlal's definition over the lags -half..half
        half = len(ac) // 2
        p = int(s[0])
        w = z[p - half:p + half + 1, 0].astype(np.complex128)
        want = np.sum(np.abs(ac * w[half] - w)**2) / (2 * len(ac) - np.sum(np.abs(ac)**2))
        self.assertAlmostEqual(chi, want, delta=1e-9 * want)
        return float(trig["snr"][k]), float(chi)

    def test_007_chisq_separates_chirp_from_glitch(self):
        fs = 2048.0
        c = sd.newtonian_chirp(fs, 30.0, 300.0, m1=10, m2=10)
        r = sd.design(c.h, fs)
        bank = bank_arrays(r.filters)
        ac, shift, lat = ss.autocorrelation(r.filters, c.h, fs, int(0.1 * fs))
        self.assertAlmostEqual(abs(ac[len(ac) // 2]), 1.0, places=12)
        self.assertLessEqual(abs(shift), 2)
        rng = np.random.default_rng(7)
        for snr in (12.0, 20.0, 30.0):
            s_c, x_c = self.chisq_trial(bank, ac, c.h, fs, "chirp", snr, rng)
            s_g, x_g = self.chisq_trial(bank, ac, c.h, fs, "glitch", snr, rng)
            self.assertLess(abs(s_c - s_g), 0.2 * snr)
            self.assertLess(x_c, 3.0, "chirp at SNR %.1f: chi-square %.2f" % (s_c, x_c))
            self.assertGreater(x_g, 10.0, "glitch at SNR %.1f: chi-square %.2f" % (s_g, x_g))

    def test_008_bad_arguments(self):
        with self.assertRaises(ValueError):
            st.whiten_template(st.as_template(np.ones(20), 100), np.ones(4))
        with self.assertRaises(ValueError):
            st.as_template(np.array([1.0, np.nan, 2.0]), 100)
        with self.assertRaises(ValueError):
            st.resample(np.ones(10), 0, 100)
        z = np.zeros((10, 1), np.complex64)
        with self.assertRaisesRegex(ValueError, "odd number of lags"):
            tr.spiir_autochisq(z, np.array([5]), np.array([0]), np.ones((1, 4), complex))
        with self.assertRaisesRegex(ValueError, "outside the 1 templates"):
            tr.spiir_autochisq(z, np.array([5]), np.array([1]), np.ones((1, 3), complex))
        with self.assertRaisesRegex(ValueError, "peak row 10 outside"):
            tr.spiir_autochisq(z, np.array([10]), np.array([0]), np.ones((1, 3), complex))


if __name__ == "__main__":
    gr_unittest.run(qa_spiir_templates)
