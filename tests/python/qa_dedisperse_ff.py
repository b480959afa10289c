#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Flowgraph tests of the dedisperse_ff block (CPU backend): the dedispersion
definition (transient/dedisp.h) for any chunking, masks, zero-DM, scale, the
DM list, time alignment, tags and parameter errors."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient

import fil_testdata as fd

# A small band: 32 channels of 1 MHz below 1400 MHz, 1 ms sampling.
NCHAN, FCH1, FOFF, TSAMP = 32, 1400.0, -1.0, 1e-3


def spectra(n, nchan=NCHAN, seed=1):
    return np.random.default_rng(seed).normal(0.0, 1.0, (n, nchan)).astype(np.float32)


def delay_table(blk):
    return np.array([[blk.delay(d, c) for c in range(blk.nchan())]
                     for d in range(blk.ndm())])


class qa_dedisperse_ff(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_block(self, x, blk, max_items=None, src_items=None, tags=()):
        src = blocks.vector_source_f(x.ravel().tolist(), False, x.shape[1], list(tags))
        snk = blocks.vector_sink_f(blk.ndm())
        if src_items:
            src.set_max_noutput_items(src_items)
        if max_items:
            blk.set_max_noutput_items(max_items)
        self.tb = gr.top_block()
        self.tb.connect(src, blk, snk)
        self.tb.run()
        return np.asarray(snk.data(), np.float32).reshape(-1, blk.ndm()), snk

    def test_001_definition_any_chunking(self):
        n = 3000
        x = spectra(n)
        for foff, fch1 in ((FOFF, FCH1), (1.0, FCH1 - NCHAN + 1)):
            blk = transient.dedisperse_ff(NCHAN, fch1, foff, TSAMP, 0.0, 300.0,
                                          backend="cpu")
            self.assertGreater(blk.ndm(), 10)
            self.assertEqual(blk.latency(), int(delay_table(blk).max()))
            # lowest channel at the largest DM: the largest delay
            low = NCHAN - 1 if foff < 0 else 0
            self.assertEqual(blk.delay(blk.ndm() - 1, low), blk.latency())
            ref = fd.dedisperse(x, delay_table(blk))
            for max_items, src_items in ((None, None), (37, 1), (500, 333)):
                y, _ = self.run_block(x, blk, max_items, src_items)
                msg = "foff %g chunks %s/%s" % (foff, max_items, src_items)
                self.assertEqual(y.shape, (n, blk.ndm()), msg)  # time-aligned, complete
                np.testing.assert_array_equal(y, ref, msg)

    def test_002_mask_zero_dm_mean(self):
        n = 2000
        x = spectra(n, seed=2) + 5.0
        mask = [0, 7, 31]
        used = np.ones(NCHAN, bool)
        used[mask] = False
        for zero_dm in (False, True):
            for scale in ("sum", "mean"):
                blk = transient.dedisperse_ff(NCHAN, FCH1, FOFF, TSAMP, 0.0, 200.0,
                                              mask=mask, zero_dm=zero_dm, scale=scale,
                                              backend="cpu")
                self.assertEqual(blk.nused(), NCHAN - len(mask))
                y, _ = self.run_block(x, blk, 256)
                ref = fd.dedisperse(x, delay_table(blk), used, zero_dm, scale == "mean")
                np.testing.assert_array_equal(y, ref, "%s %s" % (zero_dm, scale))

    def test_003_dm_list(self):
        gen = transient.dedisp_dm_list(NCHAN, FCH1, FOFF, TSAMP, 0.0, 300.0)
        blk = transient.dedisperse_ff(NCHAN, FCH1, FOFF, TSAMP, 0.0, 300.0, backend="cpu")
        self.assertEqual(list(blk.dms()), list(gen))
        self.assertEqual(gen[0], 0.0)
        self.assertGreaterEqual(gen[-1], 300.0)
        self.assertLess(gen[-2], 300.0)
        self.assertTrue(all(b > a for a, b in zip(gen, gen[1:])))
        explicit = [0.0, 50.0, 100.0, 250.0]
        blk = transient.dedisperse_ff(NCHAN, FCH1, FOFF, TSAMP, dm_list=explicit,
                                      backend="cpu")
        self.assertEqual(blk.ndm(), 4)
        self.assertEqual(list(blk.dms()), explicit)
        # DM 0: no delay, the output is the channel sum of the same spectrum
        x = spectra(500, seed=3)
        y, _ = self.run_block(x, blk)
        np.testing.assert_array_equal(y[:, 0], fd.dedisperse(x, [[0] * NCHAN])[:, 0])

    def test_004_burst_peaks_at_its_dm_and_time(self):
        n, dm, start = 4000, 180.0, 1500
        x = fd.inject(spectra(n, seed=4), dm, start, 3, 4.0, FCH1, FOFF, TSAMP)
        blk = transient.dedisperse_ff(NCHAN, FCH1, FOFF, TSAMP, 0.0, 400.0, backend="cpu")
        y, _ = self.run_block(x, blk, 1000)
        p, d = np.unravel_index(np.argmax(y), y.shape)
        dms = np.array(blk.dms())
        self.assertLessEqual(abs(dms[d] - dm), np.max(np.diff(dms)), (dms[d], dm))
        self.assertTrue(start <= p < start + 3, p)

    def test_005_tags_keep_their_item(self):
        n = 1000
        x = spectra(n, seed=5)
        tags = []
        for off in (0, 17, 400, 999):
            t = gr.tag_t()
            t.offset = off
            t.key = pmt.intern("mark")
            t.value = pmt.from_long(off)
            tags.append(t)
        blk = transient.dedisperse_ff(NCHAN, FCH1, FOFF, TSAMP, 0.0, 200.0, backend="cpu")
        _, snk = self.run_block(x, blk, 64, tags=tags)
        got = sorted((t.offset, pmt.to_long(t.value)) for t in snk.tags())
        self.assertEqual(got, [(o, o) for o in (0, 17, 400, 999)])

    def test_006_short_stream(self):
        # Fewer spectra than the latency: every item still comes out.
        blk = transient.dedisperse_ff(NCHAN, FCH1, FOFF, TSAMP, 0.0, 500.0, backend="cpu")
        n = blk.latency() // 2
        x = spectra(n, seed=6)
        y, _ = self.run_block(x, blk)
        np.testing.assert_array_equal(y, fd.dedisperse(x, delay_table(blk)))

    def test_007_invalid_parameters(self):
        make = transient.dedisperse_ff
        self.assertRaises(ValueError, make, NCHAN, FCH1, 0.0, TSAMP)
        self.assertRaises(ValueError, make, NCHAN, FCH1, FOFF, 0.0)
        self.assertRaises(ValueError, make, 0, FCH1, FOFF, TSAMP)
        self.assertRaises(ValueError, make, NCHAN, FCH1, FOFF, TSAMP, 10.0, 5.0, 0.9)
        self.assertRaises(ValueError, make, NCHAN, FCH1, FOFF, TSAMP, mask=[NCHAN])
        self.assertRaises(ValueError, make, NCHAN, FCH1, FOFF, TSAMP, mask=[-1])
        self.assertRaises(ValueError, make, NCHAN, FCH1, FOFF, TSAMP,
                          mask=list(range(NCHAN)))
        self.assertRaises(ValueError, make, NCHAN, FCH1, FOFF, TSAMP, dm_list=[-1.0])
        self.assertRaises(ValueError, make, NCHAN, FCH1, FOFF, TSAMP, scale="median")
        self.assertRaises(ValueError, make, NCHAN, FCH1, FOFF, TSAMP, backend="gpu")


if __name__ == "__main__":
    gr_unittest.run(qa_dedisperse_ff)
