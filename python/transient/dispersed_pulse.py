#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
A simulated radio receiver looking at a source of dispersed pulses (a pulsar or
a repeating fast radio burst): complex baseband samples of unit-power white
noise with short bursts of noise power that the interstellar medium has
dispersed, as an SDR tuned to `center_freq` with sample rate `samp_rate` would
record them. Numpy only.

Dispersion is applied coherently, as the cold plasma does it: the burst's
spectrum is multiplied by the transfer function exp(-i Phi(f)) whose group
delay is the dispersion delay
    tau(f) = K DM (f^-2 - f_hi^-2),  K = 4.148808e3 MHz^2 pc^-1 cm^3 s,
f in MHz, f_hi = center_freq + samp_rate / 2 the top of the band: the top
arrives first, at the burst's nominal time, lower frequencies later. So
    Phi(f) = 2 pi 1e6 K DM (1/f_c - 1/(f_c + f) - f / f_hi^2),  f = offset in MHz.
An FFT channeliser (stream_to_vector, fft with shift, |X|^2, integrate) shows
each burst as the quadratic sweep across its channels that incoherent
dedispersion undoes.

    h = dispersed_burst(dm, center_freq, samp_rate, energy, width_samples, seed)
    src = dispersed_pulse_source(samp_rate, center_freq, dm, period, first, ...)
    src.truth()  -> sample indices at which bursts reach the top of the band

