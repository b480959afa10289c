#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of the edge_localizer_f block and the core helpers of gnuradio.transient."""

import math
import subprocess
import sys
import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient


def pulse_signal(n, seed, low=0.0, high=1.0, noise=0.02, runts=True):
    """Pulse train with random widths, noise, and (optionally) runts."""
    rng = np.random.default_rng(seed)
    x = np.empty(n, dtype=np.float32)
    i = 0
    level = low
    while i < n:
        width = int(rng.integers(5, 60))
        rise = int(rng.integers(1, 4))
        target = high if level == low else low
        ramp = np.linspace(level, target, rise + 2, dtype=np.float32)[1:-1]
        x[i:i + width] = level
        j = min(n, i + width)
        k = min(n, j + len(ramp))
        x[j:k] = ramp[:k - j]
        i = k
        level = target
        if runts and rng.random() < 0.15 and i + 8 < n:
            # an excursion to mid-way that returns: no transition
            x[i:i + 4] = level
            x[i + 4:i + 6] = (low + high) / 2
            i += 6
    x += rng.normal(0.0, noise, n).astype(np.float32)
    return x


def edge_tags(sink):
    """The "edge" tags of a vector sink as (offset, time, polarity, sample) tuples."""
    out = []
    for t in sink.tags():
        if pmt.symbol_to_string(t.key) != "edge":
            continue
        v = pmt.to_python(t.value)
        out.append((t.offset, v["time"], v["polarity"], v["sample"]))
    return out


def expected_tags(edges):
    return [(int(e["sample"]), float(e["time"]), int(e["polarity"]), int(e["sample"]))
            for e in edges]

def dense_signal(n, seed):
    """A transition every 1 to 4 samples: the heaviest load on tags and messages."""
    rng = np.random.default_rng(seed)
    x = np.empty(n, dtype=np.float32)
    i = 0
    level = 0.0
    while i < n:
        w = int(rng.integers(1, 5))
        x[i:i + w] = level
        i += w
        level = 1.0 - level
    return x


class late_end_source(gr.sync_block):
    """Float source that reports the end of its stream only `delay` seconds after
    its last sample, so that a downstream block takes every sample first."""

    def __init__(self, x, delay=0.2):
        gr.sync_block.__init__(self, "late_end_source", None, [np.float32])
        self.x = np.asarray(x, np.float32)
        self.pos = 0
        self.delay = delay

    def work(self, input_items, output_items):
        out = output_items[0]
        if self.pos >= len(self.x):
            time.sleep(self.delay)
            return -1
        n = min(len(out), len(self.x) - self.pos)
        out[:n] = self.x[self.pos:self.pos + n]
        self.pos += n
        return n


def message_edges(msgs):
    """(sample, time, polarity, sample) tuples of the edge dicts of detects messages."""
    return [(d["sample"], d["time"], d["polarity"], d["sample"])
            for m in msgs for d in m["edges"]]


def vector_edges(test, msgs):
    """The same tuples from msg_format "vectors" messages (PMTs: a dict of the
    uniform vectors "sample" u64, "time" f64, "polarity" s8 and nothing else),
    read through transient.edge_arrays."""
    out = []
    for m in msgs:
        keys = pmt.dict_keys(m)
        test.assertEqual(sorted(pmt.symbol_to_string(pmt.nth(i, keys))
                                for i in range(pmt.length(keys))),
                         ["polarity", "sample", "time"])
        a = transient.edge_arrays(m)
        test.assertGreater(len(a["sample"]), 0)
        out += [(int(s), float(t), int(p), int(s))
                for s, t, p in zip(a["sample"], a["time"], a["polarity"])]
    return out


