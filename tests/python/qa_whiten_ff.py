#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Flowgraph tests of whiten_ff: the PSD from a file, the design curve and an
estimate from the stream, against the core's Whitener on the same data; the
latency, tags moved with their samples, the gate, the fmin setter and bad
parameters."""

import os
import tempfile
import unittest

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from scipy import signal

from gnuradio import transient

RATE = 1024.0


def coloured(n, seed):
    rng = np.random.default_rng(seed)
    return signal.lfilter([1.0], [1.0, -0.9], rng.standard_normal(n)).astype(np.float32)


def run_block(block, x, tags=()):
    tb = gr.top_block()
    src = blocks.vector_source_f(x.tolist(), False, 1, list(tags))
    snk = blocks.vector_sink_f()
    tb.connect(src, block, snk)
    tb.run()
    return np.array(snk.data(), dtype=np.float32), snk.tags()


class qa_whiten_ff(gr_unittest.TestCase):
    def test_file_psd_equals_the_core(self):
        x = coloured(40000, 1)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "asd.txt")
            f = np.arange(1.0, 600.0, 0.5)
            w = 2 * np.pi * f / RATE
            asd = np.sqrt((2 / RATE) / (1 - 1.8 * np.cos(w) + 0.81))
            np.savetxt(path, np.column_stack([f, asd]))
            blk = transient.whiten_ff(RATE, "file", path, True, 2.0, 32.0, 10.0, 0.5,
                                      "cpu")
            y, _ = run_block(blk, x)
            psd = transient.psd_from_file(path, RATE, 2048, asd=True)
        ref = transient.Whitener(RATE, psd, fmin=10.0, half_len=512, backend="cpu")
        self.assertEqual(blk.latency(), ref.latency)
        self.assertEqual(blk.half_len(), 512)
        self.assertEqual(blk.backend(), "cpu")
        np.testing.assert_array_equal(y, ref.process(x))
        d = blk.latency()
        tail = y[d + 2048:].astype(np.float64)
        self.assertAlmostEqual(tail.var(), 1.0 - 2 * 10.0 / RATE, delta=0.05)

    def test_estimate_from_the_stream(self):
        x = coloured(60000, 2)
        n_est = int(16 * RATE)
        blk = transient.whiten_ff(RATE, "estimate", "", True, 2.0, 16.0, 20.0, 0.0, "cpu")
        self.assertTrue(blk.estimating())
        y, _ = run_block(blk, x)
        self.assertFalse(blk.estimating())
        np.testing.assert_array_equal(y[:n_est], 0)
        psd = transient.psd_welch(x[:n_est], RATE, 2048)
        want = transient.Whitener(RATE, psd, fmin=20.0, backend="cpu").process(x)
        self.assertEqual(blk.latency(), transient.Whitener(RATE, psd, fmin=20.0).latency)
        err = np.sqrt(np.mean((y[n_est:] - want[n_est:]) ** 2) / np.mean(want[n_est:] ** 2))
        self.assertLess(err, 1e-5)

    def test_silent_estimate_ends_the_stream(self):
        # A PSD of zeros cannot whiten: the block says so and ends its stream.
        blk = transient.whiten_ff(RATE, "estimate", "", True, 2.0, 16.0, 15.0, 0.0, "cpu")
        y, _ = run_block(blk, np.zeros(50000, np.float32))
        self.assertTrue(blk.estimating())
        self.assertLessEqual(len(y), 50000)
        np.testing.assert_array_equal(y, 0)

    def test_design_tags_and_gate(self):
        rng = np.random.default_rng(3)
        x = rng.standard_normal(30000).astype(np.float32) * np.float32(1e-21)
        x[20000] = np.nan
        tag = gr.tag_utils.python_to_tag((1234, pmt.intern("mark"), pmt.PMT_T, pmt.PMT_F))
        blk = transient.whiten_ff(4096.0, "design", "", True, 1.0, 32.0, 20.0, 0.0, "cpu")
        y, tags = run_block(blk, x, [tag])
        d = blk.latency()
        self.assertEqual([(t.offset, pmt.symbol_to_string(t.key)) for t in tags],
                         [(1234 + d, "mark")])
        h = blk.half_len()
        self.assertEqual(blk.gated(), 2 * h + 1)
        np.testing.assert_array_equal(y[20000 + d - h:20000 + d + h + 1], 0)
        self.assertTrue(np.all(np.isfinite(y)))

    def test_set_fmin(self):
        blk = transient.whiten_ff(4096.0, "design", "", True, 1.0, 32.0, 20.0, 0.0, "cpu")
        blk.set_fmin(30.0)
        self.assertEqual(blk.fmin(), 30.0)
        with self.assertRaisesRegex(ValueError, "fmin"):
            blk.set_fmin(3000.0)
        # The design curve is infinite below 10 Hz.
        with self.assertRaisesRegex(ValueError, "Hz"):
            blk.set_fmin(5.0)
        self.assertEqual(blk.fmin(), 30.0)
        # The new filter takes over having seen the input: what comes out after
        # the switch is the stream whitened with fmin = 30 Hz.
        x = (np.random.default_rng(4).standard_normal(40000) * 1e-21).astype(np.float32)
        y, _ = run_block(blk, x)
        psd = transient.psd_design(4096.0, 4096)
        want = transient.Whitener(4096.0, psd, fmin=30.0, backend="cpu").process(x)
        np.testing.assert_array_equal(y[:blk.latency()], 0)
        np.testing.assert_allclose(y, want, rtol=0, atol=1e-5 * np.abs(want).max())

    def test_bad_parameters(self):
        with self.assertRaisesRegex(ValueError, "psd_source"):
            transient.whiten_ff(RATE, "guess")
        with self.assertRaisesRegex(ValueError, "nothing.txt"):
            transient.whiten_ff(RATE, "file", "/nonexistent/nothing.txt")
        with self.assertRaisesRegex(ValueError, "estimate_seconds"):
            transient.whiten_ff(RATE, "estimate", "", True, 4.0, 1.0)
        with self.assertRaisesRegex(ValueError, "backend"):
            transient.whiten_ff(RATE, "estimate", "", True, 4.0, 32.0, 15.0, 0.0, "tpu")
        with self.assertRaisesRegex(ValueError, "half_len"):
            transient.whiten_ff(RATE, "estimate", "", True, 1.0, 32.0, 15.0, 0.6)


if __name__ == "__main__":
    gr_unittest.run(qa_whiten_ff)
