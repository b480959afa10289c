#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Device-resident buffers, the parts that need no GPU (docs/device-buffers.md):
off by default, requests that cannot work refused with clear errors, the
Python and GRC parameters, and power_cf on the CPU (the front of the
power -> boxcar search chain). The GPU side is tests/flowgraph/
test_device_buffers.cc (label gpu)."""

import os

import numpy as np
import yaml
from gnuradio import blocks, gr, gr_unittest
from gnuradio import transient

GRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "grc")


def gpu_usable():
    try:
        return transient.power_cf(backend="cuda").backend() == "cuda"
    except RuntimeError:
        return False


def boxcar(cls=None, **kw):
    p = dict(nchan=1, max_width=64, threshold=6.0, norm_mode="fixed", fixed_mean=2.0,
             fixed_sigma=2.0)
    p.update(kw)
    return (cls or transient.boxcar_search_ff)(**p)


class qa_device_buffers(gr_unittest.TestCase):

    def test_off_by_default(self):
        self.assertFalse(transient.boxcar_search_ff().device_buffers())
        self.assertFalse(transient.boxcar_search_cf().device_buffers())
        self.assertFalse(transient.power_cf().device_buffers())
        self.assertEqual(transient.power_cf().device_buffers_error(), "")
        self.assertFalse(boxcar(backend="cpu").device_buffers())

    def test_cpu_backend_refused(self):
        for make in (lambda: boxcar(backend="cpu", device_buffers=True),
                     lambda: transient.power_cf(backend="cpu", device_buffers=True)):
            with self.assertRaisesRegex(ValueError, 'device_buffers needs the CUDA '
                                        'backend \\(backend is "cpu"\\)'):
                make()

    def test_no_gpu_refused(self):
        if gpu_usable():
            self.skipTest("a GPU is usable here")
        for make in (lambda: boxcar(device_buffers=True),
                     lambda: transient.power_cf(device_buffers=True)):
            with self.assertRaisesRegex(RuntimeError, "device_buffers needs"):
                make()
        for make in (lambda: boxcar(backend="cuda", device_buffers=True),
                     lambda: transient.power_cf(backend="cuda", device_buffers=True)):
            with self.assertRaises(RuntimeError):
                make()

    def test_boxcar_settings_refused(self):
        # Checked before the backend: the same error with or without a GPU.
        with self.assertRaisesRegex(ValueError, 'norm_mode "fixed"'):
            boxcar(norm_mode="white", device_buffers=True)
        with self.assertRaisesRegex(ValueError, "baseline_window 0"):
            boxcar(baseline_window=101, device_buffers=True)
        with self.assertRaisesRegex(ValueError, "float input"):
            boxcar(transient.boxcar_search_cf, device_buffers=True)

    def test_power_cpu(self):
        rng = np.random.default_rng(3)
        for nchan in (1, 3):
            x = (rng.standard_normal(5000 * nchan) +
                 1j * rng.standard_normal(5000 * nchan)).astype(np.complex64)
            tb = gr.top_block()
            src = blocks.vector_source_c(x.tolist(), False, nchan)
            pw = transient.power_cf(nchan, "cpu")
            snk = blocks.vector_sink_f(nchan)
            tb.connect(src, pw, snk)
            tb.run()
            self.assertEqual(pw.backend(), "cpu")
            self.assertEqual(pw.nchan(), nchan)
            ref = x.real * x.real + x.imag * x.imag
            np.testing.assert_array_equal(np.array(snk.data(), np.float32), ref)

    def test_power_then_boxcar_equals_boxcar_cf(self):
        """power_cf -> boxcar_search_ff finds what boxcar_search_cf finds (its
        power comes from VOLK, which may round the last place differently)."""
        rng = np.random.default_rng(5)
        x = (rng.standard_normal(40000) + 1j * rng.standard_normal(40000))
        x[12000:12020] += 3.0
        x = x.astype(np.complex64).tolist()
        out = []
        for chain in ("power_ff", "cf"):
            tb = gr.top_block()
            src = blocks.vector_source_c(x, False)
            s0, s1 = blocks.vector_sink_f(), blocks.vector_sink_f()
            if chain == "cf":
                bx = boxcar(transient.boxcar_search_cf, backend="cpu")
                tb.connect(src, bx)
            else:
                bx = boxcar(backend="cpu")
                tb.connect(src, transient.power_cf(1, "cpu"), bx)
            tb.connect((bx, 0), s0)
            tb.connect((bx, 1), s1)
            tb.run()
            out.append((np.array(s0.data()), np.array(s1.data()), bx.candidates()))
        np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-5, atol=1e-5)
        self.assertEqual(out[0][2], out[1][2])
        self.assertGreater(out[0][2], 0)

    def test_grc_parameters(self):
        for name, fcn in (("transient_boxcar_search_ff.block.yml", "boxcar_search"),
                          ("transient_power_cf.block.yml", "power_cf")):
            with open(os.path.join(GRC, name)) as f:
                y = yaml.safe_load(f)
            params = {p["id"]: p for p in y["parameters"]}
            self.assertIn("device_buffers", params, name)
            self.assertEqual(params["device_buffers"]["dtype"], "bool")
            self.assertEqual(params["device_buffers"]["default"], "False")
            self.assertIn("${device_buffers}", y["templates"]["make"], name)
            self.assertIn("device_buffers", y["cpp_templates"]["make"], name)
            self.assertTrue(any("device_buffers" in a and "cpu" in a
                                for a in y["asserts"]), name)
            self.assertIn(fcn, y["templates"]["make"])


if __name__ == "__main__":
    gr_unittest.run(qa_device_buffers)
