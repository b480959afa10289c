#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Write the seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/) and
the inputs of problems found and fixed (tests/fuzz/regressions/<target>/):
a few inputs per target in its parameter layout (fuzz_input.h: little-endian
32-bit words for the settings, one word seeding the chunk sizes, then
float32 samples), and small valid model and bank files for the loaders.
Deterministic; run it again after changing a target's layout."""

import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def u32(*v):
    return struct.pack("<%dI" % len(v), *v)


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def pulses(n=400, lo=0.0, hi=1.0, period=37, noise=0.01):
    """A two-level pulse train with a little deterministic ripple."""
    return [(hi if (k // period) % 2 else lo) + noise * math.sin(0.7 * k) for k in range(n)]


def noise(n=400, scale=1.0):
    return [scale * math.sin(1.3 * k * k % 97) for k in range(n)]


def write(target, name, data, kind="corpus"):
    folder = os.path.join(HERE, kind, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def main():
    # edges: mode, low, mid, high (float bits), tolerance, mid %, bins, level
    # samples, interval, chunk seed, samples
    for name, mode, lv, x in (("fixed", 0, (0.1, 0.5, 0.9), pulses()),
                              ("auto", 1, (0, 0, 0), pulses(lo=0.2, hi=3.3)),
                              ("nan", 0, (0.1, 0.5, 0.9), pulses()[:50] + [math.nan] * 3 +
                               [math.inf] + pulses()[:50])):
        write("edges", name, u32(mode) + f32(*lv) + u32(10, 50, 64, 100, 150, 7) + f32(*x))
    # boxcar: variant, algorithm, max width, nwidths, widths[n], depth, layers
    # switch, nchan, norm mode, window, history, reject, fixed sigma, baseline,
    # baseline window, threads, chunk seed, samples
    x = noise(600)
    for k in (200, 201, 202, 400):
        x[k] += 6.0
    write("boxcar", "boxdit", u32(0, 0, 32, 2, 4, 2, 0, 1, 1, 0, 32, 2, 6, 2, 0, 0, 1, 3) +
          f32(*x))
    write("boxcar", "igrid_2ch", u32(0, 1, 16, 0, 2, 1, 3, 2, 1, 16, 1, 0, 2, 1, 9, 1, 5) +
          f32(*x))
    # candidates: nchan, threshold, link time, link chan, width switch (and
    # ratio), start, max-span switch, chunk seed, S/N values
    snr = [3.0 + 5.0 * ((k * 7) % 11 == 0) for k in range(480)]
    write("candidates", "wide", u32(8) + f32(6.0) + u32(2, 8, 0, 0, 1, 4) + f32(*snr))
    write("candidates", "ratio_span", u32(4) + f32(6.0) + u32(1, 1, 1, 16, 5, 0, 20, 9) +
          f32(*snr))
    # spiir: templates, per template count and filters (a1, b0 as floats,
    # delay + 2, level + 1), variant, complex, multirate, dt, chunk seed, samples
    filt = f32(0.9, 0.1, 0.5, 0.0) + u32(5, 1)
    write("spiir", "two", u32(2, 1) + filt + u32(2) + filt + f32(0.8, -0.2, 0.3, 0.1) +
          u32(12, 2) + u32(0, 0, 0, 1, 2) + f32(*noise(300)))
    write("spiir", "multirate", u32(1, 1) + f32(0.5, 0.2, 1.0, 0.0) + u32(9, 2) +
          u32(1, 1, 1, 1, 3) + f32(*noise(400)))
    # spiir_triggers: small-count switch, ntemplates, threshold, window,
    # threads, chunk seed, (re, im) per template and sample
    z = []
    for k in range(200):
        for t in range(2):
            z += [9.0 if (k + 13 * t) % 50 == 0 else 0.5, 0.1]
    write("spiir_triggers", "two", u32(1, 2) + f32(8.0) + u32(10, 1, 4) + f32(*z))
    # kalman: M, noise order, target order, AR pairs, noise var, meas var,
    # target var, envelope, env param, variant, Ns, alpha, threshold, max
    # events, chunk seed, samples
    x = noise(500)
    for k in range(200, 230):
        x[k] *= 6.0
    write("kalman", "burst", u32(12, 1, 1) + f32(0.5, 0.9, 0.0, 0.0, 1.0) + u32(0) +
          f32(1.0) + u32(0, 10, 0, 6, 1) + f32(0.0) + u32(4, 11) + f32(*x))
    # loaders: small valid files (Q = 1, M = 3; one template of two filters)
    n = 2
    model = b"TRKALM01" + u32(1, 3) + struct.pack("<%dd" % (n * n + 3 * n + 3),
                                                    *([0.5, 0, 0, 0.5] + [0.1] * (3 * n) +
                                                      [1.0] * 3))
    write("kalman_model_load", "small", model)
    bank = b"TRSPIIR1" + u32(1, 0) + struct.pack("<d", 1e-3) + u32(2)
    for a, d in ((0.9, 3), (0.5, 0)):
        bank += struct.pack("<4d", a, 0.1, 1.0, 0.0) + u32(d, 0)
    write("spiir_bank_load", "small", bank)

    # Regressions: a 16-byte model header declaring the largest model (its
    # buffers were sized before the file), and 2^26 trigger templates (no
    # ceiling: gigabytes at create). libFuzzer's malloc limit reports both.
    write("kalman_model_load", "header_only_largest_model",
          b"TRKALM01" + u32(32, 1 << 24), "regressions")
    write("spiir_triggers", "ntemplates_2_26", u32(0, 1 << 26) + f32(8.0) + u32(10, 1, 4),
          "regressions")


if __name__ == "__main__":
    main()
