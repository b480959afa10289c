#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Flowgraph tests of the boxcar_search_ff / boxcar_search_cf blocks and the
boxcar helpers of gnuradio.transient (CPU backend)."""

import math
import os
import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient
from gnuradio.transient import timeseries

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, os.pardir, os.pardir, "examples", "data")

# Rectangular pulses (start, width, channel) of S/N `snr` in unit white noise.
PULSES = [(3000, 1, 0), (9000, 4, 0), (15007, 13, 0), (21000, 40, 0), (28123, 64, 0),
          (33001, 7, 0), (40000, 100, 0), (47777, 2, 0)]


def noise(n, nchan=1, seed=1):
    rng = np.random.default_rng(seed)
    shape = (n, ) if nchan == 1 else (n, nchan)
    return rng.normal(0.0, 1.0, shape).astype(np.float32)


def inject(x, pulses, snr):
    """Adds rectangular pulses whose matched boxcar has S/N `snr` (amplitude
    snr / sqrt(width) per sample, unit noise)."""
    y = x.copy()
    for start, width, chan in pulses:
        amp = snr / math.sqrt(width)
        if y.ndim == 1:
            y[start:start + width] += amp
        else:
            y[start:start + width, chan] += amp
    return y


def pulse_tags(sink):
    out = []
    for t in sink.tags():
        if pmt.symbol_to_string(t.key) != "pulse":
            continue
        v = pmt.to_python(t.value)
        out.append((int(t.offset), v))
    return out


def detect_dicts(dbg):
    out = []
    for i in range(dbg.num_messages()):
        msg = pmt.to_python(dbg.get_message(i))
        out.extend(msg["pulses"])
    return out


class qa_boxcar_search_ff(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_block(self, x, blk, nchan=1, max_items=None, src_items=None, complex_in=False):
        """x -> blk -> (snr sink, width sink), detects -> message debug."""
        flat = np.ascontiguousarray(x).ravel()
        if complex_in:
            src = blocks.vector_source_c(flat.tolist(), False, nchan)
        else:
            src = blocks.vector_source_f(flat.astype(np.float32).tolist(), False, nchan)
        snk_s = blocks.vector_sink_f(nchan)
        snk_w = blocks.vector_sink_f(nchan)
        dbg = blocks.message_debug()
        if src_items is not None:
            src.set_max_noutput_items(src_items)
        if max_items is not None:
            blk.set_max_noutput_items(max_items)
        self.tb.connect(src, blk)
        self.tb.connect((blk, 0), snk_s)
        self.tb.connect((blk, 1), snk_w)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        snr = np.asarray(snk_s.data(), dtype=np.float32)
        width = np.asarray(snk_w.data(), dtype=np.float32)
        if nchan > 1:
            snr = snr.reshape(-1, nchan)
            width = width.reshape(-1, nchan)
        return snr, width, snk_s, dbg

    # ---- pulses at the right absolute offsets ------------------------------

    def test_001_injected_pulses_found_at_start(self):
        n = 50000
        x = inject(noise(n, seed=2), PULSES, 25.0)
        blk = transient.boxcar_search_ff(1, "ideal", [], 1, 0, 128, 8.0, "fixed",
                                         fixed_mean=0.0, fixed_sigma=1.0, backend="cpu")
        self.assertEqual(blk.latency(), 127)
        snr, width, snk, dbg = self.run_block(x, blk, max_items=997, src_items=613)
        self.assertEqual(len(snr), n)  # time-aligned, nothing lost at the end
        tags = pulse_tags(snk)
        msgs = detect_dicts(dbg)
        self.assertEqual(len(tags), len(PULSES), tags)
        self.assertEqual(len(msgs), len(tags))
        self.assertEqual(blk.candidates(), len(tags))
        for (off, v), (start, w, chan) in zip(sorted(tags, key=lambda t: t[0]), PULSES):
            # The best boxcar of a strong rectangular pulse is the pulse itself,
            # give or take a sample of noise at its edges.
            self.assertLessEqual(abs(off - start), max(1, w // 8), (off, v, start, w))
            self.assertEqual(off, v["start"])
            self.assertEqual(v["channel"], chan)
            self.assertGreaterEqual(v["members"], 1)
            self.assertLessEqual(abs(v["width"] - w), max(1, w // 4), (v, w))
            self.assertGreater(v["snr"], 20.0)
            # the tag sits on the output sample that holds the event's S/N
            self.assertAlmostEqual(float(snr[off]), v["snr"], places=3)
            self.assertEqual(int(width[off]), v["width"])

    def test_002_outputs_equal_array_search_any_chunking(self):
        n = 40000
        x = inject(noise(n, seed=3), PULSES[:5], 12.0)
        configs = [
            dict(algorithm="boxdit", widths=[16], max_width=200, baseline_window=1001,
                 baseline_mode="block"),
            dict(algorithm="boxdit", widths=[16], max_width=200, baseline_window=1001),
            dict(algorithm="boxdit", widths=[32, 16, 16, 16, 8], max_width=300),
            dict(algorithm="igrid", depth=2, max_width=256),
            dict(algorithm="ideal", max_width=40),
        ]
        for cfg in configs:
            for norm in ("fixed", "white", "levels"):
                ref_s, ref_w = transient.boxcar_search(x, norm_mode=norm, window=4096,
                                                       **cfg)
                for max_items, src_items in ((None, None), (333, 1), (4096, 1000)):
                    self.tb = gr.top_block()
                    blk = transient.boxcar_search_ff(threshold=9.0, norm_mode=norm,
                                                     window=4096, backend="cpu", **cfg)
                    snr, width, _, _ = self.run_block(x, blk, max_items=max_items,
                                                      src_items=src_items)
                    msg = "%s %s chunks %s/%s" % (cfg, norm, max_items, src_items)
                    self.assertEqual(len(snr), n, msg)
                    np.testing.assert_array_equal(snr, ref_s, msg)
                    np.testing.assert_array_equal(width, ref_w.astype(np.float32), msg)

    def test_003_vector_channels(self):
        n, nchan = 30000, 3
        pulses = [(5000, 8, 0), (5000, 30, 2), (12000, 3, 1), (20000, 50, 1),
                  (26000, 16, 2)]
        x = inject(noise(n, nchan, seed=4), pulses, 25.0)
        blk = transient.boxcar_search_ff(nchan, "boxdit", [16], max_width=128,
                                         threshold=8.0, norm_mode="fixed", backend="cpu")
        snr, width, snk, dbg = self.run_block(x, blk, nchan=nchan, max_items=500)
        self.assertEqual(snr.shape, (n, nchan))
        ref_s, ref_w = transient.boxcar_search(x, "boxdit", 128, [16], norm_mode="fixed")
        np.testing.assert_array_equal(snr, ref_s)
        np.testing.assert_array_equal(width, ref_w.astype(np.float32))
        tags = sorted(pulse_tags(snk), key=lambda t: (t[0], t[1]["channel"]))
        self.assertEqual(len(tags), len(pulses), tags)
        for (off, v), (start, w, chan) in zip(
                tags, sorted(pulses, key=lambda p: (p[0], p[2]))):
            self.assertEqual(v["channel"], chan, (off, v))
            # BoxDIT starts wide boxcars on even samples only: allow the stride
            self.assertLessEqual(abs(off - start), max(2, w // 4), (off, v, start, w))
            self.assertEqual(off, v["start"])
        self.assertEqual(len(detect_dicts(dbg)), len(tags))

    def test_003b_many_channels(self):
        # 700 channels: the block calls the search in pieces of fewer samples.
        n, nchan = 5000, 700
        x = inject(noise(n, nchan, seed=12), [(2500, 20, 350)], 30.0)
        blk = transient.boxcar_search_ff(nchan, "igrid", [], 1, 0, max_width=64,
                                         threshold=9.0, norm_mode="fixed", backend="cpu")
        snr, width, snk, _ = self.run_block(x, blk, nchan=nchan)
        ref_s, ref_w = transient.boxcar_search(x, "igrid", 64, [], 1, 0, norm_mode="fixed")
        np.testing.assert_array_equal(snr, ref_s)
        np.testing.assert_array_equal(width, ref_w.astype(np.float32))
        tags = [v for _, v in pulse_tags(snk) if v["snr"] > 20]
        self.assertEqual(len(tags), 1, tags)
        self.assertEqual(tags[0]["channel"], 350)

    def test_004_complex_input_searches_power(self):
        n = 20000
        rng = np.random.default_rng(5)
        z = (rng.normal(0, 1, n) + 1j * rng.normal(0, 1, n)).astype(np.complex64)
        z[7000:7020] *= 4.0  # a burst of power
        p = (np.abs(z)**2).astype(np.float32)
        blk = transient.boxcar_search_cf(1, "boxdit", [16], max_width=64, threshold=8.0,
                                         norm_mode="white", window=2048, backend="cpu")
        snr, width, snk, _ = self.run_block(z, blk, max_items=700, complex_in=True)
        ref_s, ref_w = transient.boxcar_search(p, "boxdit", 64, [16], norm_mode="white",
                                               window=2048)
        np.testing.assert_allclose(snr, ref_s, rtol=1e-5, atol=1e-5)
        tags = pulse_tags(snk)
        self.assertTrue(any(abs(off - 7000) <= 4 for off, _ in tags), tags)

    def test_005_first_window_own_statistics(self):
        # Mean 100, sigma 10: the first statistics window is normalised by its
        # own statistics (not the initial mean 0, sigma 1): no flood, and a
        # pulse inside it is found like the later one.
        n, window = 40000, 8192
        x = 100.0 + 10.0 * noise(n, seed=6)
        x = inject(x, [(3000, 10, 0), (20000, 10, 0)], 250.0)  # S/N 25 at sigma 10
        blk = transient.boxcar_search_ff(1, "boxdit", [16], max_width=64, threshold=8.0,
                                         norm_mode="white", window=window, backend="cpu")
        self.assertEqual(blk.latency(), blk.lend() - 1 + window)  # window 0 held
        snr, _, snk, _ = self.run_block(x, blk, max_items=1024)
        self.assertEqual(len(snr), n)
        self.assertLess(float(np.max(snr[:2900])), 8.0)
        tags = pulse_tags(snk)
        self.assertEqual(len(tags), 2, tags)
        self.assertLessEqual(abs(tags[0][0] - 3000), 2)
        self.assertLessEqual(abs(tags[1][0] - 20000), 2)
        self.assertEqual(blk.warning(), "")

    def test_005b_short_recording_default_settings(self):
        # A burst in the first 1,000 samples of a 4,000-sample series, shorter
        # than the default 16,384-sample window: searched at the end of the
        # stream with the statistics of its 4,000 samples, found, and a warning
        # says so. The same through the array helper.
        n = 4000
        x = 3.0 + 2.0 * noise(n, seed=12)
        x = inject(x, [(600, 16, 0)], 2.0 * 15.0)  # S/N 15 at sigma 2
        blk = transient.boxcar_search_ff(backend="cpu")
        snr, width, snk, dbg = self.run_block(x, blk, max_items=700)
        self.assertEqual(len(snr), n)
        tags = pulse_tags(snk)
        self.assertEqual(len(tags), 1, tags)
        self.assertLessEqual(abs(tags[0][0] - 600), 4)
        self.assertAlmostEqual(tags[0][1]["snr"], 15.0, delta=3.0)
        self.assertEqual(len(detect_dicts(dbg)), 1)
        self.assertIn("ended after 4000 samples", blk.warning())
        self.assertIn("16384", blk.warning())
        with self.assertWarnsRegex(RuntimeWarning, "ended after 4000 samples"):
            ref_s, ref_w = transient.boxcar_search(x)
        np.testing.assert_array_equal(snr, ref_s)
        ev = transient.boxcar_candidates(ref_s, ref_w, 7.0)
        self.assertEqual(len(ev), 1, ev)
        self.assertLessEqual(abs(int(ev["start"][0]) - 600), 4)

    def test_006_threshold_callback_and_nonfinite(self):
        n = 30000
        x = inject(noise(n, seed=7), PULSES[:4], 20.0)
        x[100] = np.nan
        x[5000] = np.inf
        blk = transient.boxcar_search_ff(1, "boxdit", [16], max_width=128, threshold=8.0,
                                         norm_mode="fixed", backend="cpu")
        blk.set_threshold(1000.0)
        self.assertEqual(blk.threshold(), 1000.0)
        _, _, snk, dbg = self.run_block(x, blk)
        self.assertEqual(pulse_tags(snk), [])
        self.assertEqual(detect_dicts(dbg), [])
        self.assertEqual(blk.nonfinite(), 2)

    def test_007_statistics_setters_restart(self):
        blk = transient.boxcar_search_ff(1, "boxdit", [16], max_width=64, backend="cpu")
        blk.set_norm_mode("fixed")
        blk.set_fixed_stats(0.0, 1.0)
        blk.set_reject_sigma(2.5)
        blk.set_window(4096)
        blk.set_baseline_window(1025)
        self.assertEqual(blk.norm_mode(), "fixed")
        self.assertEqual(blk.reject_sigma(), 2.5)
        self.assertEqual(blk.window(), 4096)
        self.assertEqual(blk.baseline_window(), 1025)
        self.assertEqual(blk.baseline_mode(), "median")
        blk.set_baseline_mode("block")
        self.assertEqual(blk.baseline_mode(), "block")
        self.assertRaises(ValueError, blk.set_baseline_window, 8)  # block needs >= 16
        self.assertEqual(blk.baseline_window(), 1025)
        blk.set_baseline_window(0)
        self.assertEqual(blk.baseline_window(), 0)
        self.assertRaises(ValueError, blk.set_baseline_mode, "mean")
        self.assertRaises(ValueError, blk.set_norm_mode, "pink")
        self.assertRaises(ValueError, blk.set_reject_sigma, -1.0)
        self.assertRaises(ValueError, blk.set_window, 1)
        self.assertRaises(ValueError, blk.set_fixed_stats, 0.0, 0.0)
        self.assertRaises(ValueError, blk.set_threshold, float("nan"))
        self.assertEqual(blk.norm_mode(), "fixed")  # unchanged by a refused value
        # A restart between runs of data: pulses before and after are found.
        n = 30000
        x = inject(noise(n, seed=8), [(4000, 10, 0), (25000, 10, 0)], 25.0)
        snr, _, snk, _ = self.run_block(x, blk, max_items=1000)
        self.assertEqual(len(snr), n)
        self.assertEqual(len(pulse_tags(snk)), 2)

    def test_007a_setter_between_runs(self):
        # Settings changed after a flow graph ran apply to the next run.
        n = 20000
        x = inject(100.0 + noise(n, seed=11), [(12000, 8, 0)], 25.0)
        blk = transient.boxcar_search_ff(1, "boxdit", [16], max_width=64, threshold=8.0,
                                         norm_mode="fixed", backend="cpu")
        snr1, _, snk1, _ = self.run_block(x, blk)
        # mean 100 taken as 0: every position is far above the threshold
        self.assertGreater(float(np.min(snr1[:n - 64])), 50.0)
        blk.set_fixed_stats(100.0, 1.0)
        self.tb = gr.top_block()
        snr2, _, snk2, _ = self.run_block(x, blk)
        ref, _ = transient.boxcar_search(x, "boxdit", 64, [16], norm_mode="fixed",
                                         fixed_mean=100.0)
        np.testing.assert_array_equal(snr2, ref)
        starts = [off for off, _ in pulse_tags(snk2)]
        self.assertEqual(len(starts), 1, starts)
        self.assertLessEqual(abs(starts[0] - 12000), 2)

    def test_007b_restart_while_running(self):
        # A source that changes the statistics window half-way through: the
        # search restarts there; nothing is lost and the pulses on both sides
        # are found at their starts.
        n, half = 40000, 20000
        x = inject(noise(n, seed=9), [(9000, 12, 0), (19990, 6, 0), (33000, 12, 0)],
                   25.0)
        blk = transient.boxcar_search_ff(1, "boxdit", [16], max_width=64, threshold=8.0,
                                         norm_mode="white", window=4096, backend="cpu")

        class changing_source(gr.sync_block):

            def __init__(self):
                gr.sync_block.__init__(self, "changing_source", None, [np.float32])
                self.pos = 0
                self.changed = False

            def work(self, input_items, output_items):
                out = output_items[0]
                m = min(len(out), 1000, n - self.pos)
                if m <= 0:
                    return -1
                if self.pos >= half and not self.changed:
                    # Let the block take every sample so far: the restart
                    # then happens exactly at `half`.
                    t0 = time.time()
                    while blk.nitems_read(0) < self.pos and time.time() < t0 + 30:
                        time.sleep(0.001)
                    blk.set_window(2048)
                    self.changed = True
                out[:m] = x[self.pos:self.pos + m]
                self.pos += m
                return m

        src = changing_source()
        snk = blocks.vector_sink_f()
        self.tb.connect(src, blk, snk)
        self.tb.connect((blk, 1), blocks.null_sink(4))
        self.tb.run()
        self.assertEqual(blk.window(), 2048)
        self.assertEqual(len(snk.data()), n)
        starts = sorted(off for off, _ in pulse_tags(snk))
        self.assertEqual(len(starts), 3, starts)
        self.assertLessEqual(abs(starts[0] - 9000), 2)
        self.assertLessEqual(abs(starts[2] - 33000), 2)
        # The pulse just before the restart ends before it: the search that
        # ended there evaluated it whole. (A search that starts warms up: no
        # candidates in its first 2048 samples.)
        self.assertLessEqual(abs(starts[1] - 19990), 2)

    def test_007c_wide_search_small_buffers(self):
        # L_end 4096 (latency 4095, hold about 5 L_end) with 100-item calls:
        # the block must neither stall nor lose samples.
        n = 60000
        x = inject(noise(n, seed=10), [(30000, 1000, 0)], 30.0)
        blk = transient.boxcar_search_ff(1, "boxdit", [32], max_width=4000, threshold=8.0,
                                         norm_mode="fixed", backend="cpu")
        self.assertEqual(blk.lend(), transient.boxcar_plan("boxdit", 4000, [32])["lend"])
        self.assertGreater(blk.hold(), 4 * blk.lend())
        snr, width, snk, _ = self.run_block(x, blk, max_items=100, src_items=100)
        self.assertEqual(len(snr), n)
        ref_s, _ = transient.boxcar_search(x, "boxdit", 4000, [32], norm_mode="fixed")
        np.testing.assert_array_equal(snr, ref_s)
        tags = pulse_tags(snk)
        self.assertEqual(len(tags), 1, tags)
        self.assertLessEqual(abs(tags[0][0] - 30000), 64)
        self.assertLessEqual(abs(tags[0][1]["width"] - 1000), 128)

    def test_008_bad_parameters(self):
        make = transient.boxcar_search_ff
        cases = [
            dict(nchan=0),
            dict(algorithm="fft"),
            dict(algorithm="boxdit", widths=[]),
            dict(algorithm="boxdit", widths=[3]),
            dict(algorithm="igrid", depth=4),
            dict(algorithm="igrid", layers=3),
            dict(max_width=0),
            dict(threshold=float("inf")),
            dict(norm_mode="pink"),
            dict(reject_sigma=-1.0),
            dict(window=4),
            dict(norm_mode="fixed", window=4),
            dict(norm_mode="fixed", fixed_sigma=0.0),
            dict(baseline_window=2),
            dict(baseline_window=8, baseline_mode="block"),
            dict(baseline_window=1025, baseline_mode="mean"),
            dict(backend="fpga"),
            dict(msg_format="list"),
        ]
        for kw in cases:
            with self.assertRaises(ValueError, msg=str(kw)) as cm:
                make(backend=kw.pop("backend", "cpu"), **kw)
            self.assertTrue(str(cm.exception).startswith("boxcar_search_ff: "),
                            str(cm.exception))
        if transient.cuda_device_count() == 0:
            with self.assertRaises(RuntimeError):
                make(backend="cuda")
            blk = make(backend="auto")
            self.assertEqual(blk.backend(), "cpu")

    def test_008b_vector_messages(self):
        # msg_format "vectors": the events of "dicts", as one dict of uniform
        # vectors per message, with and without the outputs (the tags stay).
        n = 50000
        x = inject(noise(n, seed=5), PULSES, 25.0)

        def make(fmt):
            return transient.boxcar_search_ff(1, "ideal", [], 1, 0, 128, 8.0, "fixed",
                                              backend="cpu", msg_format=fmt)

        def vector_events(dbg):
            out = []
            for i in range(dbg.num_messages()):
                m = dbg.get_message(i)
                keys = pmt.dict_keys(m)
                self.assertEqual(sorted(pmt.symbol_to_string(pmt.nth(k, keys))
                                        for k in range(pmt.length(keys))),
                                 ["channel", "members", "sample", "snr", "start", "width"])
                a = transient.pulse_arrays(m)
                self.assertGreater(len(a["start"]), 0)
                for k in range(len(a["start"])):
                    out.append({f: a[f][k].item() for f in a})
            return out

        def key(e):
            return (e["start"], e["width"], round(e["snr"], 4), e["channel"], e["sample"],
                    e["members"])

        ref = make("dicts")
        self.assertEqual(ref.msg_format(), "dicts")
        _, _, snk_ref, dbg_ref = self.run_block(x, ref, max_items=997, src_items=613)
        want = [key(e) for e in detect_dicts(dbg_ref)]
        self.assertEqual(len(want), len(PULSES))
        # pulse_arrays reads the dicts too
        got = []
        for i in range(dbg_ref.num_messages()):
            a = transient.pulse_arrays(dbg_ref.get_message(i))
            got += [{f: a[f][k].item() for f in a} for k in range(len(a["start"]))]
        self.assertEqual([key(e) for e in got], want)
        with self.assertRaises(ValueError):
            transient.pulse_arrays(pmt.intern("pulses"))
        # with the outputs: the same messages' events, and the same tags
        self.tb = gr.top_block()
        blk = make("vectors")
        self.assertEqual(blk.msg_format(), "vectors")
        _, _, snk, dbg = self.run_block(x, blk, max_items=997, src_items=613)
        self.assertEqual([key(e) for e in vector_events(dbg)], want)
        self.assertEqual([(o, key(v)) for o, v in pulse_tags(snk)],
                         [(o, key(v)) for o, v in pulse_tags(snk_ref)])
        # without the outputs (the block is the sink)
        self.tb = gr.top_block()
        blk = make("vectors")
        src = blocks.vector_source_f(x.tolist(), False)
        dbg = blocks.message_debug()
        self.tb.connect(src, blk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        self.assertEqual([key(e) for e in vector_events(dbg)], want)
        self.assertEqual(blk.candidates(), len(want))

    def test_009_pulsar_recording(self):
        ts = timeseries.read_tim(os.path.join(DATA, "GBT_J1807-0847.tim"))
        x = ts.data
        blk = transient.boxcar_search_ff(1, "boxdit", [32, 16, 16, 16, 8], max_width=256,
                                         threshold=8.0, norm_mode="white", window=4096,
                                         baseline_window=2049, backend="cpu")
        snr, _, snk, dbg = self.run_block(x, blk, max_items=3000)
        self.assertEqual(len(snr), len(x))
        starts = np.array(sorted(off for off, _ in pulse_tags(snk)))
        self.assertEqual(len(detect_dicts(dbg)), len(starts))
        # One pulse per period (131 in the record, the first statistics window
        # included: it is normalised by its own statistics), nothing else.
        period = 0.16372
        fit = timeseries.period_from_arrivals(starts * ts.tsamp, period)
        self.assertGreaterEqual(fit["n_used"], 128)
        self.assertEqual(fit["distinct_pulses"], fit["n_used"])
        self.assertLessEqual(fit["n_off"], 2)
        self.assertAlmostEqual(fit["period"], period, delta=2e-5)
        # The same search on the whole array (boxcar_search, boxcar_candidates)
        # finds the same pulses.
        c = timeseries.search_pulses(x, threshold=8.0, window=4096, baseline_window=2049)
        np.testing.assert_array_equal(c["start"], starts)
        cands = transient.boxcar_candidates(snr, None, 1e9)
        self.assertEqual(len(cands), 0)
        self.assertRaises(ValueError, transient.boxcar_candidates, snr, None,
                          float("nan"))
        self.assertRaises(ValueError, transient.boxcar_candidates, snr,
                          np.zeros(3, dtype=np.int32), 8.0)

    # ---- helpers on arrays --------------------------------------------------

    def test_010_predictor_and_plan(self):
        plan = transient.boxcar_plan("boxdit", 100, [16])
        # widths 1..16, 18..48 (step 2), 52..112 (step 4): the first >= 100 is 100
        self.assertEqual(plan["lend"], 100)
        self.assertEqual(plan["latency"], 99)
        self.assertEqual(list(plan["widths"][:3]), [1, 2, 3])
        pr = transient.boxcar_predict("ideal", 32, [], smax=32)
        np.testing.assert_allclose(pr["rsnr_max"], 1.0)
        np.testing.assert_allclose(pr["psi_1"], 0.0, atol=1e-12)
        pr = transient.boxcar_predict("igrid", 256, [], 1, 0, exact=True)
        self.assertEqual(len(pr["S"]), 256)
        self.assertTrue(np.all(pr["rsnr_min"] <= pr["rsnr_max"] + 1e-12))
        self.assertTrue(np.all(pr["exact_rsnr_min"] >= pr["rsnr_min"] - 1e-12))
        self.assertTrue(np.all(np.diff(pr["mean_psi_1"] * pr["S"]) >= -1e-12))
        pl = transient.boxcar_predict_list([1, 2, 4], [1, 1, 2], 8)
        self.assertEqual(len(pl["rsnr_max"]), 8)
        self.assertAlmostEqual(pl["rsnr_max"][2], math.sqrt(3 / 4))
        self.assertRaises(ValueError, transient.boxcar_predict, "boxdit", 100, [5])
        self.assertRaises(ValueError, transient.boxcar_predict_list, [1, 2], [1], 4)


if __name__ == "__main__":
    gr_unittest.run(qa_boxcar_search_ff)
