#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Flowgraph tests of the SPIIR bank blocks spiir_bank_fc and spiir_bank_cc:
the SNR bit for bit, tags and messages against the core's trigger search, any
work call sizes, with and without the SNR output, both message formats, and
the chi-square against numpy on the block's own SNR."""

import math
import os
import tempfile

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient
from gnuradio.transient import spiir_design as sd
from gnuradio.transient import spiir_search

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


VECTOR_COLUMNS = {"sample": np.int64, "time": np.float64, "template": np.uint32,
                  "snr": np.float32, "phase": np.float32, "chisq": np.float32}


def detects_vectors(test, dbg):
    """The "vectors" messages of a message_debug as one dict of numpy columns
    (spiir_trigger_arrays; the PMT types checked)."""
    cols = {}
    for i in range(dbg.num_messages()):
        msg = dbg.get_message(i)
        keys = pmt.dict_keys(msg)
        names = [pmt.symbol_to_string(pmt.nth(j, keys)) for j in range(pmt.length(keys))]
        test.assertTrue(set(names) <= set(VECTOR_COLUMNS), names)
        test.assertTrue(pmt.is_s64vector(pmt.dict_ref(msg, pmt.intern("sample"), pmt.PMT_NIL)))
        test.assertTrue(pmt.is_u32vector(pmt.dict_ref(msg, pmt.intern("template"),
                                                      pmt.PMT_NIL)))
        for k, v in transient.spiir_trigger_arrays(msg).items():
            test.assertEqual(v.dtype, VECTOR_COLUMNS[k])
            cols.setdefault(k, []).append(v)
    return {k: np.concatenate(v) for k, v in cols.items()}


