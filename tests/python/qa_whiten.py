#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of the PSD and whitening bindings (gnuradio.transient.psd_welch,
psd_from_file, psd_design, psd_frequencies, whiten, Whitener) against scipy
and numpy computations of their definitions (docs/whitening.md)."""

import os
import tempfile
import unittest

import numpy as np
from scipy import signal

from gnuradio import transient

RATE = 4096.0


def coloured(n, seed):
    """AR(2) noise with a resonance, float32."""
    rng = np.random.default_rng(seed)
    return signal.lfilter([1.0], [1.0, -1.6, 0.8], rng.standard_normal(n)).astype(np.float32)


class qa_whiten(unittest.TestCase):
    def test_welch_matches_scipy(self):
        x = coloured(20000, 1) + np.float32(2.0)
        for seglen in (256, 512, 1000):
            _, want = signal.welch(x.astype(np.float64), RATE, nperseg=seglen,
                                   average="median")
            got = transient.psd_welch(x, RATE, seglen)
            self.assertEqual(got.shape, want.shape)
            np.testing.assert_allclose(got, want, rtol=1e-9)
        with self.assertRaisesRegex(ValueError, "do not fill"):
            transient.psd_welch(x[:100], RATE, 256)
        with self.assertRaisesRegex(ValueError, "nfft"):
            transient.psd_welch(x, RATE, 255)

    def test_whiten_is_the_convolution_with_the_taps(self):
        x = coloured(30000, 2)
        psd = transient.psd_welch(x, RATE, 1024)
        w = transient.Whitener(RATE, psd, fmin=20.0, backend="cpu")
        taps = w.taps()
        half = w.half_len
        self.assertEqual(len(taps), 2 * half + 1)
        self.assertEqual(half, 511)
        want = np.convolve(x.astype(np.float64), taps)[half:half + len(x)]
        for variant in ("reference", "fast"):
            got = transient.whiten(x, RATE, psd, fmin=20.0, backend="cpu", variant=variant)
            self.assertEqual(got.dtype, np.float32)
            err = np.sqrt(np.mean((got - want) ** 2) / np.mean(want ** 2))
            self.assertLess(err, 1e-4, variant)

    def test_streaming_matches_whole_array(self):
        x = coloured(20000, 3)
        psd = transient.psd_welch(x, RATE, 512)
        whole = transient.whiten(x, RATE, psd, fmin=30.0, backend="cpu")
        w = transient.Whitener(RATE, psd, fmin=30.0, backend="cpu")
        d = w.latency
        self.assertEqual(d, w.half_len + w.fft_len - (2 * w.half_len + 1) + 1)
        rng = np.random.default_rng(4)
        cuts = np.sort(rng.integers(0, len(x), 40))
        y = np.concatenate([w.process(c) for c in np.split(x, cuts)])
        self.assertEqual(w.position, len(x))
        np.testing.assert_array_equal(y[:d], 0)
        np.testing.assert_array_equal(y[d:], whole[:len(x) - d])
        w.reset()
        np.testing.assert_array_equal(w.process(x), y)

    def test_unit_variance(self):
        x = coloured(1 << 18, 5)
        psd = transient.psd_welch(x, RATE, 2048)
        y = transient.whiten(x, RATE, psd, fmin=20.0)
        y = y[2048:-2048].astype(np.float64)
        f, p = signal.welch(y, RATE, nperseg=1024)
        band = (f > 100.0) & (f < 1900.0)
        ratio = p[band] / (2.0 / RATE)
        self.assertLess(abs(ratio.mean() - 1.0), 0.03)
        self.assertLess(np.abs(ratio - 1.0).max(), 0.25)
        # Below fmin the truncated filter leaks little (its response is smoothed).
        self.assertLess(p[f < 5.0].max(), 0.02 * 2.0 / RATE)

    def test_nan_is_gated(self):
        x = coloured(20000, 6)
        psd = transient.psd_welch(x, RATE, 512)
        x[10000] = np.nan
        w = transient.Whitener(RATE, psd, fmin=20.0, backend="cpu")
        y = w.process(x)
        self.assertTrue(np.all(np.isfinite(y)))
        self.assertEqual(w.gated, 2 * w.half_len + 1)
        t = 10000 + w.latency
        np.testing.assert_array_equal(y[t - w.half_len:t + w.half_len + 1], 0)
        self.assertNotEqual(y[t + w.half_len + 1], 0)

    def test_psd_file_and_design(self):
        f = transient.psd_frequencies(RATE, 4096)
        self.assertEqual(len(f), 2049)
        self.assertEqual(f[1], 1.0)
        design = transient.psd_design(RATE, 4096)
        self.assertTrue(np.all(np.isinf(design[:10])))
        self.assertAlmostEqual(design[215] / 3.3e-48, 1.0, places=12)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "asd.txt")
            ff = np.arange(5.0, 3000.0, 0.25)
            np.savetxt(path, np.column_stack([ff, np.full_like(ff, np.sqrt(design[50]))]))
            flat = transient.psd_from_file(path, RATE, 4096, asd=True)
            np.testing.assert_allclose(flat, design[50], rtol=1e-12)
            # Log-log interpolation, as numpy computes it.
            rows = np.column_stack([[10.0, 100.0, 1000.0, 5000.0], [1e-40, 3e-46, 2e-47, 1e-46]])
            np.savetxt(path, rows)
            got = transient.psd_from_file(path, RATE, 4096, asd=False)
            want = np.exp(np.interp(np.log(np.maximum(f, 1e-300)), np.log(rows[:, 0]),
                                    np.log(rows[:, 1])))
            np.testing.assert_allclose(got, want, rtol=1e-12)
            with open(path, "w") as fp:
                fp.write("10 1e-20\n5 1e-20\n")
            with self.assertRaisesRegex(ValueError, "asd.txt:2: frequencies must increase"):
                transient.psd_from_file(path, RATE, 4096)
            with self.assertRaisesRegex(ValueError, "nothing.txt"):
                transient.psd_from_file(os.path.join(tmp, "nothing.txt"), RATE, 4096)
        # The design curve whitens with fmin >= 10 Hz only.
        x = np.zeros(10000, np.float32)
        with self.assertRaisesRegex(ValueError, "5 Hz"):
            transient.whiten(x, RATE, design, fmin=5.0)
        self.assertEqual(len(transient.whiten(x, RATE, design, fmin=10.0)), len(x))

    def test_bad_arguments(self):
        psd = np.ones(257)
        with self.assertRaisesRegex(ValueError, "fmin"):
            transient.Whitener(RATE, psd, fmin=3000.0)
        with self.assertRaisesRegex(ValueError, "half_len"):
            transient.Whitener(RATE, psd, half_len=256)
        with self.assertRaisesRegex(ValueError, "psd"):
            transient.Whitener(RATE, np.ones((3, 3)))
        with self.assertRaisesRegex(ValueError, "backend"):
            transient.Whitener(RATE, psd, backend="tpu")


if __name__ == "__main__":
    unittest.main()
