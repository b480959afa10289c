#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
Signals of the gr-transient demo (apps/transient_demo.py and the flow graphs
share/gr-transient/examples/demo_*.grc): synthetic streams with known injections, the real
recordings, and a raw-file source block.

Every generator is deterministic (seeded) and cached, so that a flow graph
(through a GRC variable) and the code that checks its detections (demo_score)
get the same samples and truth in one process without computing them twice.

    pulse_train(n, seed)    edges: a 3.3 V logic-like pulse train with ringing,
                            runts and oscillating edges; truth: mid crossings
    frb_field(n, seed)      boxcar: FRB-like pulses in 4 channels of white noise
    spiir_chirp(seed)       SPIIR: one chirp of the demo bank in white noise
    kalman_bursts(n, seed)  Kalman: Gaussian bursts in AR(2) coloured noise
    i2c_recording(path)     share/gr-transient/examples/data/i2c_sda_analog_8MHz.sr (edges)
    pulsar_recording(path)  share/gr-transient/examples/data/GBT_J1807-0847.dat (boxcar)

The `*_samples` functions return only the samples (what a vector source
takes); the others return (samples, truth).
"""

import functools
import math
import os
import sys

import numpy as np
from gnuradio import gr

RECORDING_NAME = "i2c_sda_analog_8MHz.sr"
PULSAR_NAME = "GBT_J1807-0847.dat"
PULSAR_CATALOGUE_PERIOD = 0.16373  # s, PSR J1807-0847 (B1804-08), about

# ---- data files ---------------------------------------------------------------


def data_dirs():
    """Where the demo looks for its recordings: $TR_DEMO_DATA, the source
    tree's example data, then the installed share/gr-transient/examples/data."""
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = []
    if os.environ.get("TR_DEMO_DATA"):
        dirs.append(os.environ["TR_DEMO_DATA"])
    dirs += [
        os.path.join(here, os.pardir, os.pardir, "examples", "data"),
        os.path.join(sys.prefix, "share", "gr-transient", "examples", "data"),
        "/usr/local/share/gr-transient/examples/data",
        "/usr/share/gr-transient/examples/data",
    ]
    return [os.path.normpath(d) for d in dirs]


def find_data(name):
    """Path of the demo data file `name`, or None."""
    for d in data_dirs():
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


def resolve(path, name):
    """A flow graph's recording parameter: "default" = the demo's copy of
    `name` (FileNotFoundError when there is none), "" = no recording (None),
    anything else a path."""
    if path == "":
        return None
    if path == "default":
        p = find_data(name)
        if p is None:
            raise FileNotFoundError("%s not found in %s" % (name, ", ".join(data_dirs())))
        return p
    return path


# ---- edges: synthetic pulse train ---------------------------------------------

SYNTH_RATE = 10e6  # samples per second (units of the printed tables)
SYNTH_LOW = 0.1  # V, low state
SYNTH_HIGH = 3.3  # V, high state
SYNTH_NOISE = 0.03  # V rms


def _raised_step(u):
    """Smooth step over u in [-1, 1]: 0 -> 1, exactly 1/2 at u = 0."""
    return 0.5 * (1.0 + np.sin(0.5 * np.pi * np.clip(u, -1.0, 1.0)))


