#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
Detection quality of the Kalman-bank detector against the energy detector,
as its documentation measures it (share/doc/gr-transient/kalman.md): a burst
counts as detected when the statistic exceeds the threshold anywhere within
its samples; the threshold of each detector gives the false-alarm rate per
sample on noise-only samples.

    llr = detector_llr(x, "bursts.trkalm", Ns=30, alpha=1e-6)
    pd, thr = roc(llr, bursts, noise_mask, [1e-2, 1e-3, 1e-4])
    pd_e, _ = roc(energy_statistic(x, 30), bursts, noise_mask, [1e-2, 1e-3, 1e-4])
"""

import numpy as np

PFA = (1e-2, 1e-3, 1e-4)


def energy_statistic(x, Ns):
    """The energy detector: the mean of x^2 over the last Ns samples (causal;
    fewer at the start)."""
    if Ns < 1:
        raise ValueError("Ns must be >= 1, got %r" % Ns)
    x2 = np.asarray(x, dtype=float)**2
    c = np.concatenate([[0.0], np.cumsum(x2)])
    j = np.arange(len(x2))
    lo = np.maximum(j + 1 - Ns, 0)
    return (c[j + 1] - c[lo]) / (j + 1 - lo)


def roc(stat, bursts, noise_mask, pfa=PFA):
    """Probability of detection at each false-alarm rate per sample in pfa:
    the threshold t leaves floor(pfa * n) of the n samples of stat under
    noise_mask (booleans) above it; a burst (start, stop) is detected when
    stat > t anywhere in [start, stop). NaN where pfa * n < 1 (no threshold
    at that rate from so few noise samples) or without bursts. Returns
    (pd, thresholds) as arrays."""
    stat = np.asarray(stat, dtype=float)
    noise = np.sort(stat[np.asarray(noise_mask, dtype=bool)])
    peaks = np.array([np.max(stat[a:b]) for a, b in bursts])
    pd, thr = [], []
    for p in pfa:
        k = int(np.floor(p * len(noise)))
        if k < 1 or len(peaks) == 0:
            pd.append(np.nan)
            thr.append(np.nan)
            continue
        t = noise[len(noise) - k - 1]
        pd.append(float(np.mean(peaks > t)))
        thr.append(float(t))
    return np.array(pd), np.array(thr)


def noise_mask(n, bursts, guard, start=0):
    """Samples [start, n) outside every burst and the `guard` samples after
    each (the detector's memory of a burst: M)."""
    mask = np.zeros(n, dtype=bool)
    mask[start:] = True
    for a, b in bursts:
        lo, hi = min(max(a, 0), n), min(max(b + guard, 0), n)
        mask[lo:hi] = False
    return mask


def detector_llr(x, model_file, Ns, alpha):
    """The LLR of kalman_detector_ff (CPU backend) with the model file over x."""
    from gnuradio import blocks, gr
    from gnuradio import transient
    tb = gr.top_block()
    src = blocks.vector_source_f(np.asarray(x, dtype=np.float32), False)
    det = transient.kalman_detector_ff(Ns=Ns, alpha=alpha, model_file=model_file,
                                       backend="cpu")
    snk = blocks.vector_sink_f()
    tb.connect(src, det, snk)
    tb.run()
    return np.array(snk.data(), dtype=float)
