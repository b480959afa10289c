#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Flowgraph tests of kalman_detector_ff: bursts found at the right absolute
offsets, tags and messages consistent, setters, bad parameters, NaN input."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient
from gnuradio.transient import kalman_signals as ks

M = 92
MODEL = dict(noise_ar=[0.5], noise_var=1.0, meas_var=0.0, target_ar=[0.9],
             target_var=2.0, envelope="rect", env_param=10.0)


def make_det(threshold=-5.0, Ns=46, **kw):
    p = dict(MODEL)
    p.update(kw)
    return transient.kalman_detector_ff(M, Ns, threshold, 1e-9, p["noise_ar"],
                                        p["noise_var"], p["meas_var"], p["target_ar"],
                                        p["target_var"], p["envelope"], p["env_param"],
                                        "", "cpu", 0, 65536)


def run(x, det, chunk=None, prefix=0):
    """Run x through det (after `prefix` zero samples through a head start),
    return (llr, decision, llr tags, detect dicts)."""
    tb = gr.top_block()
    data = np.concatenate([np.zeros(prefix, np.float32), x]).tolist()
    src = blocks.vector_source_f(data, False)
    s0, s1 = blocks.vector_sink_f(), blocks.vector_sink_f()
    dbg = blocks.message_debug()
    if chunk:
        # Small scheduler buffers: the stream reaches the block in many calls.
        src.set_max_output_buffer(chunk)
        det.set_max_noutput_items(chunk)
    tb.connect(src, det)
    tb.connect((det, 0), s0)
    tb.connect((det, 1), s1)
    tb.msg_connect(det, "detects", dbg, "store")
    tb.run()
    tags = [(t.offset, pmt.to_python(t.value)) for t in s0.tags()
            if pmt.symbol_to_string(t.key) == "burst"]
    msgs = [pmt.to_python(dbg.get_message(i)) for i in range(dbg.num_messages())]
    return np.array(s0.data()), np.array(s1.data()), tags, msgs


class qa_kalman_detector_ff(gr_unittest.TestCase):

    def setUp(self):
        self.onsets = np.arange(1500, 60000, 3000)
        self.x, _ = ks.gaussian_bursts(60000, self.onsets, M=M, target_var=2.0,
                                       seed=11)

    def test_bursts_found(self):
        llr, dec, tags, msgs = run(self.x, make_det())
        self.assertEqual(len(llr), len(self.x))
        self.assertTrue(np.all(np.isfinite(llr)))
        np.testing.assert_array_equal(dec, (llr > -5.0).astype(np.float32))
        # Every detection lies within a burst (no false alarms) and most
        # bursts are found.
        hit = set()
        for m in msgs:
            owner = [o for o in self.onsets if o <= m["start"] < o + M]
            self.assertEqual(len(owner), 1, f"false alarm {m}")
            hit.add(int(owner[0]))
            self.assertLess(m["start"], m["end"])
            self.assertTrue(m["start"] <= m["peak"] < m["end"])
            self.assertAlmostEqual(m["peak_llr"], float(llr[m["peak"]]), places=4)
            # The estimated onset is close to the true one.
            self.assertLessEqual(abs(m["onset"] - owner[0]), 30)
        self.assertGreaterEqual(len(hit), int(0.8 * len(self.onsets)))
        # Tags: True at every start, False at every end, alternating.
        self.assertEqual(len(tags), 2 * len(msgs))
        for i, m in enumerate(msgs):
            self.assertEqual(tags[2 * i], (m["start"], True))
            self.assertEqual(tags[2 * i + 1], (m["end"], False))

    def test_chunking_and_absolute_offsets(self):
        ref = run(self.x, make_det())
        for chunk in (1024, 337):
            got = run(self.x, make_det(), chunk=chunk)
            np.testing.assert_array_equal(ref[0], got[0])
            self.assertEqual(ref[2], got[2])
            self.assertEqual(ref[3], got[3])

    def test_setters(self):
        det = make_det()
        det.set_threshold(3.5)
        det.set_ns(20)
        det.set_alpha(1e-6)
        self.assertEqual(det.threshold(), 3.5)
        self.assertEqual(det.ns(), 20)
        self.assertAlmostEqual(det.alpha(), 1e-6)
        self.assertEqual(det.M(), M)
        self.assertEqual(det.Q(), 1)
        self.assertEqual(det.backend(), "cpu")
        for bad in (lambda: det.set_ns(0), lambda: det.set_ns(M),
                    lambda: det.set_alpha(0.0), lambda: det.set_alpha(1.0),
                    lambda: det.set_threshold(float("nan"))):
            with self.assertRaises(ValueError):
                bad()
        self.assertEqual(det.ns(), 20)  # unchanged by the rejected values

    def test_bad_parameters(self):
        with self.assertRaisesRegex(ValueError, "kalman_detector_ff"):
            make_det(noise_ar=[1.5])  # unstable AR
        with self.assertRaises(ValueError):
            make_det(Ns=M)
        with self.assertRaises(ValueError):
            make_det(envelope="square")
        with self.assertRaises(ValueError):
            make_det(noise_var=-1.0)
        with self.assertRaises(ValueError):
            transient.kalman_detector_ff(M, 46, 0.0, 1e-9, [0.5], 1.0, 0.0, [0.9], 1.0,
                                         "rect", 10.0, "", "gpu", 0, 65536)
        with self.assertRaises(RuntimeError):
            transient.kalman_detector_ff(M, 46, 0.0, 1e-9, [0.5], 1.0, 0.0, [0.9], 1.0,
                                         "rect", 10.0, "/nonexistent/model.bin", "cpu",
                                         0, 65536)

    def test_nonfinite_never_stuck(self):
        x = self.x.copy()
        x[10000:10010] = np.nan
        x[20000] = np.inf
        det = make_det()
        llr, _, _, msgs = run(x, det)
        self.assertEqual(det.nonfinite(), 11)
        self.assertTrue(np.all(np.isfinite(llr)))
        clean = run(self.x, make_det())[0]
        # Far after the bad samples the detector is back on the clean stream's
        # track: the registers forget within a few burst lengths.
        np.testing.assert_allclose(llr[40000:], clean[40000:], rtol=1e-3, atol=1e-3)


if __name__ == "__main__":
    gr_unittest.run(qa_kalman_detector_ff)
