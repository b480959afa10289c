#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Stand-in for gr-osmosdr's Python module in the test of examples/demo_sdr.grc
(no radio needed): osmosdr.source gives complex noise with a tone burst of 1000
samples every 50000 samples (20 bursts in the first 1,000,000), repeated; the
tuning setters do nothing."""

import numpy as np
from gnuradio import blocks, gr


class time_spec_t(object):
    pass


class source(gr.hier_block2):
    def __init__(self, args=""):
        gr.hier_block2.__init__(self, "osmosdr.source stand-in", gr.io_signature(0, 0, 0),
                                gr.io_signature(1, 1, gr.sizeof_gr_complex))
        rng = np.random.default_rng(3)
        n = 1 << 20
        z = (rng.normal(0, 1, n) + 1j * rng.normal(0, 1, n)) / np.sqrt(2)
        for s in range(20000, n - 2000, 50000):
            z[s:s + 1000] += 4 * np.exp(1j * 0.1 * np.arange(1000))
        self.src = blocks.vector_source_c(z.astype(np.complex64), True)
        self.connect(self.src, self)


def _ignore(self, *args, **kwargs):
    return None


for _name in ("set_time_unknown_pps", "set_time_now", "set_clock_source", "set_time_source",
              "set_sample_rate", "set_center_freq", "set_freq_corr", "set_dc_offset_mode",
              "set_iq_balance_mode", "set_gain_mode", "set_gain", "set_if_gain", "set_bb_gain",
              "set_antenna", "set_bandwidth"):
    setattr(source, _name, _ignore)
