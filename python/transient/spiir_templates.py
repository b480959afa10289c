#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Templates for the SPIIR bank design: arrays, files and approximants in,
complex analytic templates out, optionally whitened with a noise PSD.

The design (spiir_design.design) needs a complex analytic template
h = A exp(i phi) whose last sample is where the filter output peaks:

  * A real template (h+ alone) becomes analytic: h+ + i H[h+], H the Hilbert
    transform (FFT: negative frequencies removed, positive ones doubled, the DC
    and Nyquist bins kept once). Its real part is h+ itself; the imaginary part
    is h+ shifted by 90 degrees, which is what a search over the unknown phase
    needs. A complex template (h+ + i hx, or already analytic) is kept as it is.
  * Leading and trailing exact zeros are trimmed (a tapered waveform padded
    with zeros has no phase there); zeros inside the waveform are still
    refused by the design.
  * Files: .npy (a 1-D real or complex array; sample rate given by the
    caller), text with two columns (time, h) or three (time, h+, hx), HDF5 with
    datasets h+ and hx (names "hplus"/"hcross", "h+"/"hx" or "plus"/"cross",
    optionally a "time" dataset or a "sample_rate"/"delta_t" attribute).
    Waveforms at another rate are resampled to the data rate in the frequency
    domain (band-limited: the spectrum is cut or zero-padded).
  * Approximants by name through lalsimulation (lalsuite from PyPI), imported
    only when asked.

A Template remembers which of its samples is the merger (time 0 of a file's
time column, else the peak of |h|), so that a trigger time (the template's last
sample) can be converted to the merger time.
"""

import math
import os

import numpy as np

__all__ = ["Template", "analytic", "trim_zeros", "as_template", "resample", "load_template",
           "approximant", "whiten_template"]


class Template(object):
    """A complex analytic template h at sample_rate (Hz); merger_index is the
    sample of the merger (file time 0 or peak |h|); name says where it came from.
    end_to_merger: seconds from the merger to the template's last sample."""

    def __init__(self, h, sample_rate, merger_index, name):
        self.h = h
        self.sample_rate = float(sample_rate)
        self.merger_index = int(merger_index)
        self.name = name

    @property
    def end_to_merger(self):
        return (len(self.h) - 1 - self.merger_index) / self.sample_rate

    def __len__(self):
        return len(self.h)

    def __repr__(self):
        return "Template(%s: %d samples at %g Hz, merger %.4f s before its end)" % (
            self.name, len(self.h), self.sample_rate, self.end_to_merger)


