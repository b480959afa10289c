#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Flowgraph tests of the frb_search_f block (CPU backend): injected dispersed
bursts found at their DM, time and S/N for any chunking (one close to the end
of the stream), the DM-time plane output against dedisperse_ff, the real
29.fil through filterbank_source, the threshold callback, a stream whose
header is not the block's, and parameter errors."""

import math
import os

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient

import fil_testdata as fd

HERE = os.path.dirname(os.path.abspath(__file__))
FIL = os.path.join(HERE, os.pardir, os.pardir, "examples", "data", "29.fil")

# 64 channels of 2 MHz below 1500 MHz, 1 ms sampling.
NCHAN, FCH1, FOFF, TSAMP = 64, 1500.0, -2.0, 1e-3
N = 12000
SNR = 30.0
WIDTH = 4
DMS = transient.dedisp_dm_list(NCHAN, FCH1, FOFF, TSAMP, 0.0, 600.0)
# (DM trial, start sample at the top of the band); the last one close to the
# end. On trials of the plan, so that the search can reach the injected S/N.
BURSTS = [(DMS[int(k)], s) for k, s in ((0.25 * len(DMS), 3000), (0.5 * len(DMS), 6500),
                                       (0.75 * len(DMS), N - 400))]


def field(seed=1):
    x = np.random.default_rng(seed).normal(0.0, 1.0, (N, NCHAN)).astype(np.float32)
    amp = SNR / math.sqrt(WIDTH * NCHAN)
    for dm, start in BURSTS:
        x = fd.inject(x, dm, start, WIDTH, amp, FCH1, FOFF, TSAMP)
    return x.astype(np.float32)


def pulses(dbg):
    out = []
    for i in range(dbg.num_messages()):
        out.extend(pmt.to_python(dbg.get_message(i))["pulses"])
    return out


def search(**kw):
    # zero_dm off: the injected optimum is that of the raw data
    args = dict(dm_min=0.0, dm_max=600.0, zero_dm=False, max_width=64, window=1024,
                backend="cpu")
    args.update(kw)
    return transient.frb_search_f(NCHAN, FCH1, FOFF, TSAMP, **args)