def make_pulse_train(n, seed=1):
    """A realistic two-level pulse train with known truth.

    Returns (x, truth) where x is float32 of length n and truth is a dict:
      time      mid-crossing times of the transitions (fractional sample index)
      polarity  +1 rising, -1 falling
      runts, runts_mid   runts placed, how many of them cross the mid level
      oscillating        transitions that oscillate around mid before settling
    The waveform is built in units of the amplitude (0 = low, 1 = high) and
    scaled to SYNTH_LOW..SYNTH_HIGH at the end. Every edge shape passes the mid
    level (1/2) exactly at its truth time; ringing starts after the edge has
    settled, runts stay below 0.78 of the way to the other state and
    oscillations stay within 0.25..0.75, so neither reaches a state boundary at
    10 % / 90 % even with noise.
    """
    rng = np.random.default_rng(seed)
    f = np.zeros(n)  # fraction of the amplitude, noiseless
    t_axis = np.arange(n, dtype=np.float64)
    times, pols = [], []
    n_runts = n_runts_mid = n_osc = 0

    def span(a, b):
        """Sample indices i with a <= i <= b, clipped to the record."""
        lo, hi = max(int(math.ceil(a)), 0), min(int(math.floor(b)), n - 1)
        return slice(lo, hi + 1) if hi >= lo else slice(0, 0)

    state = 0  # current state (0 low, 1 high); the record starts low
    t = 200.0 + rng.uniform(0, 1)  # first edge
    prev_end = 0.0  # where the previous edge's after-effects end
    prev_stop = 0  # first sample after the previous edge's window
    while True:
        h = rng.uniform(2.0, 8.0)  # half-width of the edge: 10-90 % = 1.18 h
        oscillate = rng.uniform() < 0.12
        if oscillate:
            period = rng.uniform(8.0, 16.0)
            cycles = int(rng.integers(2, 5))
            h2 = rng.uniform(3.0, 8.0)
            end = t + cycles * period + 2 * h2
        else:
            ring_amp = rng.uniform(0.03, 0.08)
            ring_period = rng.uniform(6.0, 14.0)
            ring_tau = rng.uniform(4.0, 12.0)
            end = t + h + 8 * ring_tau
        if end + 10 >= n:
            break

        sl = span(t - h, end)
        f[prev_stop:sl.start] = state  # settled in the current state
        prev_stop = sl.stop

        # Runt in the gap between the previous edge and this one.
        gap_lo, gap_hi = prev_end + 10, t - h - 10
        w = rng.uniform(6.0, 30.0)
        if gap_hi - gap_lo > w and rng.uniform() < 0.3:
            c0 = rng.uniform(gap_lo, gap_hi - w)
            height = rng.uniform(0.3, 0.78)
            rs = span(c0, c0 + w)
            bump = height * 0.5 * (1 - np.cos(2 * np.pi * (t_axis[rs] - c0) / w))
            f[rs] += -bump if state else bump
            n_runts += 1
            n_runts_mid += height > 0.5

        # The edge: shape g rises 0 -> 1, mirrored for falling edges.
        new = 1 - state
        u = t_axis[sl] - t
        if oscillate:
            te = cycles * period
            wobble = 0.5 + 0.25 * np.exp(-u / (2 * te)) * np.sin(2 * np.pi * u / period)
            settle = 0.5 + 0.5 * np.sin(0.5 * np.pi * np.clip((u - te) / (2 * h2), 0, 1))
            g = np.where(u <= 0, _raised_step(u / h), np.where(u <= te, wobble, settle))
            n_osc += 1
        else:
            g = _raised_step(u / h)
            r = u - h
            g = g + np.where(r > 0, ring_amp * np.exp(-r / ring_tau) *
                             np.sin(2 * np.pi * r / ring_period), 0.0)
        f[sl] = g if new else 1 - g
        times.append(t)
        pols.append(1 if new else -1)
        state = new
        prev_end = end

        # Width of the next pulse: log-uniform 4 us .. 150 us, at least long
        # enough for this edge's after-effects and the next edge.
        width = math.exp(rng.uniform(math.log(40.0), math.log(1500.0)))
        t = max(t + width, end + 8 + 10) + rng.uniform(0, 1)

    f[prev_stop:] = state
    x = SYNTH_LOW + (SYNTH_HIGH - SYNTH_LOW) * f + rng.normal(0.0, SYNTH_NOISE, n)
    truth = {
        "time": np.asarray(times),
        "polarity": np.asarray(pols, dtype=np.int32),
        "runts": n_runts,
        "runts_mid": int(n_runts_mid),
        "oscillating": n_osc,
    }
    return x.astype(np.float32), truth


@functools.lru_cache(maxsize=4)
def pulse_train(n, seed=1):
    """make_pulse_train(n, seed), cached (do not modify the arrays)."""
    return make_pulse_train(int(n), int(seed))


