#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of gnuradio.transient.dispersed_pulse (the simulated receiver of the
live FRB example) and of the candidate summary of frb_candidates."""

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio.transient import dispersed_pulse as dp
from gnuradio.transient import frb_candidates

FS, FC, DM = 1.024e6, 400e6, 60.0


class qa_dispersed_pulse(gr_unittest.TestCase):

    def test_001_sweep_follows_the_dispersion_delay(self):
        # Channelised like the live example (FFT with shift, no window): the
        # burst's power peaks in each channel at its delay after the top.
        h, lead = dp.dispersed_burst(DM, FC, FS, 1e4, 64, seed=3)
        self.assertAlmostEqual(float(np.sum(np.abs(h)**2)), 1e4, delta=1.0)
        nfft = 64
        m = len(h) // nfft
        spec = np.fft.fftshift(np.fft.fft(h[:m * nfft].reshape(m, nfft), axis=1), axes=1)
        power = np.abs(spec)**2
        f_top = (FC + FS / 2) * 1e-6
        df = FS / nfft * 1e-6
        for k in range(1, nfft):  # channel 0 holds both band edges
            f = (FC - FS / 2 + k * FS / nfft) * 1e-6
            # the channel's band sweeps by between these delays; the burst
            # lasts 64 samples, a frame nfft
            early = lead + dp.dispersion_delay(DM, f + df / 2, f_top) * FS
            late = lead + dp.dispersion_delay(DM, f - df / 2, f_top) * FS + 64
            frame = np.argmax(power[:, k]) * nfft
            self.assertTrue(early - nfft <= frame <= late, (k, frame, early, late))
        self.assertAlmostEqual(dp.band_sweep(DM, FC, FS),
                               dp.dispersion_delay(DM, 399.488, 400.512), places=12)

    def test_002_source_stream(self):
        n = 300000
        src = dp.dispersed_pulse_source(FS, FC, DM, 0.1, 0.05, 5000.0, 16, n, seed=2)
        self.assertEqual(src.truth(), [51200, 153600, 256000])
        snk = blocks.vector_sink_c()
        src.set_max_noutput_items(777)
        tb = gr.top_block()
        tb.connect(src, snk)
        tb.run()
        z = np.asarray(snk.data())
        self.assertEqual(len(z), n)
        self.assertAlmostEqual(float(np.mean(np.abs(z[:40000])**2)), 1.0, delta=0.03)
        # each burst adds its energy over its sweep
        sweep = int(dp.band_sweep(DM, FC, FS) * FS)
        for t in src.truth()[:2]:
            extra = np.sum(np.abs(z[t - 100:t + sweep + 200])**2) - (sweep + 300)
            self.assertAlmostEqual(extra, 5000.0, delta=600.0)

    def test_002b_source_chunking(self):
        """The same samples whatever the scheduler's work-call sizes."""
        n = 20000

        def run(mno):
            src = dp.dispersed_pulse_source(FS, FC, DM, 0.1, 0.05, 5000.0, 16, n, seed=3)
            snk = blocks.vector_sink_c()
            src.set_max_noutput_items(mno)
            tb = gr.top_block()
            tb.connect(src, snk)
            tb.run()
            return np.asarray(snk.data())

        a = run(1)
        for mno in (7, 1000, 8192):
            np.testing.assert_array_equal(run(mno), a)

    def test_003_invalid(self):
        self.assertRaises(ValueError, dp.dispersed_burst, -1.0, FC, FS)
        self.assertRaises(ValueError, dp.dispersed_burst, DM, 1e5, FS)
        self.assertRaises(ValueError, dp.dispersed_burst, DM, FC, FS, 1.0, 0)
        self.assertRaises(ValueError, dp.dispersed_pulse_source, FS, FC, DM, 0.0)
        self.assertRaises(ValueError, dp.dispersed_pulse_source, nsamples=-1)
        self.assertRaises(ValueError, dp.dispersed_pulse_source().truth)

    def test_004_summary(self):
        c = [dict(dm=60.1, time=1.0002, sample=2000, width=2, snr=30.0, members=4),
             dict(dm=100.0, time=2.5, sample=5000, width=1, snr=9.0, members=1)]
        self.assertEqual(
            frb_candidates.summary(c, dm=60.0, dm_tol=5.0, period=1.0, first=1.0,
                                   time_tol=0.01),
            "candidates: 2, at DM 60 +- 5: 1, on the period: 1, off: 1, best: DM 60.10 "
            "at 1.0002 s (sample 2000), width 2, S/N 30.0, 4 members")
        self.assertEqual(frb_candidates.summary([]), "candidates: 0")


if __name__ == "__main__":
    gr_unittest.run(qa_dispersed_pulse)
