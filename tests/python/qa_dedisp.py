#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of the filterbank reader and dedispersion bindings
(gnuradio.transient.Filterbank, dedisp_dm_list, dedisperse): the real FRB
filterbank examples/data/29.fil, malformed files, and dedispersion against a
numpy implementation of its definition (docs/dedisp.md)."""

import os
import struct
import tempfile
import unittest

import numpy as np
from gnuradio import transient

HERE = os.path.dirname(os.path.abspath(__file__))
FIL = os.path.join(HERE, os.pardir, os.pardir, "examples", "data", "29.fil")
KDM = 4.148808e3


def sp_str(s):
    b = s.encode("ascii")
    return struct.pack("<i", len(b)) + b


def numpy_dedisperse(x, fch1, foff, tsamp, dms, zero_dm):
    """The definition, with float64 sums (compared with a tolerance)."""
    n, nchan = x.shape
    f = fch1 + foff * np.arange(nchan)
    x = x.astype(np.float64)
    if zero_dm:
        x = x - x.mean(axis=1, keepdims=True)
    pad = np.vstack([x, np.zeros_like(x)])
    y = np.zeros((n, len(dms)))
    for d, dm in enumerate(dms):
        delay = np.floor(KDM * dm * (f ** -2 - f.max() ** -2) / tsamp + 0.5).astype(int)
        for c in range(nchan):
            y[:, d] += pad[delay[c]:delay[c] + n, c]
    return y


class qa_dedisp(unittest.TestCase):
    def test_29_fil(self):
        with transient.Filterbank(FIL) as f:
            h = f.header
            self.assertEqual((h["nchans"], h["nbits"], h["nsamples"]), (336, 8, 5120))
            self.assertEqual((h["fch1"], h["foff"], h["tsamp"]), (1465.0, -1.0, 0.00126646875))
            self.assertEqual(h["source_name"], "src1")
            x = f.read(10000)
            self.assertEqual(x.shape, (5120, 336))
            self.assertEqual(f.position, 5120)
            f.seek(5000)
            self.assertEqual(f.read_raw(500).shape, (120, 336))
        dms = transient.dedisp_dm_list(336, 1465.0, -1.0, 0.00126646875, 0, 2000)
        self.assertEqual(len(dms), 285)
        # The burst: near DM 475 at 2.029 s (sample about 1602), S/N about 19.
        y, _ = transient.dedisperse(x, 1465.0, -1.0, 0.00126646875, dms=np.array([475.0]),
                                    zero_dm=True)
        s = y[:, 0]
        med = np.median(s)
        sigma = 1.4826 * np.median(np.abs(s - med))
        k = int(np.argmax(s))
        self.assertLessEqual(abs(k - 1602), 2)
        self.assertGreater((s[k] - med) / sigma, 15)

    def test_against_numpy(self):
        rng = np.random.default_rng(13)
        for foff, zero_dm in ((-0.5, False), (0.5, True)):
            x = rng.integers(0, 256, size=(400, 40)).astype(np.float32)
            dms = np.array([0.0, 3.5, 11.0, 40.0])
            y, got = transient.dedisperse(x, 400.0, foff, 1e-3, dms=dms, zero_dm=zero_dm,
                                          variant="reference")
            want = numpy_dedisperse(x, 400.0, foff, 1e-3, dms, zero_dm)
            np.testing.assert_array_equal(got, dms)
            np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-2)
            fast, _ = transient.dedisperse(x, 400.0, foff, 1e-3, dms=dms, zero_dm=zero_dm)
            np.testing.assert_array_equal(fast, y)

    def test_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.fil")
            with open(bad, "wb") as fh:
                fh.write(sp_str("HEADER_START") + sp_str("tsamp") + struct.pack("<d", 1e-3)
                         + sp_str("fch1") + struct.pack("<d", 1400.0) + sp_str("foff")
                         + struct.pack("<d", -1.0) + sp_str("nchans") + struct.pack("<i", 8)
                         + sp_str("nbits") + struct.pack("<i", 3) + sp_str("HEADER_END")
                         + bytes(24))
            with self.assertRaisesRegex(ValueError, "bad.fil.*nbits"):
                transient.Filterbank(bad)
        with self.assertRaisesRegex(ValueError, "tolerance"):
            transient.dedisp_dm_list(64, 1400.0, -1.0, 1e-3, 0, 100, tolerance=1.0)
        with self.assertRaisesRegex(ValueError, "mask"):
            transient.dedisperse(np.zeros((10, 4), np.float32), 1400.0, -1.0, 1e-3,
                                 mask=np.zeros(3, np.uint8))


if __name__ == "__main__":
    unittest.main()