def pulse_train_samples(n, seed=1):
    return pulse_train(n, seed)[0]


# ---- edges: the I2C recording ---------------------------------------------------

I2C_CHANNEL = "SDA analog"  # scope channel
I2C_LOGIC = "SDA"  # logic analyzer probe on the same wire (the reference)


@functools.lru_cache(maxsize=2)
def i2c_recording(path="default"):
    """(analog SDA samples as float32, the SigrokSession) of the sigrok
    recording, or (empty array, None) for path ""."""
    path = resolve(path, RECORDING_NAME)
    if path is None:
        return np.zeros(0, np.float32), None
    from gnuradio.transient import sigrok
    rec = sigrok.read_sr(path)
    return np.asarray(rec.analog_channel(I2C_CHANNEL), dtype=np.float32), rec


def i2c_samples(path="default"):
    return i2c_recording(path)[0]


def i2c_level_samples(path="default"):
    """The bus idles low for the first 0.1 s while the EEPROM powers up: the
    IEEE 181 level estimate must see the traffic, so it takes the whole record."""
    return max(2, len(i2c_samples(path)))


# ---- boxcar: FRB-like pulses ------------------------------------------------------

FRB_CHANNELS = 4
FRB_WINDOW = 8192  # statistics window of the search (the pulses start after it)
FRB_WIDTHS = [32, 16, 16, 16, 8]  # BoxDIT list (AstroAccelerate's), up to 256 samples
FRB_MAX_WIDTH = 256


def make_frb_field(n, nchan, seed):
    """Unit white noise in nchan channels (de-dispersion trials) with FRB-like
    pulses and their truth.

    A pulse is a Gaussian of FWHM w (2 to 128 samples, log-uniform); every
    second one is convolved with a one-sided exponential (scattering, time
    constant w/2 to 2w). Its amplitude gives a matched-filter S/N between 9 and
    25 against the unit noise in its own trial (the best boxcar recovers about
    90 % of it); like a dispersed burst seen at a slightly wrong DM, the
    neighbouring trials get it too, smeared to 1.5 times the width at 60 % of
    the amplitude. Pulses start after the first statistics window, one at a
    time, 1000 to 6000 samples apart.
    Returns (x of shape (n, nchan), float32; truth: list of dicts with channel,
    centre (centroid, samples), fwhm, tau, extent (the samples that hold 90 %
    of the energy) and snr).
    """
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, (n, nchan)).astype(np.float32)
    truth = []

    def profile(fwhm, tau, half):
        u = np.arange(-half, half + 1, dtype=np.float64)
        g = np.exp(-0.5 * (u / (fwhm / 2.3548))**2)
        if tau > 0:
            k = np.exp(-np.arange(0, 8 * tau + 1) / tau)
            g = np.convolve(g, k / k.sum())[:len(u)]
        return g

    t = FRB_WINDOW + 1000 + rng.uniform(0, 2000)
    while True:
        fwhm = math.exp(rng.uniform(math.log(2.0), math.log(128.0)))
        tau = fwhm * rng.uniform(0.5, 2.0) if len(truth) % 2 else 0.0
        half = int(2.6 * fwhm + 8 * tau + 4)
        if t + 2 * half + 1000 >= n:
            break
        c = int(rng.integers(0, nchan))
        g = profile(fwhm, tau, half)
        snr = rng.uniform(9.0, 25.0)
        amp = snr / math.sqrt(np.sum(g**2))
        i0 = int(t)
        x[i0 - half:i0 + half + 1, c] += (amp * g).astype(np.float32)
        g_side = profile(1.5 * fwhm, 1.5 * tau, half)
        for side in (c - 1, c + 1):
            if 0 <= side < nchan:
                x[i0 - half:i0 + half + 1, side] += (0.6 * amp * g_side).astype(np.float32)
        e = np.cumsum(g**2) / np.sum(g**2)
        lo, hi = np.searchsorted(e, 0.05), np.searchsorted(e, 0.95)
        truth.append({
            "channel": c,
            "centre": i0 - half + float(np.sum(np.arange(len(g)) * g) / np.sum(g)),
            "fwhm": fwhm,
            "tau": tau,
            "extent": (i0 - half + lo, i0 - half + hi + 1),
            "snr": snr,
        })
        t += 2 * half + rng.uniform(1000, 6000)
    return x, truth


