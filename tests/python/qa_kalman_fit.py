#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of the Kalman model fit (gnuradio.transient.kalman_ar, kalman_fit,
kalman_roc): AR coefficients of synthetic AR(2) and AR(4) processes within
their standard errors, order selection on long records, stability on
near-unit roots, the model file round trip, a detector built from fitted
models against one built from the true models (kalman_detector_ff at 1e-4
false alarms per sample), bad inputs."""

import os
import tempfile

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient
from gnuradio.transient import kalman_ar as kar
from gnuradio.transient import kalman_fit as kf
from gnuradio.transient import kalman_roc as kr
from gnuradio.transient import kalman_signals as ks

AR2 = [1.2, -0.5]
AR4 = [0.9, -0.6, 0.3, -0.2]


def ar_process(a, n, seed, var=1.0, burn=500):
    """A stationary AR(a) record of n samples (burn-in dropped)."""
    rng = np.random.default_rng(seed)
    return ks._ar(a, rng.normal(0.0, np.sqrt(var), n + burn))[burn:]


def burst_recording(n, spacing, seed, **kw):
    """Bursts every `spacing` samples from 1000 on: (x, signal ranges,
    noise ranges between them)."""
    M = kw["M"]
    on = np.arange(1000, n - M, spacing)
    x, on = ks.gaussian_bursts(n, on, seed=seed, **kw)
    signal = [(int(o), int(o) + M - 1) for o in on]
    noise = [(0, 1000)] + [(b + M, a) for (_, b), (a, _) in zip(signal[:-1], signal[1:])]
    return x, signal, noise


class qa_kalman_fit(gr_unittest.TestCase):

    def test_001_coefficients_within_standard_errors(self):
        # 40 records of 4000 samples per process and method: every estimate
        # within 4.5 standard errors of the truth, and the mean squared
        # z-score within [0.6, 1.5] (1 when the standard errors are right;
        # its own standard error is about 0.2 for 40 records): standard
        # errors off by a factor of 1.3 either way fail.
        for a in (AR2, AR4):
            for method in ("burg", "yule-walker"):
                z = []
                for rep in range(40):
                    x = ar_process(a, 4000, seed=100 + rep)
                    fit = kar.fit_ar(x, method=method, order=len(a))
                    self.assertEqual(fit.method, method)
                    z.extend((fit.coeffs - a) / fit.stderr)
                z = np.abs(np.array(z))
                self.assertLess(z.max(), 4.5, (a, method))
                self.assertGreaterEqual(np.mean(z**2), 0.6, (a, method))
                self.assertLessEqual(np.mean(z**2), 1.5, (a, method))

    def test_002_innovation_variance(self):
        x = ar_process(AR4, 50000, seed=7, var=2.5)
        for method in ("burg", "yule-walker"):
            fit = kar.fit_ar(x, method=method)
            # relative standard error of a variance estimate: sqrt(2/N) = 0.6 %
            self.assertAlmostEqual(fit.var / 2.5, 1.0, delta=0.03)

    def test_003_order_selection_long_records(self):
        for a in (AR2, AR4):
            for seed in (1, 2, 3):
                x = ar_process(a, 50000, seed=seed)
                for method in ("burg", "yule-walker"):
                    self.assertEqual(kar.fit_ar(x, method=method, criterion="bic").order,
                                     len(a))
                    # AIC is not consistent (it may overfit) but never underfits
                    # a long record
                    self.assertGreaterEqual(
                        kar.fit_ar(x, method=method, criterion="aic").order, len(a))

    def test_004_auto_method(self):
        self.assertEqual(kar.fit_ar(ar_process(AR2, 2000, 1)).method, "burg")
        self.assertEqual(kar.fit_ar(ar_process(AR2, 20000, 1)).method, "yule-walker")
        # Burg pools several segments of one process
        segs = [ar_process(AR2, 500, s) for s in range(20)]
        fit = kar.fit_ar(segs, method="burg", order=2)
        self.assertTrue(np.all(np.abs(fit.coeffs - AR2) < 4 * fit.stderr))

    def test_005_stability_near_unit_root(self):
        # complex poles at radius 0.9999: estimates beyond 0.999 are pulled
        # inside by bandwidth expansion, the pole angle kept
        r, w = 0.9999, 0.3
        a = [2 * r * np.cos(w), -r * r]
        pulled = 0
        for seed in range(6):
            x = ar_process(a, 3000, seed=seed, burn=20000)
            for method in ("burg", "yule-walker"):
                fit = kar.fit_ar(x, method=method, order=2)
                self.assertLessEqual(fit.radius, 0.999 + 1e-9)
                self.assertTrue(np.all(np.abs(fit.reflection) < 1.0))
                if fit.radius_before is not None:
                    pulled += 1
                    self.assertGreater(fit.radius_before, 0.999)
                    angle = np.abs(np.angle(np.roots([1.0, -fit.coeffs[0], -fit.coeffs[1]])))
                    self.assertAlmostEqual(angle[0], w, delta=0.01)
        self.assertGreater(pulled, 0)
        # a unit root itself (random walk)
        x = np.cumsum(np.random.default_rng(5).normal(size=5000))
        for method in ("burg", "yule-walker"):
            fit = kar.fit_ar(x, method=method, max_order=3)
            self.assertLessEqual(fit.radius, 0.999 + 1e-9)
        # stricter limit
        a2, before = kar.stabilize([1.8, -0.995], 0.95)
        self.assertAlmostEqual(kar.ar_radius(a2), 0.95, places=9)
        self.assertAlmostEqual(before, np.sqrt(0.995), places=9)

    def test_006_marginal_autocovariance(self):
        # an autocovariance that is not positive definite (what subtracting
        # the noise can leave): Levinson stops before |k| >= 1
        coeffs, k, err = kar.levinson([1.0, 0.9, 0.2, 0.9], 3)
        self.assertEqual(len(coeffs), 1)
        self.assertTrue(np.all(err > 0))
        self.assertEqual(kar.levinson([-0.1, 0.0], 1)[0], [])
        # Burg on a pure sinusoid: |k| < 1 kept, a stable model returned
        t = np.arange(2000)
        fit = kar.fit_ar(np.sin(0.2 * t) + 1e-6 * np.cos(1.3 * t), method="burg", order=2)
        self.assertLessEqual(fit.radius, 0.999 + 1e-9)

    def test_007_signal_model_and_file_round_trip(self):
        M = 92
        kw = dict(M=M, noise_ar=AR2, noise_var=1.0, target_ar=[0.3, -0.6], target_var=0.5)
        x, signal, noise = burst_recording(300000, 2000, seed=5, **kw)
        fit = kf.fit_models(x, noise, signal)
        self.assertEqual((fit.M, fit.noise.order, fit.target.order), (M, 2, 2))
        self.assertEqual(fit.envelope, "rect")
        self.assertTrue(np.all(np.abs(fit.noise.coeffs - AR2) < 4 * fit.noise.stderr))
        self.assertTrue(np.all(np.abs(fit.target.coeffs - [0.3, -0.6]) <
                               4 * fit.target.stderr))
        self.assertAlmostEqual(fit.target_var / 0.5, 1.0, delta=0.1)
        self.assertAlmostEqual(fit.alpha, len(signal) / 300000.0)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "fit.trkalm")
            fit.save(path)
            m = transient.kalman_model_load(path)
            Q = m["Q"]
            self.assertEqual((Q, m["M"]), (2, M))
            np.testing.assert_array_equal(m["A"][0, :2], fit.target.coeffs)
            np.testing.assert_array_equal(m["A"][Q, Q:Q + 2], fit.noise.coeffs)
            # pure AR noise: its one-step prediction error is its innovation
            # (Sigma_M); at the onset the burst adds target_var g[0] (Sigma_1)
            self.assertAlmostEqual(m["sigma"][-1] / fit.noise.var, 1.0, places=9)
            self.assertAlmostEqual(m["sigma"][0] / (fit.noise.var + fit.target_var), 1.0,
                                   places=9)
            # the detector with the file gives the LLR of the block that designs
            # the same parameters itself, bit for bit
            y = x[:20000]
            from_file = kr.detector_llr(y, path, 30, fit.alpha)
            tb = gr.top_block()
            src = blocks.vector_source_f(y, False)
            det = transient.kalman_detector_ff(M, 30, 0.0, fit.alpha, list(fit.noise.coeffs),
                                               fit.noise.var, 0.0, list(fit.target.coeffs),
                                               fit.target_var, "rect", backend="cpu")
            snk = blocks.vector_sink_f()
            tb.connect(src, det, snk)
            tb.run()
            np.testing.assert_array_equal(from_file, np.array(snk.data()))
            self.assertGreater(from_file.max(), 0.0)  # the bursts show

    def test_008_envelope(self):
        M = 120
        kw = dict(M=M, noise_ar=[0.5], noise_var=1.0, target_ar=[0.7], target_var=3.0,
                  env="gauss", env_param=15.0)
        x, signal, noise = burst_recording(400000, 1000, seed=3, **kw)
        fit = kf.fit_models(x, noise, signal)
        self.assertEqual(fit.envelope, "gauss")
        self.assertAlmostEqual(fit.env_param / 15.0, 1.0, delta=0.15)
        g = ks.envelope("gauss", M, 15.0)
        self.assertLess(np.max(np.abs(fit.g * fit.target_var - 3.0 * g)), 0.3 * 3.0)
        # a fixed family
        fit = kf.fit_models(x, noise, signal, envelope="exp")
        self.assertEqual(fit.envelope, "exp")

    def test_009_fitted_detector_against_true(self):
        # AR(2) bursts under a raised-cosine envelope in AR(2) noise; fitted
        # from 149 labelled bursts, tested on 400 new bursts and 600000 new
        # noise samples: at 1e-4 false alarms per sample the detector of the
        # fitted models finds at least 95 % of what the true models' finds.
        # At the detector's default alpha 1e-9 and, on stronger bursts (the
        # detection probability is lower there), at the fitted alpha (the
        # onset rate).
        M, Ns = 92, 30
        for alpha, target_var in ((1e-9, 0.4), (None, 1.3)):
            kw = dict(M=M, noise_ar=AR2, noise_var=1.0, target_ar=[0.3, -0.6],
                      target_var=target_var, env="raised_cosine")
            x, signal, noise = burst_recording(300000, 2000, seed=11, **kw)
            fit = kf.fit_models(x, noise, signal)
            self.assertEqual(fit.envelope, "raised_cosine")
            alpha = alpha or fit.alpha
            onsets = np.arange(600000, 1000000, 1000)
            y, onsets = ks.gaussian_bursts(1000000, onsets, seed=12, **kw)
            bursts = [(int(o), int(o) + M - 1) for o in onsets]
            mask = np.zeros(len(y), dtype=bool)
            mask[2 * M:600000 - M] = True
            with tempfile.TemporaryDirectory() as d:
                true_path = os.path.join(d, "true.trkalm")
                fit_path = os.path.join(d, "fit.trkalm")
                transient.kalman_detector_ff.save_model(true_path, M, AR2, 1.0, 0.0,
                                                        [0.3, -0.6], target_var,
                                                        "raised_cosine")
                fit.save(fit_path)
                pd_true, _ = kr.roc(kr.detector_llr(y, true_path, Ns, alpha), bursts, mask)
                pd_fit, _ = kr.roc(kr.detector_llr(y, fit_path, Ns, alpha), bursts, mask)
            pd_energy, _ = kr.roc(kr.energy_statistic(y, Ns), bursts, mask)
            self.assertGreater(pd_true[2], 0.3)
            self.assertLess(pd_true[2], 0.9)
            self.assertGreaterEqual(pd_fit[2], 0.95 * pd_true[2], (alpha, pd_fit, pd_true))
            self.assertGreater(pd_fit[2], pd_energy[2])

    def test_010_roc(self):
        stat = np.zeros(10000)
        stat[:100] = np.arange(100)  # 100 noise samples above 0
        mask = np.ones(10000, dtype=bool)
        stat[5000:5010] = 1000.0
        mask[5000:5010] = False
        pd, thr = kr.roc(stat, [(5000, 5010), (6000, 6010)], mask, [1e-2, 1e-3, 1e-5])
        self.assertEqual(pd[0], 0.5)
        self.assertEqual(thr[0], 0.0)
        self.assertEqual(thr[1], 90.0)  # floor(9.99) = 9 noise samples above
        self.assertTrue(np.isnan(pd[2]))  # 1e-5 of 9990 samples: no threshold
        e = kr.energy_statistic(np.array([1.0, 3.0, 1.0]), 2)
        np.testing.assert_allclose(e, [1.0, 5.0, 5.0])
        m = kr.noise_mask(20, [(-5, -3), (2, 4), (18, 25)], 3, start=1)
        self.assertEqual(list(np.nonzero(m)[0]), [1] + list(range(7, 18)))

    def test_011_bad_input(self):
        x = ar_process(AR2, 1000, 1)
        bad = x.copy()
        bad[10] = np.nan
        for call in (lambda: kar.fit_ar(bad), lambda: kar.fit_ar(x[:20], max_order=8),
                     lambda: kar.fit_ar(x, criterion="hqc"),
                     lambda: kar.fit_ar(x, method="ls"), lambda: kar.fit_ar(x, max_order=33),
                     lambda: kar.fit_ar(x, max_order=0), lambda: kar.fit_ar(np.zeros(500)),
                     lambda: kar.fit_ar([]), lambda: kar.stabilize([0.5], 1.0)):
            self.assertRaises(ValueError, call)
        kw = dict(M=50, noise_ar=[0.5], noise_var=1.0, target_ar=[0.5], target_var=1.0)
        y, signal, noise = burst_recording(20000, 500, seed=2, **kw)
        for args in (dict(noise=[(0, 30000)], signal=signal),
                     dict(noise=[(100, 100)], signal=signal), dict(noise=noise, signal=[]),
                     dict(noise=noise, signal=signal, M=2),
                     dict(noise=noise, signal=signal, alpha=1.5),
                     dict(noise=noise, signal=signal, envelope="square"),
                     dict(noise=noise + [(signal[0][0] - 5, signal[0][0] + 5)], signal=signal)):
            self.assertRaises(ValueError, kf.fit_models, y, **args)
        limit = kf.MAX_BURST_SAMPLES
        kf.MAX_BURST_SAMPLES = 1000
        try:
            self.assertRaisesRegex(ValueError, "at most 1000 are fitted", kf.fit_models, y,
                                   noise, signal)
        finally:
            kf.MAX_BURST_SAMPLES = limit
        for where in (noise[3][0] + 5, signal[2][0] + 5):
            z = y.copy()
            z[where] = np.inf
            self.assertRaisesRegex(ValueError, "range .* holds non-finite samples",
                                   kf.fit_models, z, noise, signal)
        # "signal" ranges without a burst: no power above the noise
        half = len(noise) // 2
        quiet = [(a + 200, a + 249) for a, _ in noise[half:]]
        with self.assertRaisesRegex(ValueError, "no power above the noise"):
            kf.fit_models(y, noise[:half], quiet)
        with tempfile.TemporaryDirectory() as d:
            save = transient.kalman_detector_ff.save_model
            self.assertRaises(ValueError, save, os.path.join(d, "m"), 10, [1.0, 0.1], 1.0, 0.0,
                              [0.5], 1.0)  # unstable noise
            self.assertRaises(RuntimeError, transient.kalman_model_load, os.path.join(d, "m"))
            self.assertRaises(RuntimeError, save, os.path.join(d, "no", "m"), 10, [0.5], 1.0,
                              0.0, [0.5], 1.0)


if __name__ == "__main__":
    gr_unittest.run(qa_kalman_fit)
