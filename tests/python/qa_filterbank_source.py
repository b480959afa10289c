#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Flowgraph tests of the filterbank_source block: the real 29.fil against
the pure-Python reader, every nbits, either sign of foff, first/count, the
header tags and malformed files."""

import os
import shutil
import tempfile

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient
from gnuradio.transient import timeseries

import fil_testdata as fd

HERE = os.path.dirname(os.path.abspath(__file__))
FIL = os.path.join(HERE, os.pardir, os.pardir, "examples", "data", "29.fil")


class qa_filterbank_source(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        self.tb = None
        shutil.rmtree(self.dir)

    def play(self, src, max_items=None):
        nchan = src.info().nchans
        snk = blocks.vector_sink_f(nchan)
        if max_items:
            src.set_max_noutput_items(max_items)
        self.tb = gr.top_block()
        self.tb.connect(src, snk)
        self.tb.run()
        return np.asarray(snk.data(), np.float32).reshape(-1, nchan), snk

    def test_001_real_file(self):
        h = transient.filterbank_source.header(FIL)
        self.assertEqual((h.nchans, h.nbits, h.nsamples), (336, 8, 5120))
        self.assertEqual((h.fch1, h.foff), (1465.0, -1.0))
        self.assertAlmostEqual(h.tsamp, 0.00126646875, places=12)
        self.assertAlmostEqual(h.center_freq(), 1465.0 - 167.5)
        ref = timeseries.read_sigproc(FIL).data
        src = transient.filterbank_source(FIL)
        x, snk = self.play(src, 700)
        np.testing.assert_array_equal(x, ref)
        tags = {pmt.symbol_to_string(t.key): t for t in snk.tags()}
        self.assertEqual(set(tags), {"rx_rate", "rx_freq", "rx_time", "filterbank"})
        self.assertTrue(all(t.offset == 0 for t in tags.values()))
        self.assertAlmostEqual(pmt.to_double(tags["rx_rate"].value), 1.0 / h.tsamp)
        self.assertAlmostEqual(pmt.to_double(tags["rx_freq"].value), 1297.5e6)
        d = pmt.to_python(tags["filterbank"].value)
        self.assertEqual((d["nchans"], d["fch1"], d["foff"]), (336, 1465.0, -1.0))
        self.assertEqual(d["tsamp"], h.tsamp)

    def test_002_first_and_count(self):
        ref = timeseries.read_sigproc(FIL).data
        src = transient.filterbank_source(FIL, 336, 1000, 123)
        self.assertEqual(src.count(), 123)
        x, _ = self.play(src, 50)
        np.testing.assert_array_equal(x, ref[1000:1123])
        src = transient.filterbank_source(FIL, 0, 5000)
        x, snk = self.play(src)
        np.testing.assert_array_equal(x, ref[5000:])
        # a second run plays the same spectra again, with its tags
        x2, snk2 = self.play(src)
        np.testing.assert_array_equal(x2, ref[5000:])
        self.assertEqual(len(snk2.tags()), 4)

    def test_003_every_nbits_and_foff_sign(self):
        rng = np.random.default_rng(1)
        for nbits in (1, 2, 4, 8, 16, 32):
            for foff in (-0.5, 0.25):
                n, nchan = 257, 16
                if nbits == 32:
                    x = rng.normal(0, 1, (n, nchan)).astype(np.float32)
                else:
                    x = rng.integers(0, 2**nbits, (n, nchan)).astype(np.float32)
                path = os.path.join(self.dir, "t%d.fil" % nbits)
                fd.write_fil(path, x, 1400.0, foff, 64e-6, nbits)
                src = transient.filterbank_source(path, nchan)
                self.assertEqual(src.info().foff, foff)
                y, _ = self.play(src, 31)
                np.testing.assert_array_equal(y, x, "nbits %d foff %g" % (nbits, foff))

    def test_004_bad_files_and_parameters(self):
        x = np.zeros((10, 8), np.float32)
        good = os.path.join(self.dir, "good.fil")
        fd.write_fil(good, x, 1400.0, -1.0, 1e-3, 32)
        raw = open(good, "rb").read()
        cases = {
            "truncated.fil": raw[:40],
            "partial.fil": raw[:-3],  # not a whole number of spectra
            "notfil.fil": b"\x00" * 100,
            "zero_foff.fil": fd.header_bytes(8, 32, 1400.0, 0.0, 1e-3) + raw[-320:],
            "bad_nbits.fil": fd.header_bytes(8, 12, 1400.0, -1.0, 1e-3) + raw[-320:],
        }
        for name, content in cases.items():
            path = os.path.join(self.dir, name)
            with open(path, "wb") as f:
                f.write(content)
            with self.assertRaises(ValueError, msg=name) as cm:
                transient.filterbank_source(path)
            self.assertIn(name, str(cm.exception))
            self.assertRaises(ValueError, transient.filterbank_source.header, path)
        missing = os.path.join(self.dir, "missing.fil")
        self.assertRaises(ValueError, transient.filterbank_source, missing)
        with self.assertRaises(ValueError) as cm:
            transient.filterbank_source(good, 16)
        self.assertIn("8 channels", str(cm.exception))
        self.assertRaises(ValueError, transient.filterbank_source, good, 0, 11)
        self.assertRaises(ValueError, transient.filterbank_source, good, 0, 5, 6)


if __name__ == "__main__":
    gr_unittest.run(qa_filterbank_source)
