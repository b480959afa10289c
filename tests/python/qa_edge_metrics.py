#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""IEEE Std 181 edge metrics: libtransient against an independent numpy
implementation on the real I2C recording, the block's metrics messages, the
helpers' errors."""

import os

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient
from gnuradio.transient import sigrok

import edge_metrics_numpy

HERE = os.path.dirname(os.path.abspath(__file__))
I2C = os.path.join(HERE, "..", "..", "examples", "data", "i2c_sda_analog_8MHz.sr")
# The I2C recording's IEEE 181 boundaries over the whole record (examples/data/README.md).
LOW, MID, HIGH = 0.257, 1.530, 2.803


def assert_same(test, got, want, fields):
    for k in fields:
        a, b = np.asarray(got[k], np.float64), np.asarray(want[k], np.float64)
        test.assertEqual(len(a), len(b), k)
        same = (a == b) | (np.isnan(a) & np.isnan(b)) | np.isclose(a, b, rtol=1e-12, atol=0)
        bad = np.flatnonzero(~same)
        test.assertEqual(len(bad), 0, "%s differs at %s: %s vs %s" %
                         (k, bad[:5], a[bad[:5]], b[bad[:5]]))


def pulses(n, seed):
    """RC edges with ringing, noise and a few NaN."""
    rng = np.random.default_rng(seed)
    x = np.empty(n, np.float32)
    i, high = 0, False
    while i < n:
        w = int(rng.integers(8, 300))
        k = np.arange(min(w, n - i), dtype=np.float64)
        v = 1.0 - np.exp(-k / 3.0) if high else np.exp(-k / 3.0)
        v += 0.15 * np.exp(-k / 8.0) * np.sin(0.9 * k) * (1 if high else -1)
        x[i:i + len(k)] = v + rng.normal(0, 0.01, len(k))
        i += len(k)
        high = not high
    x[rng.integers(0, n, 5)] = np.nan
    return x


class qa_edge_metrics(gr_unittest.TestCase):

    def test_recording_against_numpy(self):
        x = sigrok.read_sr(I2C).analog["SDA analog"]
        edges = transient.find_edges(x, LOW, MID, HIGH)
        self.assertGreater(len(edges), 18000)
        for window, settle in ((65536, 5.0), (300, 2.0)):
            got = transient.edge_metrics(x, LOW, MID, HIGH, settle_pct=settle, window=window)
            want = edge_metrics_numpy.metrics(x, edges, LOW, HIGH, settle_pct=settle,
                                              window=window)
            np.testing.assert_array_equal(got["sample"], edges["sample"])
            assert_same(self, got, want, edge_metrics_numpy.FIELDS + ("flags", ))
            # The metrics are defined for nearly every edge of this clean recording.
            self.assertGreater(np.isfinite(got["duration"]).mean(), 0.99)
            ref = transient.edge_metrics(x, LOW, MID, HIGH, settle_pct=settle,
                                         window=window, variant="reference")
            assert_same(self, ref, got, edge_metrics_numpy.FIELDS + ("flags", ))

    def test_synthetic_against_numpy(self):
        x = pulses(40000, 1)
        edges = transient.find_edges(x, 0.1, 0.5, 0.9)
        got = transient.edge_metrics(x, 0.1, 0.5, 0.9, ref_levels=(5, 95),
                                     ref_levels2=(30, 70), region_factor=2, window=150)
        want = edge_metrics_numpy.metrics(x, edges, 0.1, 0.9, ref=(5, 95), ref2=(30, 70),
                                          region_factor=2, window=150)
        assert_same(self, got, want, edge_metrics_numpy.FIELDS + ("flags", ))
        self.assertTrue((got["flags"] & 1).any())  # the window cut some searches

    def run_block(self, x, msg_format):
        src = blocks.vector_source_f(list(map(float, x)), False)
        blk = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu",
                                         msg_format=msg_format, metrics=True)
        dbg = blocks.message_debug()
        src.set_max_noutput_items(997)
        tb = gr.top_block()
        tb.connect(src, blk)
        tb.msg_connect((blk, "detects"), (dbg, "store"))
        tb.run()
        msgs = [dbg.get_message(i) for i in range(dbg.num_messages())]
        mets = [transient.metric_arrays(m) for m in msgs if transient.is_metrics(m)]
        edges = [transient.edge_arrays(m) for m in msgs if not transient.is_metrics(m)]
        cat = lambda parts, k: np.concatenate([p[k] for p in parts])  # noqa: E731
        keys = ("sample", "time", "polarity", "flags") + edge_metrics_numpy.FIELDS
        return {k: cat(mets, k) for k in keys}, {k: cat(edges, k) for k in ("sample", )}

    def test_block_messages(self):
        x = pulses(30000, 2)
        want = transient.edge_metrics(x, 0.1, 0.5, 0.9)
        for fmt in ("dicts", "vectors"):
            got, edges = self.run_block(x, fmt)
            np.testing.assert_array_equal(got["sample"], want["sample"])
            np.testing.assert_array_equal(edges["sample"], want["sample"])
            assert_same(self, got, want, ("time", "flags") + edge_metrics_numpy.FIELDS)

    def test_tie(self):
        rng = np.random.default_rng(3)
        t = 100.0 * np.arange(5000) + 7.0 + rng.normal(0, 0.3, 5000)
        tie, rms, pp = transient.edge_tie(t)
        self.assertAlmostEqual(rms, 0.3, delta=0.015)
        self.assertAlmostEqual(pp, np.ptp(tie), places=12)
        # Against numpy's least-squares line over the whole record.
        m = np.arange(len(t))
        b, a = np.polyfit(m, t, 1)
        np.testing.assert_allclose(tie, t - (a + b * m), atol=1e-7)

    def test_errors(self):
        x = pulses(1000, 4)
        with self.assertRaisesRegex(ValueError, "reference levels"):
            transient.edge_metrics(x, 0.1, 0.5, 0.9, ref_levels=(95, 90))
        with self.assertRaisesRegex(ValueError, "settle_pct"):
            transient.edge_metrics(x, 0.1, 0.5, 0.9, settle_pct=0)
        with self.assertRaisesRegex(ValueError, "increase"):
            transient.edge_tie([3.0, 2.0, 4.0])
        with self.assertRaisesRegex(ValueError, "metrics"):
            transient.metric_arrays(pmt.make_dict())


if __name__ == "__main__":
    gr_unittest.run(qa_edge_metrics)
