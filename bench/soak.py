#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Soak: a long stream through one detector block, its resident memory
sampled while it runs (docs/reliability.md, bench/soak.sh).

    soak.py DETECTOR [--samples N] [--backend B] [--json FILE]

GNU Radio flow graph: 2^20 Gaussian samples (sigma 1, mean 0.5) repeated ->
head(N) -> the block transient-detect makes for DETECTOR with its default
options (edges: levels 0.1/0.5/0.9 around the noise's mid level, so edges
are dense; boxcar: the default search; spiir: a bank of 8 templates of 4
filters; kalman: the default model) -> null sinks, the "detects" messages
counted and dropped. Every second the process's VmRSS is read. The memory is
called flat when the RSS after the first fifth of the run grows by less than
--flat-mb (default 16 MiB): buffers sized once at start are in the first
fifth; a leak per sample or per detection would grow with the stream.
Prints one JSON object (and writes it with --json)."""

import argparse
import importlib.util
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _tool():
    path = os.path.join(HERE, os.pardir, "apps", "transient_detect.py")
    spec = importlib.util.spec_from_file_location("transient_detect_soak", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def spiir_arrays(ntemplates=8, nfilters=4):
    """A small stable bank as the block's arrays (a1, b0, delay, level, counts)."""
    import cmath
    a1, b0, delay = [], [], []
    for t in range(ntemplates):
        for k in range(nfilters):
            a1.append(cmath.rect(0.95 - 0.01 * k, 0.05 * (t + 1) * (k + 1)))
            b0.append(complex(0.1, 0.0))
            delay.append(4 * k)
    return a1, b0, delay, [0] * len(a1), [nfilters] * ntemplates


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("detector", choices=("edges", "boxcar", "spiir", "kalman"))
    p.add_argument("--samples", type=float, default=2e9)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--flat-mb", type=float, default=16.0)
    p.add_argument("--json")
    a = p.parse_args(argv)
    n = int(a.samples)

    from gnuradio import blocks, gr
    from gnuradio import transient
    tool = _tool()
    args = tool.build_parser().parse_args([a.detector, "soak", "--backend", a.backend] +
                                          (["--bank", "arrays"] if a.detector == "spiir"
                                           else []))
    if a.detector == "spiir":
        det = transient.spiir_bank_fc("", *spiir_arrays(), samp_rate=1e6, threshold=6.0,
                                      backend=a.backend)
    else:
        det = tool.make_detector(args, transient, False, 1, 1e6)

    tb = gr.top_block("soak")
    import numpy as np
    noise = np.random.default_rng(7).standard_normal(1 << 20).astype(np.float32) + 0.5
    src = blocks.vector_source_f(noise.tolist(), True)
    tb.connect(src, blocks.head(gr.sizeof_float, n), det)
    sig = det.output_signature()
    nout = sig.min_streams() if a.detector != "boxcar" else 2
    for i in range(0 if a.detector == "edges" else max(1, nout)):
        tb.connect((det, i), blocks.null_sink(sig.sizeof_stream_item(i)))
    import pmt

    class counter(gr.basic_block):
        """Counts the "detects" messages and drops them (nothing is kept)."""

        def __init__(self):
            gr.basic_block.__init__(self, "soak_counter", [], [])
            self.count = 0
            self.message_port_register_in(pmt.intern("in"))
            self.set_msg_handler(pmt.intern("in"), self.handle)

        def handle(self, msg):
            self.count += 1

    sink = counter()
    tb.msg_connect((det, "detects"), (sink, "in"))

    trace = []
    t0 = time.time()
    tb.start()
    waiter = threading.Thread(target=tb.wait, daemon=True)
    waiter.start()
    while waiter.is_alive():
        waiter.join(1.0)
        trace.append((round(time.time() - t0, 2), det.nitems_read(0), round(rss_mib(), 2)))
    secs = time.time() - t0
    trace.append((round(secs, 2), det.nitems_read(0), round(rss_mib(), 2)))
    after = [r for (_, s, r) in trace if s >= n // 5] or [trace[-1][2]]
    growth = max(after) - after[0]
    out = {
        "detector": a.detector, "backend": det.backend(), "samples": det.nitems_read(0),
        "seconds": round(secs, 2), "msamples_per_s": round(det.nitems_read(0) / secs / 1e6, 2),
        "rss_first_fifth_mib": after[0], "rss_max_mib": max(r for (_, _, r) in trace),
        "rss_growth_after_first_fifth_mib": round(growth, 2), "flat": growth < a.flat_mb,
        "messages": sink.count,
        "trace": trace
    }
    text = json.dumps(out)
    print(json.dumps({k: v for k, v in out.items() if k != "trace"}))
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    return 0 if out["flat"] and out["samples"] == n else 1


if __name__ == "__main__":
    sys.exit(main())