@functools.lru_cache(maxsize=4)
def frb_field(n, seed=1):
    """make_frb_field(n, FRB_CHANNELS, seed), cached (do not modify the arrays)."""
    return make_frb_field(int(n), FRB_CHANNELS, int(seed))


def frb_samples(n, seed=1):
    """The field flattened sample after sample (a vector source of vlen 4)."""
    return frb_field(n, seed)[0].ravel()


# ---- boxcar: the pulsar recording -----------------------------------------------

PULSAR_WINDOW = 4096  # statistics window
PULSAR_BASELINE = 2049  # running median: two periods of the pulsar
PULSAR_THRESHOLD = 8.0


@functools.lru_cache(maxsize=2)
def pulsar_recording(path="default"):
    """The PRESTO/SIGPROC time series (gnuradio.transient.timeseries.TimeSeries),
    or None for path ""."""
    path = resolve(path, PULSAR_NAME)
    if path is None:
        return None
    from gnuradio.transient import timeseries
    return timeseries.read_timeseries(path)


def pulsar_samples(path="default"):
    ts = pulsar_recording(path)
    return np.zeros(0, np.float32) if ts is None else np.asarray(ts.data, np.float32)


# ---- SPIIR: a chirp ------------------------------------------------------------------

SPIIR_RATE = 1024.0  # Hz
SPIIR_DURATIONS = (4.0, 6.0, 9.0, 13.0)  # s from 20 to 200 Hz: four chirp masses
SPIIR_INJECT = 2  # the template injected
SPIIR_SNR = 20.0  # injected amplitude (the matched-filter SNR of a perfect template)
SPIIR_SECONDS = 60.0  # length of the stream
SPIIR_END = int(41.5 * SPIIR_RATE) + 123  # the injected chirp's last sample
SPIIR_THRESHOLD = 8.0
SPIIR_WINDOW = 2048  # trigger window (samples)


@functools.lru_cache(maxsize=1)
def spiir_bank():
    """(chirps, design): four Newtonian chirps and their SPIIR bank
    (gnuradio.transient.spiir_design), designed once per process."""
    from gnuradio.transient import spiir_design as sd
    chirps = [sd.newtonian_chirp(SPIIR_RATE, 20.0, 200.0, duration=d) for d in SPIIR_DURATIONS]
    return chirps, sd.design_bank([c.h for c in chirps], SPIIR_RATE)


def spiir_arrays():
    """(a1, b0, delay, level, counts) of the demo bank: the SPIIR block's
    "Arrays" parameters."""
    return spiir_bank()[1].bank.arrays()


@functools.lru_cache(maxsize=2)
def spiir_chirp(seed=1):
    """Unit white noise with template SPIIR_INJECT injected at amplitude
    SPIIR_SNR ending at sample SPIIR_END. Returns (x, truth) with truth a dict:
    template, end (last sample of the chirp), snr (the expected SNR: amplitude
    times the template's match with its SPIIR approximation), match, duration."""
    from gnuradio.transient import spiir_design as sd
    chirps, design = spiir_bank()
    rng = np.random.default_rng(int(seed))
    x = rng.standard_normal(int(SPIIR_SECONDS * SPIIR_RATE)).astype(np.float32)
    sd.inject(x, chirps[SPIIR_INJECT].h, SPIIR_END, SPIIR_SNR)
    match = design.results[SPIIR_INJECT].match
    return x, {"template": SPIIR_INJECT, "end": SPIIR_END, "snr": SPIIR_SNR * match,
               "match": match, "duration": len(chirps[SPIIR_INJECT].h)}


def spiir_samples(seed=1):
    return spiir_chirp(seed)[0]


# ---- Kalman: Gaussian bursts in coloured noise ---------------------------------------

