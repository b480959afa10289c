#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Flowgraph tests of the SPIIR bank blocks spiir_bank_fc and spiir_bank_cc."""

import math
import os
import tempfile

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient
from gnuradio.transient import spiir_design as sd

FS = 1024.0


def trigger_tags(sink):
    """The "trigger" tags of a sink as (offset, dict) pairs."""
    return [(t.offset, pmt.to_python(t.value)) for t in sink.tags()
            if pmt.symbol_to_string(t.key) == "trigger"]


def detects(dbg):
    out = []
    for i in range(dbg.num_messages()):
        out += pmt.to_python(dbg.get_message(i))["triggers"]
    return out


class qa_spiir_bank_fc(gr_unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        # Two templates: an 8 s and a 5 s chirp from 20 to 200 Hz.
        cls.chirps = [sd.newtonian_chirp(FS, 20.0, 200.0, duration=d) for d in (8.0, 5.0)]
        cls.design = sd.design_bank([c.h for c in cls.chirps], FS)
        cls.arrays = cls.design.bank.arrays()
        rng = np.random.default_rng(11)
        cls.n = len(cls.chirps[0].h) + 12000
        cls.x = rng.standard_normal(cls.n).astype(np.float32)
        # Template 1's chirp ends at sample 7000, template 0's at len + 9000.
        cls.ends = (len(cls.chirps[0].h) + 9000, 7000)
        sd.inject(cls.x, cls.chirps[0].h, cls.ends[0], 40.0)
        sd.inject(cls.x, cls.chirps[1].h, cls.ends[1], 25.0)

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def make(self, cls=transient.spiir_bank_fc, **kw):
        a1, b0, delay, level, counts = self.arrays
        args = dict(bank_file="", a1=a1, b0=b0, delay=delay, level=level, counts=counts,
                    samp_rate=FS, threshold=12.0, window=512, backend="cpu")
        args.update(kw)
        return cls(**args)

    def run_block(self, blk, x, max_items=None, complex_input=False):
        src = (blocks.vector_source_c if complex_input else blocks.vector_source_f)(
            x.tolist(), False)
        snk = blocks.vector_sink_c(blk.ntemplates())
        dbg = blocks.message_debug()
        if max_items is not None:
            blk.set_max_noutput_items(max_items)
        self.tb.connect(src, blk, snk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        z = np.array(snk.data(), dtype=np.complex64).reshape(-1, blk.ntemplates())
        return z, trigger_tags(snk), detects(dbg)

    def check_triggers(self, tags, msgs, latency=0):
        self.assertEqual(len(tags), 2, tags)
        self.assertEqual([t[1] for t in tags], msgs)
        by_template = {int(v["template"]): (off, v) for off, v in tags}
        self.assertEqual(sorted(by_template), [0, 1])
        for t in (0, 1):
            off, v = by_template[t]
            end = self.ends[t]
            self.assertEqual(int(v["sample"]), off - latency)
            self.assertLessEqual(abs(int(v["sample"]) - end), 1 if latency else 0)
            self.assertLess(abs(v["time"] - end / FS), 1.0 / FS)
            expected = (40.0, 25.0)[t] * self.design.results[t].match
            self.assertAlmostEqual(v["snr"] / expected, 1.0, delta=0.12)
            self.assertTrue(-math.pi <= v["phase"] <= math.pi)
        # Tags in offset order.
        self.assertEqual([t[0] for t in tags], sorted(t[0] for t in tags))

    def test_001_chirps_trigger_at_their_end(self):
        blk = self.make()
        self.assertEqual(blk.ntemplates(), 2)
        self.assertEqual(blk.nfilters(), int(self.arrays[4].sum()))
        self.assertEqual(blk.samp_rate(), FS)
        self.assertEqual(blk.latency(), 0)
        self.assertEqual(blk.backend(), "cpu")
        self.assertFalse(blk.multirate())
        z, tags, msgs = self.run_block(blk, self.x)
        a1, b0, delay, level, counts = self.arrays
        ref = transient.spiir_filter(self.x, a1, b0, delay, level, counts, 1 / FS)
        self.assertEqual(z.shape, ref.shape)
        self.assertTrue(np.array_equal(z, ref))  # every sample out, bit for bit
        self.check_triggers(tags, msgs)

    def test_002_chunking(self):
        """Small work calls: the same output and the same triggers."""
        z0, tags0, _ = self.run_block(self.make(), self.x)
        self.tb = gr.top_block()
        z1, tags1, msgs1 = self.run_block(self.make(), self.x, max_items=97)
        self.assertTrue(np.array_equal(z0, z1))
        self.assertEqual(tags0, tags1)
        self.check_triggers(tags1, msgs1)

    def test_003_complex_input(self):
        xc = self.x.astype(np.complex64)
        z, tags, msgs = self.run_block(self.make(transient.spiir_bank_cc), xc,
                                       complex_input=True)
        a1, b0, delay, level, counts = self.arrays
        ref = transient.spiir_filter(xc, a1, b0, delay, level, counts, 1 / FS)
        self.assertTrue(np.array_equal(z, ref))
        self.check_triggers(tags, msgs)

    def test_004_bank_file(self):
        """A bank file written in Python, read by the core, gives the same SNR."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bank.spiir")
            self.design.bank.save(path)
            blk = transient.spiir_bank_fc(path, threshold=12.0, window=512, backend="cpu")
            self.assertEqual(blk.samp_rate(), FS)
            transient.spiir_bank_fc(path, samp_rate=FS, backend="cpu")
            with self.assertRaisesRegex(ValueError, "differs"):
                transient.spiir_bank_fc(path, samp_rate=2 * FS, backend="cpu")
            with self.assertRaisesRegex(ValueError, "not both"):
                transient.spiir_bank_fc(path, counts=[1], backend="cpu")
            bad = os.path.join(tmp, "bad.spiir")
            with open(path, "rb") as fp:
                data = fp.read()
            with open(bad, "wb") as fp:
                fp.write(data[:-3])
            with self.assertRaisesRegex(RuntimeError, "truncated"):
                transient.spiir_bank_fc(bad, backend="cpu")
        z, tags, msgs = self.run_block(blk, self.x)
        a1, b0, delay, level, counts = self.arrays
        ref = transient.spiir_filter(self.x, a1, b0, delay, level, counts, 1 / FS)
        self.assertTrue(np.array_equal(z, ref))
        self.check_triggers(tags, msgs)

    def test_005_threshold_callback(self):
        blk = self.make()
        self.assertEqual(blk.threshold(), 12.0)
        with self.assertRaises(ValueError):
            blk.set_threshold(-1.0)
        with self.assertRaises(ValueError):
            blk.set_threshold(float("nan"))
        self.assertEqual(blk.threshold(), 12.0)
        blk.set_threshold(1e6)
        _, tags, msgs = self.run_block(blk, self.x)
        self.assertEqual(tags, [])
        self.assertEqual(msgs, [])
        # A threshold in the noise gives many triggers, more than window apart.
        self.tb = gr.top_block()
        blk = self.make(threshold=3.0, window=64)
        _, tags, msgs = self.run_block(blk, self.x)
        self.assertGreater(len(tags), 10)
        for t in (0, 1):
            offs = [o for o, v in tags if v["template"] == t]
            self.assertTrue(np.all(np.diff(offs) > 64))

    def test_006_multirate(self):
        """Multirate: the triggers stay at the chirps' ends (latency removed)."""
        blk = self.make(multirate=True)
        self.assertTrue(blk.multirate())
        self.assertGreaterEqual(blk.latency(), 0)
        z, tags, msgs = self.run_block(blk, self.x)
        self.assertEqual(len(z), self.n)
        self.check_triggers(tags, msgs, latency=blk.latency())

    def test_008_every_trigger_any_work_size(self):
        """Many triggers (threshold in the noise): the output bit for bit and the
        tags exactly the core's triggers, whatever the work calls (large calls
        write the SNR straight into the output buffer and leave the pending
        items there, small ones go through the block's FIFO)."""
        a1, b0, delay, level, counts = self.arrays
        ref = transient.spiir_filter(self.x, a1, b0, delay, level, counts, 1 / FS)
        for window in (1, 64, 700):
            trig = transient.spiir_triggers(ref, 3.0, window)
            expected = sorted((int(t["sample"]), int(t["template"]), float(t["snr"]))
                              for t in trig)
            self.assertGreater(len(expected), 10)
            for max_items, hold, overlap in ((None, "1", "0"), (97, "1", "0"),
                                             (1000, "1", "0"), (5000, "1", "0"),
                                             (None, "0", "0"), (1000, "0", "0"),
                                             (None, "1", "1"), (5000, "1", "1"),
                                             (3000, "0", "1")):
                self.tb = gr.top_block()
                # hold "0": the pending items go through the FIFO between calls
                # instead of staying in the output buffer; overlap "1": the
                # core runs on the next piece of a call while the triggers of
                # the last one are searched (as with CUDA).
                os.environ["GR_TRANSIENT_SPIIR_HOLD_IN_BUFFER"] = hold
                os.environ["GR_TRANSIENT_SPIIR_OVERLAP"] = overlap
                try:
                    blk = self.make(threshold=3.0, window=window)
                finally:
                    del os.environ["GR_TRANSIENT_SPIIR_HOLD_IN_BUFFER"]
                    del os.environ["GR_TRANSIENT_SPIIR_OVERLAP"]
                z, tags, msgs = self.run_block(blk, self.x, max_items=max_items)
                self.assertTrue(np.array_equal(z, ref), (window, max_items))
                got = sorted((off, int(v["template"]), float(v["snr"])) for off, v in tags)
                self.assertEqual(got, expected, (window, max_items))
                self.assertEqual(sorted(msgs, key=lambda v: (v["sample"], v["template"])),
                                 sorted([v for _, v in tags],
                                        key=lambda v: (v["sample"], v["template"])))

    def test_007_bad_banks(self):
        a1, b0, delay, level, counts = self.arrays
        bad = a1.copy()
        bad[5] = 1.0 + 0j
        with self.assertRaisesRegex(ValueError, "unstable pole"):
            self.make(a1=bad)
        d = delay.copy()
        d[3] = -2
        with self.assertRaisesRegex(ValueError, "delay"):
            self.make(delay=d)
        with self.assertRaisesRegex(ValueError, "empty"):
            self.make(counts=[0] + list(counts))
        with self.assertRaisesRegex(ValueError, "add up"):
            self.make(counts=[counts[0]])
        with self.assertRaisesRegex(ValueError, "same length"):
            self.make(b0=b0[:-1])
        with self.assertRaisesRegex(ValueError, "no bank"):
            transient.spiir_bank_fc(backend="cpu")
        with self.assertRaisesRegex(ValueError, "samp_rate"):
            self.make(samp_rate=0.0)
        with self.assertRaisesRegex(ValueError, "window"):
            self.make(window=0)
        with self.assertRaisesRegex(ValueError, "threshold"):
            self.make(threshold=-1.0)
        with self.assertRaisesRegex(ValueError, "backend"):
            self.make(backend="gpu")
        with self.assertRaisesRegex(RuntimeError, "cannot open"):
            transient.spiir_bank_fc("/nonexistent/bank.spiir", backend="cpu")
        # Without a GPU an explicit CUDA backend is refused; auto falls back.
        if transient.cuda_device_count() == 0:
            with self.assertRaises(RuntimeError):
                self.make(backend="cuda")
            self.assertEqual(self.make(backend="auto").backend(), "cpu")


if __name__ == "__main__":
    gr_unittest.run(qa_spiir_bank_fc)
