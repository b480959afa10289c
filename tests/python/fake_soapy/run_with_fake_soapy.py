#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Runs a generated flow graph with a stand-in for gr-soapy (no radio needed),
for the test of examples/demo_sdr_soapy.grc: gnuradio.soapy.source gives the
signal of the gr-osmosdr stand-in (tests/python/fake_osmosdr: complex noise
with a tone burst of 1000 samples every 50000), and its setters do nothing.

usage: run_with_fake_soapy.py SCRIPT [ARGS...]
"""

import os
import runpy
import sys
import types

import gnuradio
from gnuradio import gr

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                "fake_osmosdr"))
import osmosdr  # noqa: E402  (the stand-in)


class source(gr.hier_block2):
    """soapy.source(device, type, nchan, dev_args, stream_args, tune_args, settings)"""

    def __init__(self, device, type_, nchan, dev_args, stream_args, tune_args, settings):
        if type_ != "fc32" or nchan != 1:
            raise ValueError("the gr-soapy stand-in gives one fc32 channel")
        gr.hier_block2.__init__(self, "soapy.source stand-in", gr.io_signature(0, 0, 0),
                                gr.io_signature(1, 1, gr.sizeof_gr_complex))
        self.connect(osmosdr.source(), self)
        self.device = device



def _ignore(self, *args, **kwargs):
    return None


for _name in ("set_sample_rate", "set_bandwidth", "set_antenna", "set_frequency",
              "set_frequency_correction", "set_gain_mode", "set_gain", "set_dc_offset_mode",
              "set_dc_offset", "set_iq_balance"):
    setattr(source, _name, _ignore)


soapy = types.ModuleType("gnuradio.soapy")
soapy.source = source
sys.modules["gnuradio.soapy"] = soapy
gnuradio.soapy = soapy

script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