# Gaussian bursts of M-1 samples, AR(2) (a damped resonance), in AR(2) coloured
# noise plus white measurement noise, at random onsets.
KALMAN_M = 92
KALMAN_NS = 46
KALMAN_NOISE_AR = [0.6, -0.2]
KALMAN_NOISE_VAR = 1.0
KALMAN_TARGET_AR = [1.2, -0.72]
KALMAN_TARGET_VAR = 2.0
KALMAN_MEAS_VAR = 0.1
KALMAN_ENVELOPE = "raised_cosine"
KALMAN_THRESHOLD = -6.0
KALMAN_ALPHA = 1e-9
KALMAN_BURSTS = 40


@functools.lru_cache(maxsize=2)
def kalman_bursts(n=400_000, seed=1):
    """(x, onsets): up to KALMAN_BURSTS bursts at least 4 burst lengths apart
    (gnuradio.transient.kalman_signals.gaussian_bursts), cached."""
    from gnuradio.transient import kalman_signals as ks
    n, seed = int(n), int(seed)
    rng = np.random.default_rng(seed + 100)
    span = KALMAN_M - 1
    gaps = rng.integers(4 * span, 4 * span + 8000, KALMAN_BURSTS)
    onsets = np.cumsum(gaps)
    onsets = onsets[onsets < n - span]
    x, onsets = ks.gaussian_bursts(n, onsets, KALMAN_M, KALMAN_NOISE_AR, KALMAN_NOISE_VAR,
                                   KALMAN_MEAS_VAR, KALMAN_TARGET_AR, KALMAN_TARGET_VAR,
                                   KALMAN_ENVELOPE, 10.0, seed + 7)
    return np.asarray(x, np.float32), np.asarray(onsets, np.int64)


def kalman_samples(n=400_000, seed=1):
    return kalman_bursts(n, seed)[0]


# ---- raw recordings and SDR captures ----------------------------------------------------

RAW_FORMATS = ("float32", "complex64")


class RawFileSource(gr.sync_block):
    """Raw little-endian samples from a file (float32 or complex64, no header),
    streamed in chunks, as two float streams for the demo's detectors:

      out 0 "x":  float32 files: the samples; complex64: the magnitude |z|
      out 1 "s":  float32 files: the samples; complex64: the power |z|^2

    offset: samples to skip; count: samples to read (0 = to the end). The file is
    opened when the flow graph starts (a missing file raises there)."""

    def __init__(self, path="", fmt="float32", offset=0, count=0):
        gr.sync_block.__init__(self, name="Raw File Source", in_sig=None,
                               out_sig=[np.float32, np.float32])
        if fmt not in RAW_FORMATS:
            raise ValueError("format must be one of %s, not %r" % (", ".join(RAW_FORMATS), fmt))
        if offset < 0 or count < 0:
            raise ValueError("offset and count must be >= 0")
        self.path, self.fmt = path, fmt
        self._dtype = np.dtype("<f4") if fmt == "float32" else np.dtype("<c8")
        self._offset, self._count = int(offset), int(count)
        self._f = None
        self._left = 0

    def start(self):
        self._f = open(self.path, "rb")
        self._f.seek(self._offset * self._dtype.itemsize)
        total = max(0, os.path.getsize(self.path) // self._dtype.itemsize - self._offset)
        self._left = min(total, self._count) if self._count else total
        return True

    def stop(self):
        if self._f is not None:
            self._f.close()
            self._f = None
        return True

    def work(self, input_items, output_items):
        n = min(len(output_items[0]), self._left)
        if n <= 0:
            return -1  # WORK_DONE
        v = np.fromfile(self._f, dtype=self._dtype, count=n)
        n = len(v)
        if n == 0:
            return -1
        self._left -= n
        if self.fmt == "float32":
            output_items[0][:n] = v
            output_items[1][:n] = v
        else:
            p = v.real.astype(np.float32) ** 2 + v.imag.astype(np.float32) ** 2
            output_items[0][:n] = np.sqrt(p)
            output_items[1][:n] = p
        return n