class qa_frb_search_f(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_search(self, x, blk, max_items=None, src_items=None):
        src = blocks.vector_source_f(x.ravel().tolist(), False, x.shape[1])
        dbg = blocks.message_debug()
        if src_items:
            src.set_max_noutput_items(src_items)
        if max_items:
            blk.set_max_noutput_items(max_items)
        self.tb = gr.top_block()
        self.tb.connect(src, blk)
        snk = None
        if blk.plane_output():
            snk = blocks.vector_sink_f(blk.ndm())
            self.tb.connect(blk, snk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        # the block may run again in another flow graph: forget this receiver
        self.tb.msg_disconnect((blk, "detects"), (dbg, "store"))
        return pulses(dbg), snk

    def test_001_injected_bursts_any_chunking(self):
        x = field()
        first = None
        for max_items, src_items in ((None, None), (None, 7), (None, 1000)):
            blk = search()
            got, _ = self.run_search(x, blk, max_items, src_items)
            msg = "chunks %s/%s: %s" % (max_items, src_items, got)
            self.assertEqual(len(got), len(BURSTS), msg)
            self.assertEqual(blk.candidates(), len(BURSTS))
            dms = list(blk.dms())
            self.assertEqual(dms, list(DMS))
            for p, (dm, start) in zip(sorted(got, key=lambda p: p["sample"]), BURSTS):
                # DM within one trial, time within the width, S/N within 10 %
                self.assertLessEqual(abs(p["channel"] - dms.index(dm)), 1, msg)
                self.assertLessEqual(abs(p["sample"] - (start + (WIDTH - 1) // 2)), WIDTH,
                                     msg)
                self.assertAlmostEqual(p["time"], p["sample"] * TSAMP, places=9)
                self.assertLessEqual(p["start"], p["sample"])
                self.assertGreater(p["snr"], 0.9 * SNR, msg)
                self.assertLess(p["snr"], 1.1 * SNR, msg)
                self.assertLessEqual(p["dm_lo"], p["dm"])
                self.assertGreaterEqual(p["dm_hi"], p["dm"])
                self.assertEqual(dms[p["channel"]], p["dm"])
                self.assertGreaterEqual(p["members"], 1)
            key = sorted((p["sample"], p["channel"], p["width"], p["snr"]) for p in got)
            if first is None:
                first = key
            self.assertEqual(key, first, msg)  # the same for any chunking

    def test_002_plane_output_is_the_dedispersed_plane(self):
        x = field(seed=2)
        blk = search(plane_output=True)
        _, snk = self.run_search(x, blk, 999)
        plane = np.asarray(snk.data(), np.float32).reshape(-1, blk.ndm())
        self.assertEqual(plane.shape, (N, blk.ndm()))  # time-aligned, complete
        ded = transient.dedisperse_ff(NCHAN, FCH1, FOFF, TSAMP, 0.0, 600.0,
                                      backend="cpu")
        self.assertEqual(list(ded.dms()), list(blk.dms()))
        tb = gr.top_block()
        src = blocks.vector_source_f(x.ravel().tolist(), False, NCHAN)
        ref_snk = blocks.vector_sink_f(ded.ndm())
        tb.connect(src, ded, ref_snk)
        tb.run()
        ref = np.asarray(ref_snk.data(), np.float32).reshape(-1, ded.ndm())
        complete = N - blk.max_delay()
        np.testing.assert_array_equal(plane[:complete], ref[:complete])
        # DM 0 needs no later spectrum; the largest DM's last items do
        self.assertTrue(np.all(np.isfinite(plane[:, 0])))
        self.assertTrue(np.all(np.isnan(plane[-1, 1:])))

    def test_003_real_burst_from_a_file(self):
        h = transient.filterbank_source.header(FIL)
        src = transient.filterbank_source(FIL)
        blk = transient.frb_search_f(h.nchans, h.fch1, h.foff, h.tsamp, 0.0, 1000.0,
                                     backend="cpu")
        self.assertEqual(blk.ndm(), 208)  # dedisp/Heimdall's list for this header
        self.assertEqual(blk.plane_output(), False)
        dbg = blocks.message_debug()
        self.tb.connect(src, blk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        got = pulses(dbg)
        self.assertEqual(len(got), 1, got)  # the burst, nothing else above 8
        self.assertLess(abs(got[0]["dm"] - 475.3), 10.0, got)
        self.assertLess(abs(got[0]["time"] - 2.029), 0.005, got)
        self.assertGreater(got[0]["snr"], 12.0, got)

    def test_004_threshold_callback(self):
        x = field(seed=3)
        blk = search()
        self.assertRaises(ValueError, blk.set_threshold, float("nan"))
        blk.set_threshold(1000.0)
        self.assertEqual(blk.threshold(), 1000.0)
        got, _ = self.run_search(x, blk)
        self.assertEqual(got, [])
        # the next run with a usable threshold finds them again
        blk.set_threshold(8.0)
        got, _ = self.run_search(x, blk)
        self.assertEqual(len(got), len(BURSTS))

    def test_005_header_not_the_blocks(self):
        # 29.fil played into a search made for another band: refused, the
        # flow graph still ends.
        src = transient.filterbank_source(FIL)
        blk = transient.frb_search_f(336, 1130.0, 1.0, 0.00126646875, 0.0, 500.0,
                                     backend="cpu")
        dbg = blocks.message_debug()
        self.tb.connect(src, blk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        self.assertEqual(pulses(dbg), [])
        self.assertEqual(blk.searched(), 0)

    def test_006_short_stream_searches_nothing(self):
        x = field(seed=4)[:800]  # shorter than the first statistics window
        blk = search()
        got, _ = self.run_search(x, blk)
        self.assertEqual(got, [])
        self.assertEqual(blk.warmup(), 1024)

    def test_007_invalid_parameters(self):
        self.assertRaises(ValueError, search, threshold=float("inf"))
        self.assertRaises(ValueError, search, algorithm="fdmt")
        self.assertRaises(ValueError, search, widths=[3])
        self.assertRaises(ValueError, search, widths=[])
        self.assertRaises(ValueError, search, norm_mode="pink")
        self.assertRaises(ValueError, search, tolerance=1.0)
        self.assertRaises(ValueError, search, mask=[64])
        self.assertRaises(ValueError, search, backend="gpu")
        self.assertRaises(ValueError, transient.frb_search_f, NCHAN, FCH1, 0.0, TSAMP)

    def test_008_device_list(self):
        # several devices need the CUDA backend and no plane output; a list of
        # one is that device (the CPU backend runs as without it)
        self.assertRaises(ValueError, search, devices=[0, 0])
        self.assertRaises(ValueError, search, devices=[0] * 17)
        self.assertRaises(ValueError, search, devices=[0, -1])
        self.assertRaises(ValueError, search, devices=[0, 0], backend="cuda",
                          plane_output=True)
        x = field()
        got, _ = self.run_search(x, search(devices=[0]))
        want, _ = self.run_search(x, search())
        self.assertEqual(got, want)
        self.assertEqual(len(got), len(BURSTS))


if __name__ == "__main__":
    gr_unittest.run(qa_frb_search_f)