Energy: a burst carries `energy` times the noise power of one sample in
total (|h|^2 summed). A search that adds the power of every sample in which
the burst lies (after dedispersion: n samples in all, over every channel)
sees it at an S/N of about energy / sqrt(n): with an FFT of nfft channels and
integration by nint, one output sample of the channeliser holds
n = nfft * nint samples.
"""

import math

import numpy as np
from gnuradio import gr

DISPERSION_CONSTANT = 4.148808e3  # MHz^2 pc^-1 cm^3 s


def dispersion_delay(dm, f_mhz, f_ref_mhz):
    """Arrival delay in s of frequency f_mhz after f_ref_mhz (MHz) at DM dm."""
    return DISPERSION_CONSTANT * dm * (f_mhz**-2.0 - f_ref_mhz**-2.0)


def band_sweep(dm, center_freq, samp_rate):
    """Delay in s of the bottom of the band (center_freq - samp_rate/2, Hz)
    after its top (center_freq + samp_rate/2)."""
    fc = center_freq * 1e-6
    half = 0.5 * samp_rate * 1e-6
    return dispersion_delay(dm, fc - half, fc + half)


def _check(dm, center_freq, samp_rate):
    if not (math.isfinite(dm) and dm >= 0):
        raise ValueError("dm must be finite and >= 0, got %r" % (dm, ))
    if not (math.isfinite(samp_rate) and samp_rate > 0):
        raise ValueError("samp_rate must be > 0, got %r" % (samp_rate, ))
    if not (math.isfinite(center_freq) and center_freq > samp_rate / 2):
        raise ValueError("center_freq must be above samp_rate / 2 (the band must "
                         "lie at positive frequencies), got %r" % (center_freq, ))


def dispersed_burst(dm, center_freq, samp_rate, energy=1.0, width_samples=1, seed=0):
    """(h, lead): one burst of complex white noise lasting width_samples samples
    with total energy `energy`, dispersed at dm over the band of an SDR at
    center_freq / samp_rate (Hz). The top of the band arrives at h[lead]; h
    holds the whole sweep after it and a margin on both sides for the
    ringing of the band edges."""
    _check(dm, center_freq, samp_rate)
    width = int(width_samples)
    if width < 1:
        raise ValueError("width_samples must be >= 1, got %r" % (width_samples, ))
    if not (math.isfinite(energy) and energy >= 0):
        raise ValueError("energy must be finite and >= 0, got %r" % (energy, ))
    sweep = int(math.ceil(band_sweep(dm, center_freq, samp_rate) * samp_rate))
    # The transfer function is applied circularly: room for the sweep, the
    # burst and the edge ringing before (lead) and after it.
    lead = 64 + sweep // 16
    n = 1 << int(math.ceil(math.log2(lead + sweep + width + lead)))
    rng = np.random.default_rng(seed)
    burst = np.zeros(n, dtype=np.complex128)
    burst[lead:lead + width] = rng.normal(size=width) + 1j * rng.normal(size=width)
    norm = np.sum(np.abs(burst)**2)
    if norm > 0:
        burst *= math.sqrt(energy / norm)
    f = np.fft.fftfreq(n, 1.0 / samp_rate) * 1e-6  # offset from center_freq, MHz
    fc = center_freq * 1e-6
    f_hi = fc + 0.5 * samp_rate * 1e-6
    phi = 2e6 * math.pi * DISPERSION_CONSTANT * dm * (1.0 / fc - 1.0 /
                                                     (fc + f) - f / f_hi**2)
    h = np.fft.ifft(np.fft.fft(burst) * np.exp(-1j * phi))
    return h.astype(np.complex64), lead


class dispersed_pulse_source(gr.sync_block):
    """Dispersed Pulse Source: complex baseband of an SDR at center_freq with
    samp_rate samples per second, unit-power complex white noise plus a
    dispersed burst (dispersed_burst) reaching the top of the band at
    first, first + period, ... seconds. nsamples > 0 ends the stream after
    that many samples (0: endless). Deterministic for a seed."""

    def __init__(self, samp_rate=1.024e6, center_freq=400e6, dm=60.0, period=1.0,
                 first=0.5, energy=2000.0, width_samples=64, nsamples=0, seed=1):
        gr.sync_block.__init__(self, name="Dispersed Pulse Source", in_sig=None,
                               out_sig=[np.complex64])
        if not (math.isfinite(period) and period > 0):
            raise ValueError("period must be > 0 s, got %r" % (period, ))
        if not (math.isfinite(first) and first >= 0):
            raise ValueError("first must be >= 0 s, got %r" % (first, ))
        if int(nsamples) < 0:
            raise ValueError("nsamples must be >= 0 (0: endless), got %r" % (nsamples, ))
        self._burst, self._lead = dispersed_burst(dm, center_freq, samp_rate, energy,
                                                  width_samples, seed)
        self._rate = float(samp_rate)
        self._period = float(period)
        self._first = float(first)
        self._n = int(nsamples)
        self._rng = np.random.default_rng(seed + 1)
        self._pos = 0

    def arrival(self, i):
        """Sample index at which burst i reaches the top of the band."""
        return int(round((self._first + i * self._period) * self._rate))

    def truth(self):
        """Arrival samples of every burst that lies inside nsamples (needs
        nsamples > 0)."""
        if self._n == 0:
            raise ValueError("truth() needs a finite stream (nsamples > 0)")
        out = []
        i = 0
        while self.arrival(i) < self._n:
            out.append(self.arrival(i))
            i += 1
        return out

    def work(self, input_items, output_items):
        out = output_items[0]
        m = len(out)
        if self._n:
            m = min(m, self._n - self._pos)
            if m <= 0:
                return -1
        a, b = self._pos, self._pos + m
        scale = math.sqrt(0.5)
        # (re, im) pairs drawn in stream order: the noise of a sample does not
        # depend on how the scheduler cuts the stream into work calls
        out[:m] = self._rng.normal(0.0, scale, 2 * m).view(np.complex128).astype(np.complex64)
        # Bursts overlapping [a, b): burst i covers arrival(i) - lead + [0, len).
        first_i = max(0, int(math.floor(
            ((a - len(self._burst) + self._lead) / self._rate - self._first) /
            self._period)))
        i = first_i
        while True:
            s = self.arrival(i) - self._lead
            if s >= b:
                break
            lo, hi = max(a, s), min(b, s + len(self._burst))
            if lo < hi:
                out[lo - a:hi - a] += self._burst[lo - s:hi - s]
            i += 1
        self._pos = b
        return m
