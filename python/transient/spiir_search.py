#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A SPIIR search of gravitational-wave strain, end to end:

    PSD (estimated from the strain, a file, or a design curve)
    -> whitened strain
    -> the template whitened with the same PSD, a bank designed from it
       (spiir_design.design_target: the largest epsilon reaching target_match)
    -> SNR through the C core (spiir_filter), triggers (spiir_triggers)
    -> the autocorrelation chi-square of each trigger (spiir_autochisq)

A trigger's sample is the row where the filter output peaks: the last sample
of the whitened template lies there. The merger (time 0 of the waveform file,
or the peak of |h|) lies end_to_merger seconds earlier; each trigger reports
both times (GPS when the strain file gives its start).
"""

import math

import numpy as np

from . import spiir_design, spiir_templates
from . import transient_python as _core

__all__ = ["SearchResult", "autocorrelation", "search", "welch_psd", "whiten"]


def welch_psd(x, sample_rate, seg_seconds=4.0):
    """One-sided PSD of x (Welch: Hann segments of seg_seconds, half overlapping,
    median over segments, divided by the median's bias ln 2 for chi-square with
    2 degrees of freedom). Returns (freq, psd)."""
    n = int(round(seg_seconds * sample_rate))
    if n < 16 or n > len(x):
        raise ValueError("the PSD needs segments of 16 samples to the whole stream (%d); "
                         "got %d" % (len(x), n))
    step = n // 2
    w = np.hanning(n)
    segs = np.array([x[i:i + n] for i in range(0, len(x) - n + 1, step)])
    segs = segs - segs.mean(axis=1, keepdims=True)
    p = np.abs(np.fft.rfft(segs * w, axis=1))**2 * (2.0 / (sample_rate * np.sum(w**2)))
    return np.fft.rfftfreq(n, 1.0 / sample_rate), np.median(p, axis=0) / math.log(2.0)


def whiten(x, sample_rate, freq, psd, f_low, f_high=None, taper=0.5):
    """x whitened with the one-sided PSD: X(f) sqrt(2 / (rate S(f))) between f_low
    and f_high (default 0.45 rate), so that noise of that PSD becomes white with
    unit variance per sample in the band. The first and last `taper` seconds are
    tapered (Hann) against the wrap-around of the FFT. float64 array."""
    n = len(x)
    f_high = 0.45 * sample_rate if f_high is None else f_high
    S = spiir_templates.interp_psd(freq, psd, n, sample_rate)
    f = np.fft.rfftfreq(n, 1.0 / sample_rate)
    W = np.zeros_like(S)
    ok = (f >= f_low) & (f <= f_high) & (S > 0)
    W[ok] = np.sqrt(2.0 / (sample_rate * S[ok]))
    m = min(int(taper * sample_rate), n // 2)
    win = np.ones(n)
    if m > 0:
        ramp = 0.5 * (1 - np.cos(np.pi * np.arange(m) / m))
        win[:m] = ramp
        win[n - m:] = ramp[::-1]
    return np.fft.irfft(np.fft.rfft((x - np.mean(x)) * win) * W, n)


def _bank_arrays(filters):
    f = np.asarray(filters)
    return (f["a1"].astype(np.complex128), f["b0"].astype(np.complex128),
            f["delay"].astype(np.int64), f["level"].astype(np.int64),
            np.array([len(f)], dtype=np.int64))


def autocorrelation(filters, h, sample_rate, half, multirate=False):
    """The bank's complex response to its own template h (analytic, noise free),
    lags -half..half around its peak, divided by the peak value (A[half] = 1):
    what the SNR of a true signal looks like around a trigger. Computed with
    the same core filter as the data (multirate included, latency removed).
    Returns (A, peak offset from the template's last sample, latency)."""
    a1, b0, d, lv, cnt = _bank_arrays(filters)
    lat = int(_core.spiir_latency(a1, b0, d, lv, cnt, 1.0 / sample_rate)) if multirate else 0
    n = len(h)
    x = np.zeros(n + 2 * half + lat + 1, dtype=np.complex64)
    x[:n] = h
    z = _core.spiir_filter(x, a1, b0, d, lv, cnt, 1.0 / sample_rate, multirate)[:, 0]
    z = z[lat:].astype(np.complex128)  # row k: signal row k
    lo = max(n - 1 - half, 0)
    p = lo + int(np.argmax(np.abs(z[lo:n + half])))
    if p - half < 0:
        raise ValueError("the template (%d samples) is shorter than the chi-square "
                         "half-width (%d)" % (n, half))
    return z[p - half:p + half + 1] / z[p], p - (n - 1), lat


class SearchResult(object):
    """triggers: structured array (sample, peak, template, snr, re, im, chisq,
    time, merger_time); design (DesignResult, .epsilon), template (the whitened
    Template), psd (freq, psd), latency (samples), autocorr (complex lags)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


TRIGGER_DTYPE = np.dtype([("sample", "<i8"), ("peak", "<f8"), ("template", "<i4"),
                          ("snr", "<f4"), ("phase", "<f8"), ("chisq", "<f8"),
                          ("time", "<f8"), ("merger_time", "<f8")])


def search(strain, sample_rate, template, psd, f_low=20.0, target_match=0.97,
           max_latency=spiir_design.DEFAULT_MAX_LATENCY, threshold=8.0, window=None,
           half=None, multirate=False, backend="cpu", gps_start=0.0, energy_kept=0.99):
    """Search strain (real array at sample_rate) for the Template `template`
    (unwhitened; spiir_templates.load_template / approximant / as_template) with
    the PSD (freq, psd). window: samples after a peak that end its cluster
    (default: the whitened template's length, so one signal gives one trigger);
    half: chi-square half-width in samples (default 0.1 s). Returns a
    SearchResult; triggers' times in s from gps_start."""
    fs = float(sample_rate)
    freq, S = psd
    tw = spiir_templates.whiten_template(template, freq, S, f_low, energy_kept=energy_kept)
    design = spiir_design.design_target(tw.h, fs, target_match, max_latency=max_latency)
    half = int(round(0.1 * fs)) if half is None else int(half)
    window = len(tw.h) if window is None else int(window)
    xw = whiten(np.asarray(strain, dtype=np.float64), fs, freq, S, f_low)
    a1, b0, d, lv, cnt = _bank_arrays(design.filters)
    ac, shift, lat = autocorrelation(design.filters, tw.h, fs, half, multirate)
    x = np.concatenate([xw, np.zeros(lat)]).astype(np.float32)
    snr = _core.spiir_filter(x, a1, b0, d, lv, cnt, 1.0 / fs, multirate, backend)
    snr = np.ascontiguousarray(snr[lat:])  # row k: strain sample k
    trig = _core.spiir_triggers(snr, float(threshold), window)
    out = np.zeros(len(trig), dtype=TRIGGER_DTYPE)
    for k in ("sample", "peak", "template", "snr"):
        out[k] = trig[k]
    out["phase"] = np.arctan2(trig["im"], trig["re"])
    out["chisq"] = _core.spiir_autochisq(snr, trig["sample"].astype(np.int64),
                                         trig["template"].astype(np.int64), ac[None, :])
    end_to_merger = tw.end_to_merger
    out["time"] = gps_start + trig["peak"] / fs
    # the peak of the template's own response lies `shift` samples after its end
    out["merger_time"] = out["time"] - (end_to_merger + shift / fs)
    order = np.argsort(out["sample"], kind="stable")
    return SearchResult(triggers=out[order], design=design, template=tw, psd=(freq, S),
                        latency=lat, autocorr=ac, snr=snr, whitened=xw)