def numpy_chisq(z, template, peak, autocorr):
    """gstlal's autocorrelation chi-square of the SNR rows z[:, template] around
    row peak, over the lags whose rows exist."""
    half = (len(autocorr) - 1) // 2
    rows = peak + np.arange(-half, half + 1)
    ok = (rows >= 0) & (rows < len(z))
    a = autocorr[ok]
    d = a * complex(z[peak, template]) - z[rows[ok], template].astype(np.complex128)
    return np.sum(np.abs(d)**2) / (2.0 * np.count_nonzero(ok) - np.sum(np.abs(a)**2))


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
        # Chi-square: each template's autocorrelation, 48 lags either side.
        cls.autocorr = [spiir_search.autocorrelation(r.filters, c.h, FS, 48)[0]
                        for r, c in zip(cls.design.results, cls.chirps)]

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

    def run_block(self, blk, x, max_items=None, complex_input=False, output=True,
                  vectors=False):
        """Runs x through blk; returns (SNR, tags, triggers), SNR and tags None
        without the output; the triggers are detects() or, with vectors,
        detects_vectors()."""
        src = (blocks.vector_source_c if complex_input else blocks.vector_source_f)(
            x.tolist(), False)
        dbg = blocks.message_debug()
        if max_items is not None:
            blk.set_max_noutput_items(max_items)
        if output:
            snk = blocks.vector_sink_c(blk.ntemplates())
            self.tb.connect(src, blk, snk)
        else:
            self.tb.connect(src, blk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        msgs = detects_vectors(self, dbg) if vectors else detects(dbg)
        if not output:
            return None, None, msgs
        z = np.array(snk.data(), dtype=np.complex64).reshape(-1, blk.ntemplates())
        return z, trigger_tags(snk), msgs

    def make_env(self, hold="1", overlap="0", **kw):
        """make(**kw) with GR_TRANSIENT_SPIIR_HOLD_IN_BUFFER = hold ("0": the
        pending items go through the FIFO between calls instead of staying in
        the output buffer) and GR_TRANSIENT_SPIIR_OVERLAP = overlap ("1": the
        core runs on the next piece of a call while the triggers of the last
        one are searched, as with CUDA)."""
        os.environ["GR_TRANSIENT_SPIIR_HOLD_IN_BUFFER"] = hold
        os.environ["GR_TRANSIENT_SPIIR_OVERLAP"] = overlap
        try:
            return self.make(**kw)
        finally:
            del os.environ["GR_TRANSIENT_SPIIR_HOLD_IN_BUFFER"]
            del os.environ["GR_TRANSIENT_SPIIR_OVERLAP"]

    def flat_autocorr(self):
        return np.concatenate(self.autocorr)

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
                blk = self.make_env(hold, overlap, threshold=3.0, window=window)
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

    def core_triggers(self, window, z=None):
        """The core's triggers (threshold 3) on the single-rate SNR of self.x, as
        sorted (sample, template, snr), and that SNR."""
        a1, b0, delay, level, counts = self.arrays
        if z is None:
            z = transient.spiir_filter(self.x, a1, b0, delay, level, counts, 1 / FS)
        trig = transient.spiir_triggers(z, 3.0, window)
        return sorted((int(t["sample"]), int(t["template"]), float(t["snr"]))
                      for t in trig), z

    def test_009_without_output(self):
        """No SNR output: a sink whose messages hold exactly the core's triggers
        (the clusters the end of the stream decides included), whatever the
        work calls."""
        z = None
        for window in (1, 64, 700):
            expected, z = self.core_triggers(window, z)
            self.assertGreater(len(expected), 10)
            for max_items, overlap in ((None, "0"), (1, "0"), (97, "0"), (5000, "1")):
                if max_items == 1 and window != 64:
                    continue  # one sample per call: slow, once is enough
                self.tb = gr.top_block()
                blk = self.make_env("1", overlap, threshold=3.0, window=window)
                _, _, msgs = self.run_block(blk, self.x, max_items=max_items, output=False)
                got = sorted((int(v["sample"]), int(v["template"]), float(v["snr"]))
                             for v in msgs)
                self.assertEqual(got, expected, (window, max_items))
                self.assertNotIn("chisq", msgs[0])
        # The last cluster is open when the stream ends (decided by the end).
        self.assertGreater(expected[-1][0], self.n - 700)

    def test_010_vector_messages(self):
        """msg_format "vectors": dicts of uniform vectors, element i for trigger
        i, the same triggers as the dicts, with and without the output; the
        tags stay dicts."""
        _, tags, dicts = self.run_block(self.make(threshold=3.0, window=64), self.x)
        self.assertGreater(len(dicts), 10)
        for output, max_items in ((True, None), (True, 97), (False, None), (False, 97)):
            self.tb = gr.top_block()
            blk = self.make(threshold=3.0, window=64, msg_format="vectors")
            self.assertEqual(blk.msg_format(), "vectors")
            _, vtags, cols = self.run_block(blk, self.x, max_items=max_items, output=output,
                                            vectors=True)
            self.assertEqual(sorted(cols), sorted(set(VECTOR_COLUMNS) - {"chisq"}))
            for k in cols:
                want = np.array([d[k] for d in dicts]).astype(VECTOR_COLUMNS[k])
                self.assertTrue(np.array_equal(cols[k], want), (k, output, max_items))
            if output:
                self.assertEqual(vtags, tags)
        self.assertEqual(self.make().msg_format(), "dicts")
        # spiir_trigger_arrays reads the dicts messages into the same columns.
        self.tb = gr.top_block()
        blk = self.make(threshold=3.0, window=64)
        dbg = blocks.message_debug()
        self.tb.connect(blocks.vector_source_f(self.x.tolist(), False), blk)
        self.tb.msg_connect((blk, "detects"), (dbg, "store"))
        self.tb.run()
        arrays = [transient.spiir_trigger_arrays(dbg.get_message(i))
                  for i in range(dbg.num_messages())]
        for k in cols:
            self.assertTrue(np.array_equal(np.concatenate([a[k] for a in arrays]), cols[k]))
        with self.assertRaisesRegex(ValueError, "neither"):
            transient.spiir_trigger_arrays(pmt.make_dict())

    def test_011_chisq_against_numpy(self):
        """autocorr: the chi-square of every trigger is numpy's on the block's
        own SNR output, in tags, dicts and vectors, with and without the
        output, whatever the work calls. Two glitches (impulses, one at the
        stream's start: lags cut there, as at its end) give large values."""
        ac = self.flat_autocorr()
        x = self.x.copy()
        x[5] += 2000.0
        x[9000] += 2000.0
        for max_items, hold, overlap in ((None, "1", "0"), (1, "1", "0"), (97, "0", "0"),
                                         (5000, "1", "1")):
            self.tb = gr.top_block()
            blk = self.make_env(hold, overlap, threshold=3.0, window=64, autocorr=ac)
            self.assertEqual(blk.chisq_half(), 48)
            z, tags, msgs = self.run_block(blk, x, max_items=max_items)
            self.assertGreater(len(tags), 10)
            for off, v in tags:
                t = int(v["template"])
                want = numpy_chisq(z, t, off, self.autocorr[t])
                self.assertAlmostEqual(v["chisq"] / want, 1.0, delta=1e-9, msg=(off, t))
            self.assertEqual(sorted(msgs, key=lambda v: (v["sample"], v["template"])),
                             sorted([v for _, v in tags],
                                    key=lambda v: (v["sample"], v["template"])))
        # Triggers within half of both ends of the stream.
        offs = [off for off, _ in tags]
        self.assertLess(min(offs), 48)
        self.assertGreater(max(offs), self.n - 49)
        glitches = [v["chisq"] for off, v in tags if off < 48 or 9000 <= off < 9048]
        self.assertGreaterEqual(len(glitches), 2)
        self.assertGreater(min(glitches), 1000.0)
        for max_items in (None, 97):
            self.tb = gr.top_block()
            blk = self.make(threshold=3.0, window=64, autocorr=ac, msg_format="vectors")
            _, _, cols = self.run_block(blk, x, max_items=max_items, output=False,
                                        vectors=True)
            self.assertTrue(np.array_equal(
                cols["chisq"], np.array([v["chisq"] for v in msgs], dtype=np.float32)))

    def test_012_chisq_of_the_chirps(self):
        """The injected chirps match their templates: a small chi-square
        (single rate and multirate, each with its autocorrelation)."""
        for multirate in (False, True):
            ac = np.concatenate([
                spiir_search.autocorrelation(r.filters, c.h, FS, 48, multirate)[0]
                for r, c in zip(self.design.results, self.chirps)])
            self.tb = gr.top_block()
            blk = self.make(autocorr=ac, multirate=multirate)
            z, tags, msgs = self.run_block(blk, self.x)
            self.check_triggers(tags, msgs, latency=blk.latency())
            for off, v in tags:
                t = int(v["template"])
                self.assertTrue(0.2 < v["chisq"] < 1.5, (multirate, v))
                want = numpy_chisq(z, t, off, ac[t * 97:(t + 1) * 97])
                self.assertAlmostEqual(v["chisq"] / want, 1.0, delta=1e-9)

    def test_013_bad_message_and_chisq_arguments(self):
        ac = self.flat_autocorr()
        with self.assertRaisesRegex(ValueError, "msg_format"):
            self.make(msg_format="json")
        with self.assertRaisesRegex(ValueError, "lags per template"):
            self.make(autocorr=ac[:-1])
        with self.assertRaisesRegex(ValueError, "lags per template"):
            self.make(autocorr=np.ones(2, dtype=complex))
        with self.assertRaisesRegex(ValueError, "exceeds the trigger window"):
            self.make(window=40, autocorr=ac)
        bad = ac.copy()
        bad[3] = np.nan
        with self.assertRaisesRegex(ValueError, "not finite"):
            self.make(autocorr=bad)
        bad = ac.copy()
        bad[97 + 48] = 2.0
        with self.assertRaisesRegex(ValueError, "template 1 is not 1 at lag 0"):
            self.make(autocorr=bad)
        self.assertEqual(self.make().chisq_half(), 0)

    def test_014_cuda_sink_vectors_chisq(self):
        """CUDA backend (skipped without a GPU): with and without the output,
        the chirps' triggers and chi-squares of the CPU block."""
        if transient.cuda_device_count() == 0:
            self.skipTest("no CUDA device")
        ac = self.flat_autocorr()
        _, _, want = self.run_block(self.make(autocorr=ac, msg_format="vectors"), self.x,
                                    vectors=True)
        for output in (True, False):
            self.tb = gr.top_block()
            blk = self.make(autocorr=ac, msg_format="vectors", backend="cuda", batch=1024)
            self.assertEqual(blk.backend(), "cuda")
            _, tags, got = self.run_block(blk, self.x, output=output, vectors=True)
            self.assertTrue(np.array_equal(got["sample"], want["sample"]), output)
            self.assertTrue(np.array_equal(got["template"], want["template"]))
            self.assertTrue(np.allclose(got["snr"], want["snr"], rtol=1e-4))
            self.assertTrue(np.allclose(got["chisq"], want["chisq"], rtol=1e-2, atol=1e-3))
            if output:
                self.assertEqual(len(tags), len(want["sample"]))


if __name__ == "__main__":
    gr_unittest.run(qa_spiir_bank_fc)
