#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""GW150914 in 32 s of LIGO Hanford open data, as a GNU Radio flow graph:

    vector source (the strain) -> Whiten (whiten_ff, PSD estimated from the
    first 12 s) -> SPIIR Filter Bank (spiir_bank_fc) -> null sink
                                          "detects" -> collected, printed

The bank is designed before the flow graph starts from the event's
numerical-relativity waveform, whitened by the same filter as the stream (the
PSD whiten_ff will estimate: Welch median of the same 12 s, 4 s segments), to a
match of 0.97. A trigger's sample is the end of the whitened template in the
whitened stream, which lags the strain by the whitening latency; the merger lies
end_to_merger seconds before that end. Headless; prints one line per trigger and

    triggers: N, best: SNR X, merger GPS Y

    python3 spiir_gw150914.py [--strain FILE.hdf5] [--waveform FILE.txt]
"""

import argparse
import os
import sys

import numpy as np
from gnuradio import blocks, gr
from gnuradio import transient as tr
from gnuradio.transient import gw_strain, spiir_bank, spiir_design, spiir_templates

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strain", default=os.path.join(HERE, "data",
                                                     "H-H1_LOSC_4_V2-1126259446-32.hdf5"))
    ap.add_argument("--waveform", default=os.path.join(HERE, "data",
                                                       "GW150914_4_NR_waveform.txt"))
    ap.add_argument("--estimate-seconds", type=float, default=12.0,
                    help="PSD from the stream's first seconds (the block outputs zeros "
                    "meanwhile)")
    ap.add_argument("--fmin", type=float, default=20.0)
    ap.add_argument("--threshold", type=float, default=8.0)
    args = ap.parse_args(argv)

    strain = gw_strain.read_gwosc(args.strain)
    fs = strain.sample_rate
    x = strain.data.astype(np.float32)
    nfft = int(4 * fs)
    psd = tr.psd_welch(x[:int(args.estimate_seconds * fs)], fs, nfft)
    whitener = tr.Whitener(fs, psd, args.fmin, backend="cpu")
    template = spiir_templates.whiten_template(
        spiir_templates.load_template(args.waveform, fs), whitener.taps())
    design = spiir_design.design_target(template.h, fs, 0.97)
    a1, b0, delay, level, counts = spiir_bank.SpiirBank([design.filters], 1.0 / fs).arrays()
    print("bank: %d filters, match %.4f; whitened template %d samples, merger %.4f s "
          "before its end" % (len(design.filters), design.match, len(template.h),
                              template.end_to_merger), flush=True)

    tb = gr.top_block("spiir_gw150914")
    src = blocks.vector_source_f(x.tolist(), False)
    white = tr.whiten_ff(fs, "estimate", "", True, 4.0, args.estimate_seconds, args.fmin, 0.0,
                         "auto", 0, 8)
    spiir = tr.spiir_bank_fc("", a1, b0, delay, level, counts, fs, args.threshold,
                             len(template.h), False, "auto", 0, 4096)
    store = blocks.message_debug()
    tb.connect(src, white, spiir, blocks.null_sink(gr.sizeof_gr_complex))
    tb.msg_connect((spiir, "detects"), (store, "store"))
    tb.run()
    latency = white.latency()
    if latency != whitener.latency:
        raise RuntimeError("whiten_ff's latency %d differs from the design's filter (%d)" %
                           (latency, whitener.latency))

    import pmt
    triggers = []
    for i in range(store.num_messages()):
        triggers += pmt.to_python(store.get_message(i))["triggers"]
    for t in triggers:
        t["merger"] = strain.gps_start + (t["sample"] - latency) / fs - template.end_to_merger
        print("trigger: SNR %.2f, merger GPS %.3f" % (t["snr"], t["merger"]))
    if triggers:
        b = max(triggers, key=lambda t: t["snr"])
        print("triggers: %d, best: SNR %.1f, merger GPS %.2f" % (len(triggers), b["snr"],
                                                                 b["merger"]))
    else:
        print("triggers: 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