def analytic(h):
    """The analytic signal of a real array (h + i Hilbert(h)); complex input is
    returned as complex128 unchanged."""
    h = np.asarray(h)
    if np.iscomplexobj(h):
        return h.astype(np.complex128)
    n = len(h)
    spec = np.fft.fft(h.astype(np.float64))
    gain = np.zeros(n)
    gain[0] = 1.0
    if n % 2 == 0:
        gain[n // 2] = 1.0
        gain[1:n // 2] = 2.0
    else:
        gain[1:(n + 1) // 2] = 2.0
    return np.fft.ifft(spec * gain)


def trim_zeros(h):
    """(h without its leading and trailing exact zeros, index of its first kept
    sample in h). Raises ValueError when h is all zeros."""
    nz = np.flatnonzero(np.asarray(h) != 0)
    if len(nz) == 0:
        raise ValueError("the template is all zeros")
    return h[nz[0]:nz[-1] + 1], int(nz[0])


def _check_array(h, what):
    h = np.asarray(h)
    if h.ndim != 1:
        raise ValueError("%s must be a one-dimensional array, got shape %s" % (what, h.shape))
    if h.dtype.kind not in "fciu":
        raise ValueError("%s must be numeric, got %s" % (what, h.dtype))
    if not np.all(np.isfinite(h)):
        raise ValueError("%s has non-finite samples" % what)
    return h


def as_template(h, sample_rate, merger_index=None, name="array"):
    """A Template from a real or complex array: zeros trimmed off both ends,
    made analytic when real (see the module's description)."""
    h = _check_array(h, "the template")
    h, first = trim_zeros(h)
    if merger_index is None:
        merger_index = int(np.argmax(np.abs(analytic(h))))
    else:
        merger_index = min(max(int(merger_index) - first, 0), len(h) - 1)
    return Template(analytic(h), sample_rate, merger_index, name)


def resample(h, rate_in, rate_out):
    """h (real or complex, uniformly sampled at rate_in) at rate_out, by cutting
    or zero-padding its spectrum (band-limited to the lower Nyquist frequency).
    The sample at index 0 stays at time 0."""
    rate_in, rate_out = float(rate_in), float(rate_out)
    if not (rate_in > 0 and rate_out > 0):
        raise ValueError("sample rates must be > 0")
    if rate_in == rate_out:
        return np.asarray(h)
    n = len(h)
    m = int(round(n * rate_out / rate_in))
    if m < 2:
        raise ValueError("the template would last %d samples at %g Hz" % (m, rate_out))
    spec = np.fft.fft(h)
    out = np.zeros(m, dtype=np.complex128)
    k = min(n, m) // 2
    out[:k] = spec[:k]
    out[m - k:] += spec[n - k:]
    y = np.fft.ifft(out) * (m / float(n))
    return y if np.iscomplexobj(h) else y.real


def _rate_from_time(t, path):
    dt = np.diff(t)
    if len(dt) == 0 or not np.all(dt > 0):
        raise ValueError("%s: the time column must increase" % path)
    step = float(np.median(dt))
    if np.max(np.abs(dt - step)) > 1e-3 * step:
        raise ValueError("%s: the time column is not uniformly sampled" % path)
    return 1.0 / step


def _merger_from_time(t):
    """Index of time 0 of a time column (the merger in the usual convention),
    None when 0 lies outside it."""
    if not (t[0] <= 0.0 <= t[-1]):
        return None
    return int(np.argmin(np.abs(t)))


def _read_text(path):
    try:
        d = np.loadtxt(path, ndmin=2)
    except ValueError as e:
        raise ValueError("%s: not a numeric text table: %s" % (path, e))
    if d.shape[1] not in (2, 3) or d.shape[0] < 2:
        raise ValueError("%s: expected two columns (time, h) or three (time, h+, hx), "
                         "got %d rows x %d columns" % (path, d.shape[0], d.shape[1]))
    t = d[:, 0]
    h = d[:, 1] if d.shape[1] == 2 else d[:, 1] + 1j * d[:, 2]
    return h, _rate_from_time(t, path), _merger_from_time(t)


def _dataset(f, names):
    for n in names:
        if n in f:
            return f[n]
    return None


def _read_hdf5(path):
    try:
        import h5py
    except ImportError:
        raise ValueError("%s: reading HDF5 needs h5py (Debian: python3-h5py; pip: h5py)" %
                         path)
    with h5py.File(path, "r") as f:
        hp = _dataset(f, ("hplus", "h+", "plus", "hp"))
        hc = _dataset(f, ("hcross", "hx", "cross", "hc"))
        if hp is None:
            raise ValueError("%s: no h+ dataset (hplus, h+, plus or hp)" % path)
        if hp.ndim != 1 or hp.shape[0] > 1 << 26:
            raise ValueError("%s: h+ must be one-dimensional and at most 2^26 samples" % path)
        h = np.asarray(hp[()], dtype=np.float64)
        if hc is not None:
            if hc.shape != hp.shape:
                raise ValueError("%s: h+ and hx differ in length" % path)
            h = h + 1j * np.asarray(hc[()], dtype=np.float64)
        t = _dataset(f, ("time", "t", "times"))
        rate, merger = None, None
        if t is not None:
            t = np.asarray(t[()], dtype=np.float64)
            if t.shape != (len(h), ):
                raise ValueError("%s: the time dataset differs in length from h+" % path)
            rate, merger = _rate_from_time(t, path), _merger_from_time(t)
        else:
            for src in (hp.attrs, f.attrs):
                if "sample_rate" in src:
                    rate = float(src["sample_rate"])
                elif "delta_t" in src:
                    rate = 1.0 / float(src["delta_t"])
                if rate is not None:
                    break
    return h, rate, merger


def load_template(path, sample_rate, file_rate=None):
    """A Template from a file (.npy, text, .h5/.hdf5), at sample_rate (Hz).
    file_rate: the file's rate when the file does not say (.npy; default: the
    data rate). Raises ValueError naming the file for anything unusable."""
    sample_rate = float(sample_rate)
    ext = os.path.splitext(path)[1].lower()
    merger = None
    if ext == ".npy":
        try:
            h = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as e:
            raise ValueError("%s: not a numpy array file: %s" % (path, e))
        rate = file_rate
    elif ext in (".h5", ".hdf5", ".hdf"):
        h, rate, merger = _read_hdf5(path)
        rate = rate or file_rate
    else:
        h, rate, merger = _read_text(path)
    if rate is None:
        rate = sample_rate
    try:
        h = _check_array(h, "the template")
    except ValueError as e:
        raise ValueError("%s: %s" % (path, e))
    if rate != sample_rate:
        h = resample(h, rate, sample_rate)
        if merger is not None:
            merger = int(round(merger * sample_rate / rate))
    try:
        return as_template(h, sample_rate, merger, os.path.basename(path))
    except ValueError as e:
        raise ValueError("%s: %s" % (path, e))


def approximant(name, m1, m2, sample_rate, f_low=20.0, distance_mpc=1.0, **params):
    """h+ + i hx of a lalsimulation approximant (e.g. "IMRPhenomD", "TaylorT4",
    "SEOBNRv4") for masses m1, m2 (solar masses), from f_low (Hz), at sample_rate,
    face on; params: further SimInspiralChooseTDWaveform arguments (spin1z,
    spin2z...). Needs lalsuite (pip install lalsuite)."""
    try:
        import lal
        import lalsimulation as ls
    except ImportError:
        raise ValueError("the approximant %s needs lalsimulation: pip install lalsuite" %
                         name)
    try:
        apx = ls.GetApproximantFromString(str(name))
    except RuntimeError:
        raise ValueError("lalsimulation knows no approximant %r" % (name, ))
    s = {k: float(params.get(k, 0.0)) for k in ("spin1x", "spin1y", "spin1z", "spin2x",
                                                "spin2y", "spin2z")}
    hp, hc = ls.SimInspiralChooseTDWaveform(
        m1 * lal.MSUN_SI, m2 * lal.MSUN_SI, s["spin1x"], s["spin1y"], s["spin1z"], s["spin2x"],
        s["spin2y"], s["spin2z"], distance_mpc * 1e6 * lal.PC_SI, 0.0, 0.0, 0.0, 0.0, 0.0,
        1.0 / sample_rate, f_low, f_low, lal.CreateDict(), apx)
    h = hp.data.data + 1j * hc.data.data
    # epoch: time of the first sample relative to the merger (peak)
    merger = int(round(-float(hp.epoch) * sample_rate))
    return as_template(h, sample_rate, merger, "%s %g+%g" % (name, m1, m2))


def whiten_template(template, taps, energy_kept=0.99):
    """The template whitened by the zero-phase whitening filter `taps` (odd
    length, centre tap in the middle: Whitener.taps() of the filter that
    whitens the data, so that template and data see the same filter): the real
    part (the signal a detector sees) convolved with the taps, made analytic,
    cut to the shortest stretch holding energy_kept of its energy (a PSD with
    narrow lines makes a long whitening filter whose weak tails at the lines
    cost filters and add nothing) and normalised to sum |h|^2 = 2 like
    newtonian_chirp(). Returns a Template."""
    if not 0 < energy_kept <= 1:
        raise ValueError("energy_kept must be in (0, 1], got %r" % (energy_kept, ))
    taps = np.asarray(taps, dtype=np.float64)
    if taps.ndim != 1 or len(taps) % 2 != 1 or not np.all(np.isfinite(taps)):
        raise ValueError("the whitening taps must be a finite one-dimensional array of odd "
                         "length")
    half = len(taps) // 2
    hw = np.convolve(template.h.real, taps)  # index i: template sample i - half
    ha = analytic(hw)
    e = np.cumsum(np.abs(ha)**2)
    if e[-1] <= 0:
        raise ValueError("the whitened template is all zeros (no power in the band)")
    e /= e[-1]
    cut = (1.0 - energy_kept) / 2.0
    lo = int(np.searchsorted(e, cut))
    hi = int(np.searchsorted(e, 1.0 - cut))
    hi = min(max(hi, lo + 15), len(ha) - 1)
    lo = max(min(lo, hi - 15), 0)
    ht = ha[lo:hi + 1]
    ht = ht * math.sqrt(2.0 / np.sum(np.abs(ht)**2))
    merger = template.merger_index + half - lo
    return Template(ht, template.sample_rate, min(max(merger, 0), len(ht) - 1),
                    template.name + " (whitened)")
