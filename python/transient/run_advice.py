#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Advice of transient-detect where a result is likely not what the user
wanted (share/doc/gr-transient/reliability.md): settings checked against ceilings before the
run, and edges levels checked against the range of the data.

The edges levels stay fixed at 0.1/0.5/0.9 by default (results do not change
with the data); when the data's range is far from 0..1 the tool says so and
suggests --auto-levels instead of guessing."""

import numpy as np

__all__ = ["PREVIEW_SAMPLES", "DEFAULT_LEVELS", "edges_limits", "data_range",
           "edges_level_advice"]

# Samples read before the run to see the data's range.
PREVIEW_SAMPLES = 1 << 20
DEFAULT_LEVELS = (0.1, 0.5, 0.9)


def edges_limits(auto, level_samples, hist_bins, level_interval, max_samples, max_bins):
    """Messages for edges auto-level settings beyond their ceilings: the
    samples of one estimate (one buffer), the histogram bins, and a histogram
    rebuilt more often than it has bins (its cost per sample above one bin)."""
    out = []
    if not auto:
        return out
    if level_samples > max_samples:
        out.append("--level-samples %d: at most %d" % (level_samples, max_samples))
    if hist_bins > max_bins:
        out.append("--hist-bins %d: at most %d" % (hist_bins, max_bins))
    if level_interval and hist_bins > level_interval:
        out.append("--hist-bins %d is more than --level-interval %d: every re-estimate "
                   "would cost more than the samples between them" % (hist_bins, level_interval))
    return out


def data_range(rec, start, count, complex_to=None):
    """(min, max, samples seen) of the finite values of the first
    PREVIEW_SAMPLES of the stream (after complex_to), None if there are none."""
    x = rec.read(start, min(count, PREVIEW_SAMPLES))
    if np.iscomplexobj(x):
        conv = {"mag": np.abs, "power": lambda z: np.abs(z)**2, "real": np.real,
                "imag": np.imag}.get(complex_to)
        if conv is None:  # refused later
            return None
        x = conv(x)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None
    return float(x.min()), float(x.max()), int(x.size)


def edges_level_advice(levels, auto, rng, transitions):
    """Warnings for fixed edges levels (low, mid, high) against the data's
    range rng = (min, max, n) of the preview: levels outside the range
    (nothing can cross them), or the default levels on data far from 0..1."""
    if auto or rng is None:
        return []
    lo, hi, n = rng
    low, mid, high = levels
    out = []
    if high > hi or low < lo:
        out.append("levels low %g / high %g lie outside the range %g .. %g of the first %d "
                   "samples: %s; give levels inside it or --auto-levels" %
                   (low, high, lo, hi, n, "0 transitions found" if transitions == 0 else
                    "transitions may be missed"))
    elif tuple(levels) == DEFAULT_LEVELS and (hi - lo > 2.0 or hi > 2.0 or lo < -1.0):
        out.append("default levels 0.1/0.5/0.9 on data from %g to %g (first %d samples): "
                   "the crossings are likely not where you want them; give --low/--mid/"
                   "--high or --auto-levels" % (lo, hi, n))
    return out
