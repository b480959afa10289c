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

__all__ = ["SearchResult", "autocorrelation", "search", "psd"]


def psd(x, sample_rate, kind="estimate", seconds=4.0, asd=True):
    """The PSD for the search, on the core's grid of nfft = seconds x rate
    points (<transient/whiten.h>): kind "estimate" (Welch median of x),
    "design" (the Advanced LIGO fit) or a file name (two columns, frequency and
    ASD, or PSD when asd is False). Returns the nfft / 2 + 1 values."""
    nfft = int(round(seconds * sample_rate))
    nfft += nfft % 2
    if kind == "estimate":
        if len(x) < nfft:
            raise ValueError("the PSD estimate needs %g s (%d samples) of data, the strain "
                             "has %d" % (seconds, nfft, len(x)))
        return _core.psd_welch(np.asarray(x, dtype=np.float32), sample_rate, nfft)
    if kind == "design":
        return _core.psd_design(sample_rate, nfft)
    return _core.psd_from_file(kind, sample_rate, nfft, asd)


def taper_window(n, m):
    """Ones with Hann ramps of m samples at both ends (m <= n / 2)."""
    w = np.ones(n)
    m = min(int(m), n // 2)
    if m > 0:
        ramp = 0.5 * (1 - np.cos(np.pi * np.arange(m) / m))
        w[:m] = ramp
        w[n - m:] = ramp[::-1]
    return w


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


def search(strain, sample_rate, template, psd_values, f_low=20.0, target_match=0.97,
           max_latency=spiir_design.DEFAULT_MAX_LATENCY, threshold=8.0, window=None,
           half=None, multirate=False, backend="cpu", gps_start=0.0, energy_kept=0.99,
           taper=1.0):
    """Search strain (real array at sample_rate) for the Template `template`
    (unwhitened; spiir_templates.load_template / approximant / as_template) with
    the PSD psd_values (search.psd()): the strain is whitened by the core
    (transient.Whitener, its full-length filter) and the template by the same
    filter's taps. window: samples after a peak that end its cluster
    (default: the whitened template's length, so one signal gives one trigger);
    half: chi-square half-width in samples (default 0.1 s). Returns a
    SearchResult; triggers' times in s from gps_start. taper: seconds at each
    end of the strain (less its mean) brought in by a Hann ramp before
    whitening: the whitener starts from zeros, and the step from them to the
    strain would ring through its seconds-long filter into loud false
    triggers; signals in the ramps are attenuated."""
    fs = float(sample_rate)
    whitener = _core.Whitener(fs, np.asarray(psd_values, dtype=np.float64), f_low,
                              backend=backend)
    tw = spiir_templates.whiten_template(template, whitener.taps(), energy_kept=energy_kept)
    design = spiir_design.design_target(tw.h, fs, target_match, max_latency=max_latency)
    half = int(round(0.1 * fs)) if half is None else int(half)
    window = len(tw.h) if window is None else int(window)
    # the strain less its mean, tapered, then the whitener's latency in zeros:
    # row k + D is sample k
    d = int(whitener.latency)
    x32 = (taper_window(len(strain), int(round(taper * fs))) *
           (np.asarray(strain, dtype=np.float64) - np.mean(strain))).astype(np.float32)
    xw = whitener.process(np.concatenate([x32, np.zeros(d, dtype=np.float32)]))[d:]
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
    return SearchResult(triggers=out[order], design=design, template=tw, psd=psd_values,
                        latency=lat, autocorr=ac, snr=snr, whitened=xw,
                        whitener_half_len=int(whitener.half_len))