class qa_edge_localizer_f(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_block(self, x, blk, max_items=None, src_items=None):
        """x -> blk -> vector sink, detects -> message debug. Returns (sink, dbg)."""
        src = blocks.vector_source_f(list(map(float, x)), False)
        snk = blocks.vector_sink_f()
        dbg = blocks.message_debug()
        if src_items is not None:
            src.set_max_noutput_items(src_items)
        if max_items is not None:
            blk.set_max_noutput_items(max_items)
        self.tb.connect(src, blk, snk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        return snk, dbg

    def run_no_output(self, x, blk, max_items=None, src_items=None, msgs=True):
        """x -> blk (output not connected), detects -> message debug. Returns dbg."""
        src = blocks.vector_source_f(list(map(float, x)), False)
        dbg = blocks.message_debug()
        if src_items is not None:
            src.set_max_noutput_items(src_items)
        if max_items is not None:
            blk.set_max_noutput_items(max_items)
        self.tb.connect(src, blk)
        if msgs:
            self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        self.assertEqual(blk.nitems_read(0), len(x))  # every sample consumed
        return dbg

    def run_tags_only(self, x, blk, max_items=None, src_items=None):
        """x -> blk -> vector sink, detects not connected. Returns the sink."""
        src = blocks.vector_source_f(list(map(float, x)), False)
        snk = blocks.vector_sink_f()
        if src_items is not None:
            src.set_max_noutput_items(src_items)
        if max_items is not None:
            blk.set_max_noutput_items(max_items)
        self.tb.connect(src, blk, snk)
        self.tb.run()
        return snk

    def messages(self, dbg, expected_count=None, raw=False):
        """Edge dicts of all detects messages (waits briefly for delivery); raw:
        the PMTs."""
        deadline = time.time() + 2.0
        while expected_count is not None and dbg.num_messages() < expected_count \
                and time.time() < deadline:
            time.sleep(0.01)
        msgs = [dbg.get_message(i) for i in range(dbg.num_messages())]
        return msgs if raw else [pmt.to_python(m) for m in msgs]

    # ---- core helpers -----------------------------------------------------

    def test_000_find_edges_tiny(self):
        # rising: x[1] = 0 < 0.5 <= x[2] = 1, time 1 + (0.5 - 0) / (1 - 0) = 1.5,
        # first sample in the high state: 2. Falling: x[4] = 0 < 0.5 <= x[3] = 1,
        # time 3 + (0.5 - 1) / (0 - 1) = 3.5, first sample in the low state: 4.
        x = np.array([0, 0, 1, 1, 0, 0], dtype=np.float32)
        e = transient.find_edges(x, 0.1, 0.5, 0.9)
        self.assertEqual(e.dtype.names, ("time", "sample", "polarity"))
        self.assertEqual(e.dtype["time"], np.float64)
        # the types of edge_arrays (and of the tags and messages)
        self.assertEqual(e.dtype["sample"], np.uint64)
        self.assertEqual(e.dtype["polarity"], np.int8)
        self.assertEqual(expected_tags(e), [(2, 1.5, 1, 2), (4, 3.5, -1, 4)])
        ref = transient.find_edges(x, 0.1, 0.5, 0.9, variant="reference")
        self.assertEqual(expected_tags(ref), expected_tags(e))
        self.assertEqual(len(transient.find_edges(np.zeros(0, np.float32), .1, .5, .9)), 0)

    def test_001_find_edges_interpolation(self):
        # ramp through intermediate samples: low at 1, crossing between 2 and 3,
        # high state first reached at 4
        x = np.array([0.0, 0.0, 0.3, 0.7, 1.0, 1.0], dtype=np.float32)
        e = transient.find_edges(x, 0.1, 0.5, 0.9)
        self.assertEqual(len(e), 1)
        self.assertEqual(int(e[0]["sample"]), 4)
        self.assertEqual(int(e[0]["polarity"]), 1)
        t = 2 + (0.5 - float(np.float32(0.3))) / (float(np.float32(0.7)) -
                                                 float(np.float32(0.3)))
        self.assertEqual(float(e[0]["time"]), t)
        # a runt: leaves low, crosses mid, returns to low: no transition
        runt = np.array([0, 0, 0.6, 0.7, 0, 0], dtype=np.float32)
        self.assertEqual(len(transient.find_edges(runt, 0.1, 0.5, 0.9)), 0)

    def test_002_find_edges_errors(self):
        x = np.zeros(10, dtype=np.float32)
        with self.assertRaises(ValueError) as ctx:
            transient.find_edges(x, 0.5, 0.4, 0.9)
        self.assertTrue(str(ctx.exception))
        with self.assertRaises(ValueError):
            transient.find_edges(x, 0.1, 0.5, 0.9, backend="tpu")
        with self.assertRaises(ValueError):
            transient.find_edges(x, 0.1, 0.5, 0.9, variant="slow")
        with self.assertRaises(ValueError):
            transient.find_edges(np.zeros((2, 2), np.float32), 0.1, 0.5, 0.9)

    def test_003_state_levels_and_pulses(self):
        x = pulse_signal(20000, 1, low=-1.0, high=3.0, noise=0.01)
        lv = transient.estimate_state_levels(x)
        self.assertEqual(set(lv), {"low_level", "high_level", "low", "mid", "high"})
        self.assertAlmostEqual(lv["low_level"], -1.0, delta=0.1)
        self.assertAlmostEqual(lv["high_level"], 3.0, delta=0.1)
        self.assertTrue(lv["low"] < lv["mid"] < lv["high"])
        with self.assertRaises(ValueError):
            transient.estimate_state_levels(np.ones(100, np.float32))
        with self.assertRaises(ValueError):
            transient.estimate_state_levels(x, tolerance_pct=60)

        e = transient.find_edges(np.array([0, 1, 1, 0, 0, 0, 1, 0], np.float32),
                                 0.1, 0.5, 0.9)
        p = transient.edges_to_pulses(e)
        self.assertEqual(len(p), len(e) - 1)
        self.assertEqual(p.dtype.names, ("start", "width", "period", "duty", "polarity"))
        # edges at times 0.5 (+), 2.5 (-), 5.5 (+), 6.5 (-)
        self.assertEqual(list(p["start"]), [0.5, 2.5, 5.5])
        self.assertEqual(list(p["width"]), [2.0, 3.0, 1.0])
        self.assertEqual(list(p["polarity"]), [1, -1, 1])
        self.assertEqual(list(p["period"][:2]), [5.0, 4.0])
        self.assertEqual(float(p["duty"][0]), 2.0 / 5.0)
        self.assertEqual(len(transient.edges_to_pulses(e[:1])), 0)
        with self.assertRaises(ValueError):
            transient.edges_to_pulses(np.zeros(3))

    # ---- block ------------------------------------------------------------

    def test_010_tiny_stream(self):
        x = [0, 0, 1, 1, 0, 0]
        blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
        snk, dbg = self.run_block(x, blk)
        self.assertFloatTuplesAlmostEqual(snk.data(), x, 0)
        self.assertEqual(edge_tags(snk), [(2, 1.5, 1, 2), (4, 3.5, -1, 4)])
        msgs = self.messages(dbg, 1)
        edges = [d for m in msgs for d in m["edges"]]
        self.assertEqual(edges, [{"time": 1.5, "polarity": 1, "sample": 2},
                                 {"time": 3.5, "polarity": -1, "sample": 4}])

    def test_011_matches_find_edges(self):
        x = pulse_signal(50000, 2)
        blk = transient.edge_localizer_f(False, 0.2, 0.5, 0.8, backend="cpu")
        snk, dbg = self.run_block(x, blk)
        self.assertEqual(len(snk.data()), len(x))
        np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
        ref = transient.find_edges(x, 0.2, 0.5, 0.8)
        self.assertGreater(len(ref), 100)
        self.assertEqual(edge_tags(snk), expected_tags(ref))

    def test_012_many_small_work_calls(self):
        x = pulse_signal(6000, 3)
        ref = expected_tags(transient.find_edges(x, 0.2, 0.5, 0.8))
        for max_items, src_items in ((1, 3), (7, 5), (13, 64)):
            self.tb = gr.top_block()
            blk = transient.edge_localizer_f(False, 0.2, 0.5, 0.8, backend="cpu")
            snk, _ = self.run_block(x, blk, max_items=max_items, src_items=src_items)
            np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
            self.assertEqual(edge_tags(snk), ref, "max_noutput_items %d" % max_items)

    def test_013_detects_messages(self):
        x = pulse_signal(30000, 4)
        blk = transient.edge_localizer_f(False, 0.2, 0.5, 0.8, backend="cpu")
        snk, dbg = self.run_block(x, blk, max_items=4096)
        ref = transient.find_edges(x, 0.2, 0.5, 0.8)
        msgs = self.messages(dbg, 2)
        self.assertGreater(len(msgs), 1)  # several work calls found transitions
        for m in msgs:
            self.assertEqual(set(m), {"edges"})
            self.assertGreater(len(m["edges"]), 0)
        edges = [d for m in msgs for d in m["edges"]]
        self.assertEqual([(d["sample"], d["time"], d["polarity"], d["sample"])
                          for d in edges], expected_tags(ref))
        # the raw PMT: dict with a vector of dicts, typed fields
        raw = dbg.get_message(0)
        self.assertTrue(pmt.is_dict(raw))
        v = pmt.dict_ref(raw, pmt.intern("edges"), pmt.PMT_NIL)
        self.assertTrue(pmt.is_vector(v))
        d = pmt.vector_ref(v, 0)
        self.assertTrue(pmt.is_real(pmt.dict_ref(d, pmt.intern("time"), pmt.PMT_NIL)))
        self.assertTrue(pmt.is_integer(pmt.dict_ref(d, pmt.intern("polarity"),
                                                    pmt.PMT_NIL)))
        self.assertTrue(pmt.is_uint64(pmt.dict_ref(d, pmt.intern("sample"),
                                                   pmt.PMT_NIL)))

    def test_014_setters(self):
        blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
        self.assertEqual((blk.low(), blk.mid(), blk.high()),
                         (np.float32(0.1), np.float32(0.5), np.float32(0.9)))
        self.assertTrue(blk.levels_known())
        self.assertFalse(blk.auto_levels())
        self.assertEqual(blk.backend(), "cpu")
        with self.assertRaises(ValueError) as ctx:
            blk.set_levels(0.5, 0.4, 0.9)
        self.assertTrue(str(ctx.exception))
        with self.assertRaises(ValueError):
            blk.set_levels(0.1, 0.5, float("nan"))
        # unchanged after a rejected call
        self.assertEqual(blk.mid(), np.float32(0.5))
        with self.assertRaises(ValueError):
            blk.set_tolerance_pct(60)
        with self.assertRaises(ValueError):
            blk.set_mid_pct(5)
        self.assertEqual((blk.tolerance_pct(), blk.mid_pct()), (10, 50))
        blk.set_tolerance_pct(20)
        blk.set_mid_pct(40)
        self.assertEqual((blk.tolerance_pct(), blk.mid_pct()), (20, 40))
        blk.set_percentages(10, 50)
        self.assertEqual((blk.tolerance_pct(), blk.mid_pct()), (10, 50))

        # pulses of amplitude 0.4: nothing with 0.1/0.5/0.9, edges with set_levels
        x = 0.4 * pulse_signal(5000, 5, noise=0.005)
        snk, _ = self.run_block(x, blk)
        self.assertEqual(edge_tags(snk), [])
        self.tb = gr.top_block()
        blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
        blk.set_levels(0.05, 0.2, 0.35)
        self.assertEqual(blk.high(), np.float32(0.35))
        snk, _ = self.run_block(x, blk)
        ref = transient.find_edges(x, 0.05, 0.2, 0.35)
        self.assertGreater(len(ref), 10)
        self.assertEqual(edge_tags(snk), expected_tags(ref))

    def test_015_invalid_construction(self):
        with self.assertRaises(ValueError):
            transient.edge_localizer_f(False, 0.5, 0.5, 0.9)
        with self.assertRaises(ValueError):
            transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="gpu")
        with self.assertRaises(ValueError):
            transient.edge_localizer_f(True, tolerance_pct=0)
        if transient.cuda_device_count() == 0:
            with self.assertRaises(RuntimeError) as ctx:
                transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cuda")
            self.assertTrue(str(ctx.exception))
            blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="auto")
            self.assertEqual(blk.backend(), "cpu")

    def test_016_output_multiple_tail(self):
        # as with the CUDA backend's batches: the last partial batch still goes out
        x = pulse_signal(2500, 9)
        lv = transient.estimate_state_levels(x[:700])
        for auto in (False, True):
            self.tb = gr.top_block()
            blk = transient.edge_localizer_f(auto, 0.2, 0.5, 0.8, level_samples=700,
                                             backend="cpu")
            blk.set_output_multiple(1000)
            snk, _ = self.run_block(x, blk)
            np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
            if auto:
                ref = transient.find_edges(x, lv["low"], lv["mid"], lv["high"])
            else:
                ref = transient.find_edges(x, 0.2, 0.5, 0.8)
            self.assertEqual(edge_tags(snk), expected_tags(ref))

    def test_020_auto_levels(self):
        x = pulse_signal(40000, 6, low=-0.5, high=2.5, noise=0.01)
        L = 4000
        lv = transient.estimate_state_levels(x[:L], 100, 10, 50)
        ref = transient.find_edges(x, lv["low"], lv["mid"], lv["high"])
        self.assertGreater(int(np.sum(ref["sample"] < L)), 20)
        blk = transient.edge_localizer_f(True, level_samples=L, backend="cpu")
        self.assertTrue(blk.auto_levels())
        self.assertFalse(blk.levels_known())
        self.assertTrue(math.isnan(blk.mid()))
        snk, dbg = self.run_block(x, blk)
        np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
        tags = edge_tags(snk)
        self.assertEqual(tags, expected_tags(ref))
        self.assertLess(tags[0][0], 100)  # the first samples are tagged too
        self.assertTrue(blk.levels_known())
        self.assertEqual((blk.low(), blk.mid(), blk.high()),
                         (np.float32(lv["low"]), np.float32(lv["mid"]),
                          np.float32(lv["high"])))
        edges = [d for m in self.messages(dbg, 1) for d in m["edges"]]
        self.assertEqual(len(edges), len(ref))

    def test_021_auto_levels_small_work_calls(self):
        x = pulse_signal(8000, 7, low=1.0, high=-1.0, noise=0.01)
        L = 3000
        lv = transient.estimate_state_levels(x[:L])
        ref = expected_tags(transient.find_edges(x, lv["low"], lv["mid"], lv["high"]))
        for max_items, src_items in ((1, 2), (7, 5), (100, 333)):
            self.tb = gr.top_block()
            blk = transient.edge_localizer_f(True, level_samples=L, backend="cpu")
            snk, _ = self.run_block(x, blk, max_items=max_items, src_items=src_items)
            np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
            self.assertEqual(edge_tags(snk), ref, "max_noutput_items %d" % max_items)

    def test_022_auto_levels_short_stream(self):
        # fewer samples than level_samples: estimated at the end of the stream
        x = pulse_signal(3000, 8, low=0.0, high=5.0, noise=0.02)
        lv = transient.estimate_state_levels(x)
        ref = transient.find_edges(x, lv["low"], lv["mid"], lv["high"])
        self.assertGreater(len(ref), 10)
        blk = transient.edge_localizer_f(True, level_samples=65536, backend="cpu")
        snk, dbg = self.run_block(x, blk)
        np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
        self.assertEqual(edge_tags(snk), expected_tags(ref))
        edges = [d for m in self.messages(dbg, 1) for d in m["edges"]]
        self.assertEqual(len(edges), len(ref))

    # ---- output optional, messages optional -------------------------------

    def test_030_no_output_messages(self):
        # no output connected: the block is a sink, transitions only on detects
        x = pulse_signal(50000, 12)
        ref = expected_tags(transient.find_edges(x, 0.2, 0.5, 0.8))
        self.assertGreater(len(ref), 100)
        blk = transient.edge_localizer_f(False, 0.2, 0.5, 0.8, backend="cpu")
        dbg = self.run_no_output(x, blk)
        self.assertEqual(message_edges(self.messages(dbg, 1)), ref)
        # the same block (and flow graph type) with the output connected again
        self.tb = gr.top_block()
        blk = transient.edge_localizer_f(False, 0.2, 0.5, 0.8, backend="cpu")
        snk, dbg = self.run_block(x, blk)
        np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
        self.assertEqual(edge_tags(snk), ref)
        self.assertEqual(message_edges(self.messages(dbg, 1)), ref)

    def test_031_no_output_chunking(self):
        x = pulse_signal(7000, 13)
        ref = expected_tags(transient.find_edges(x, 0.2, 0.5, 0.8))
        rng = np.random.default_rng(31)
        sizes = [(1, 3), (7, 5), (13, 64), (None, 1)]
        sizes += [(int(rng.integers(1, 3000)), int(rng.integers(1, 3000)))
                  for _ in range(4)]
        for max_items, src_items in sizes:
            self.tb = gr.top_block()
            blk = transient.edge_localizer_f(False, 0.2, 0.5, 0.8, backend="cpu")
            dbg = self.run_no_output(x, blk, max_items=max_items, src_items=src_items)
            self.assertEqual(message_edges(self.messages(dbg, 1)), ref,
                             "max_noutput_items %s, source %s" % (max_items, src_items))

    def test_032_no_output_auto_levels(self):
        # the core holds the first level_samples samples: without the output the
        # block keeps its last input sample until the input ends, so that the
        # end of a short stream is flushed in a work call
        long_x = pulse_signal(30000, 14, low=-0.5, high=2.5, noise=0.01)
        short_x = pulse_signal(3000, 15, low=0.0, high=5.0, noise=0.02)
        for x, L in ((long_x, 4000), (short_x, 65536)):
            lv = transient.estimate_state_levels(x[:L])
            ref = expected_tags(transient.find_edges(x, lv["low"], lv["mid"], lv["high"]))
            self.assertGreater(len(ref), 10)
            for max_items, src_items in ((None, None), (1, 2), (7, 5), (100, 333)):
                self.tb = gr.top_block()
                blk = transient.edge_localizer_f(True, level_samples=L, backend="cpu")
                dbg = self.run_no_output(x, blk, max_items=max_items,
                                         src_items=src_items)
                self.assertEqual(message_edges(self.messages(dbg, 1)), ref,
                                 "L %d, max_noutput_items %s" % (L, max_items))
                self.assertTrue(blk.levels_known())
        # the upstream ends only after the block took its last sample
        x = short_x
        lv = transient.estimate_state_levels(x)
        ref = expected_tags(transient.find_edges(x, lv["low"], lv["mid"], lv["high"]))
        self.tb = gr.top_block()
        src = late_end_source(x)
        blk = transient.edge_localizer_f(True, level_samples=65536, backend="cpu")
        dbg = blocks.message_debug()
        self.tb.connect(src, blk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        self.assertEqual(message_edges(self.messages(dbg, 1)), ref)

    def test_033_no_output_output_multiple(self):
        # as with the CUDA backend's batches: without the output the block is a
        # sink, and the last partial batch must still be processed
        x = pulse_signal(2500, 16)
        ref = expected_tags(transient.find_edges(x, 0.2, 0.5, 0.8))
        blk = transient.edge_localizer_f(False, 0.2, 0.5, 0.8, backend="cpu")
        blk.set_output_multiple(1000)
        dbg = self.run_no_output(x, blk)
        self.assertEqual(message_edges(self.messages(dbg, 1)), ref)
        self.assertEqual(blk.output_multiple(), 1000)  # restored after the run

    def test_034_no_output_no_messages(self):
        # nothing connected but the input: the block only runs the core
        x = pulse_signal(20000, 17)
        blk = transient.edge_localizer_f(False, 0.2, 0.5, 0.8, backend="cpu")
        dbg = self.run_no_output(x, blk, msgs=False)
        self.assertEqual(dbg.num_messages(), 0)

    def test_035_tags_without_messages(self):
        # detects not connected: no messages are built, the tags are unchanged
        x = pulse_signal(40000, 18)
        ref = expected_tags(transient.find_edges(x, 0.2, 0.5, 0.8))
        for max_items in (None, 1, 4096):
            self.tb = gr.top_block()
            blk = transient.edge_localizer_f(False, 0.2, 0.5, 0.8, backend="cpu")
            snk = self.run_tags_only(x, blk, max_items=max_items)
            np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
            self.assertEqual(edge_tags(snk), ref)
        # auto levels: held samples are tagged too
        L = 3000
        lv = transient.estimate_state_levels(x[:L])
        ref = expected_tags(transient.find_edges(x, lv["low"], lv["mid"], lv["high"]))
        self.tb = gr.top_block()
        blk = transient.edge_localizer_f(True, level_samples=L, backend="cpu")
        snk = self.run_tags_only(x, blk, max_items=777)
        np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
        self.assertEqual(edge_tags(snk), ref)

    def test_036_dense_transitions(self):
        # a transition every 1 to 4 samples, in every configuration
        x = dense_signal(20000, 19)
        ref = expected_tags(transient.find_edges(x, 0.1, 0.5, 0.9))
        self.assertGreater(len(ref), 7000)
        for max_items, src_items in ((None, None), (3, 7), (1000, 555)):
            self.tb = gr.top_block()
            blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
            snk, dbg = self.run_block(x, blk, max_items=max_items, src_items=src_items)
            np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
            self.assertEqual(edge_tags(snk), ref)
            self.assertEqual(message_edges(self.messages(dbg, 1)), ref)
            self.tb = gr.top_block()
            blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
            snk = self.run_tags_only(x, blk, max_items=max_items, src_items=src_items)
            self.assertEqual(edge_tags(snk), ref)
            self.tb = gr.top_block()
            blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
            dbg = self.run_no_output(x, blk, max_items=max_items, src_items=src_items)
            self.assertEqual(message_edges(self.messages(dbg, 1)), ref)

    def test_038_no_output_dense_long_calls(self):
        # large input buffers and dense transitions: without the output the block
        # limits its calls to about 1024 transitions (at least 8192 samples)
        x = dense_signal(600000, 20)
        ref = expected_tags(transient.find_edges(x, 0.1, 0.5, 0.9))
        src = blocks.vector_source_f(x.tolist(), False)
        src.set_min_output_buffer(1 << 17)
        blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
        dbg = blocks.message_debug()
        self.tb.connect(src, blk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        self.assertEqual(blk.nitems_read(0), len(x))
        msgs = self.messages(dbg, 1)
        self.assertEqual(message_edges(msgs), ref)
        self.assertGreater(len(msgs), (len(x) - (1 << 17)) // 8192)
        self.assertLess(max(len(m["edges"]) for m in msgs[1:]), 8193)

    def test_039_vector_messages(self):
        # msg_format "vectors": the same transitions as the tags and the dict
        # messages, with and without the output, any chunking, dense or sparse,
        # fixed or auto levels
        cases = [(pulse_signal(30000, 21), False, 0), (dense_signal(20000, 22), False, 0),
                 (pulse_signal(20000, 23, low=-1.0, high=3.0), True, 3000)]
        for x, auto, L in cases:
            if auto:
                lv = transient.estimate_state_levels(x[:L])
                levels = (lv["low"], lv["mid"], lv["high"])
            else:
                levels = (0.2, 0.5, 0.8)
            ref = expected_tags(transient.find_edges(x, *levels))
            self.assertGreater(len(ref), 100)

            def make():
                if auto:
                    return transient.edge_localizer_f(True, level_samples=L, backend="cpu",
                                                      msg_format="vectors")
                return transient.edge_localizer_f(False, *levels, backend="cpu",
                                                  msg_format="vectors")
            for max_items, src_items in ((None, None), (1, 3), (777, 1000)):
                what = "auto %s, max_noutput_items %s" % (auto, max_items)
                self.tb = gr.top_block()
                blk = make()
                self.assertEqual(blk.msg_format(), "vectors")
                snk, dbg = self.run_block(x, blk, max_items=max_items, src_items=src_items)
                np.testing.assert_array_equal(np.array(snk.data(), np.float32), x)
                self.assertEqual(edge_tags(snk), ref, what)
                self.assertEqual(vector_edges(self, self.messages(dbg, 1, raw=True)), ref, what)
                self.tb = gr.top_block()
                dbg = self.run_no_output(x, make(), max_items=max_items,
                                         src_items=src_items)
                self.assertEqual(vector_edges(self, self.messages(dbg, 1, raw=True)), ref, what)
        # default and invalid formats
        self.assertEqual(transient.edge_localizer_f(backend="cpu").msg_format(), "dicts")
        with self.assertRaises(ValueError) as ctx:
            transient.edge_localizer_f(backend="cpu", msg_format="vector")
        self.assertIn("msg_format", str(ctx.exception))

    def test_040_vector_messages_nonfinite(self):
        # a crossing hidden by non-finite samples: time NaN in both formats
        x = np.array([0, 0, np.nan, 1, 1, 0, np.inf, 0, 0], np.float32)
        msgs = {}
        for fmt in ("dicts", "vectors"):
            self.tb = gr.top_block()
            blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu",
                                             msg_format=fmt)
            msgs[fmt] = self.messages(self.run_no_output(x, blk), 1, raw=True)
        d = message_edges([pmt.to_python(m) for m in msgs["dicts"]])
        v = vector_edges(self, msgs["vectors"])
        # edge_arrays reads both formats alike, with find_edges' field types
        ref = transient.find_edges(x, 0.1, 0.5, 0.9)
        for fmt in ("dicts", "vectors"):
            a = transient.edge_arrays(msgs[fmt][0])
            for field in ("sample", "time", "polarity"):
                self.assertEqual(a[field].dtype, ref.dtype[field])
                np.testing.assert_array_equal(a[field], ref[field])
            np.testing.assert_array_equal(a["sample"], [3, 5])
            np.testing.assert_array_equal(a["polarity"], [1, -1])
            self.assertTrue(math.isnan(a["time"][0]))
            self.assertEqual(a["time"][1], 4.5)
        with self.assertRaises(ValueError):
            transient.edge_arrays(pmt.from_long(3))
        with self.assertRaises(ValueError):
            transient.edge_arrays(pmt.make_dict())
        self.assertEqual(len(d), 2)
        self.assertEqual(len(v), 2)
        for a, b in zip(d, v):
            self.assertEqual((a[0], a[2]), (b[0], b[2]))
            self.assertTrue(math.isnan(a[1]) and math.isnan(b[1]) or a[1] == b[1])

    def test_037_message_format_unchanged(self):
        # the dict of a transition: keys, types and order as pmt.dict_add built them
        x = [0, 0, 1, 1, 0, 0]
        blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
        snk, dbg = self.run_block(x, blk)
        self.messages(dbg, 1)
        ref = pmt.make_dict()
        ref = pmt.dict_add(ref, pmt.intern("time"), pmt.from_double(1.5))
        ref = pmt.dict_add(ref, pmt.intern("polarity"), pmt.from_long(1))
        ref = pmt.dict_add(ref, pmt.intern("sample"), pmt.from_uint64(2))
        tag = [t for t in snk.tags() if pmt.symbol_to_string(t.key) == "edge"][0]
        self.assertTrue(pmt.equal(tag.value, ref))
        self.assertEqual(pmt.write_string(tag.value), pmt.write_string(ref))
        dicts = []
        for i in range(dbg.num_messages()):
            v = pmt.dict_ref(dbg.get_message(i), pmt.intern("edges"), pmt.PMT_NIL)
            dicts += [pmt.vector_ref(v, k) for k in range(pmt.length(v))]
        self.assertEqual(len(dicts), 2)
        self.assertTrue(pmt.is_dict(dicts[0]))
        self.assertEqual(pmt.write_string(dicts[0]), pmt.write_string(ref))
        fall = dicts[1]
        self.assertEqual(pmt.to_long(pmt.dict_ref(fall, pmt.intern("polarity"),
                                                  pmt.PMT_NIL)), -1)

    def test_042_python_defaults(self):
        # defaults shown as written (0.1, not the float32 value 0.10000000149011612),
        # for every block and helper of the package
        doc = transient.edge_localizer_f.__init__.__doc__
        self.assertIn("low: float = 0.1,", doc)
        self.assertIn("high: float = 0.9,", doc)
        for name in dir(transient):
            obj = getattr(transient, name)
            for f in (obj, getattr(obj, "__init__", None)):
                self.assertNotRegex(getattr(f, "__doc__", None) or "", r"= -?\d+\.\d{9}",
                                    name)

    def test_043_cpu_fallback_said_once(self):
        # backend auto on the CPU: one log line per process, not one per block
        if transient.cuda_device_count() > 0:
            self.skipTest("a GPU is usable: no fallback")
        code = ("from gnuradio import transient\n"
                "blocks = [transient.edge_localizer_f(backend='auto') for _ in range(3)]\n"
                "blocks.append(transient.kalman_detector_ff(backend='auto'))\n")
        r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout)
        # at info level once (later ones at debug level, shown where that is on)
        self.assertEqual(r.stdout.count(":info: backend auto: falling back to the CPU"), 1,
                         r.stdout)
        self.assertFalse(r.stdout.count(":info:") > 1, r.stdout)


if __name__ == "__main__":
    gr_unittest.run(qa_edge_localizer_f)
