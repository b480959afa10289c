#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gr-transient demo, headless: every detector against known truth and the real
recordings -- the edge localizer (a synthetic pulse train, an oscilloscope
recording), the boxcar search (FRB-like pulses, a pulsar recording), a SPIIR
filter bank that finds a chirp, and the Kalman bank on Gaussian bursts.

One GNU Radio flowgraph streams two sources through transient.edge_localizer_f
and collects the "edge" stream tags (and, as a cross-check, the "detects"
messages):

  (a) a synthetic pulse train with known truth: a 3.3 V logic-like signal with
      Gaussian noise, ringing after edges, varying rise times and pulse widths,
      runts (excursions that turn back before reaching the other state, some of
      them crossing the mid level) and edges that oscillate around the mid level
      before settling. Truth: every real transition's mid crossing; runts and
      the extra mid crossings of oscillating edges must give no transition.
  (b) the recording examples/data/i2c_sda_analog_8MHz.sr: the SDA line of an
      I2C bus at 8 MHz, scope channel "SDA analog", checked against the logic
      analyzer probe "SDA" that sampled the same wire.

Both use automatic (IEEE Std 181 histogram) levels. It prints the first
transitions and pulse widths of each source and one summary line per source.

A second flowgraph runs the boxcar single-pulse search
(transient.boxcar_search_ff) on

  (c) FRB-like pulses (Gaussian, some with a scattering tail, S/N 9 to 25,
      widths 2 to 128 samples) injected into white noise in 4 channels (think
      of de-dispersion trials): hits, misses and false alarms against the
      truth, with the width and time errors of the hits;
  (d) the pulsar recording examples/data/GBT_J1807-0847.dat (PSR J1807-0847,
      PRESTO time series with a drifting baseline): its single pulses, the
      period fitted to their arrival times against the period found by
      folding the series, and the candidates off the pulse phase.

  (e) SPIIR: a bank of Newtonian chirp templates is designed
      (gnuradio.transient.spiir_design: filters placed along each chirp's phase,
      gains by least squares), one chirp is injected into white noise at a known
      sample and SNR, and transient.spiir_bank_fc must report it: the loudest
      trigger names the injected template, at the injected time, with the
      expected SNR (injected amplitude x the template's match).
  (f) Kalman bank: Gaussian bursts (AR(2), raised-cosine envelope) in AR(2)
      coloured noise plus white noise through transient.kalman_detector_ff:
      detected and estimated onsets against the truth, hits, misses and false
      alarms, and the energy detector's hits at the same false-alarm count.

The demo exits with status 1 if a detection fails badly (2 on a setup error).
"""

import argparse
import importlib.util
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDING_NAME = "i2c_sda_analog_8MHz.sr"
PULSAR_NAME = "GBT_J1807-0847.dat"
PULSAR_CATALOGUE_PERIOD = 0.16373  # s, PSR J1807-0847 (B1804-08), about

# ---- synthetic pulse train ------------------------------------------------

SYNTH_RATE = 10e6  # samples per second (units of the printed table)
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


# ---- helpers ----------------------------------------------------------------


def load_sigrok():
    """The sigrok reader: from the installed package, else from the source tree."""
    try:
        from gnuradio.transient import sigrok
        return sigrok
    except ImportError:
        pass
    path = os.path.join(HERE, os.pardir, "python", "transient", "sigrok.py")
    if not os.path.exists(path):
        raise ImportError("gnuradio.transient.sigrok is not installed and %s is missing" %
                          os.path.normpath(path))
    spec = importlib.util.spec_from_file_location("transient_sigrok", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def find_recording(name=RECORDING_NAME):
    """examples/data/ of the source tree, else the installed data directory."""
    candidates = [
        os.path.join(HERE, os.pardir, "examples", "data", name),
        os.path.join(HERE, os.pardir, "share", "gr-transient", "examples", "data", name),
        os.path.join(sys.prefix, "share", "gr-transient", "examples", "data", name),
        os.path.join("/usr/local/share/gr-transient/examples/data", name),
        os.path.join("/usr/share/gr-transient/examples/data", name),
    ]
    for c in candidates:
        if os.path.exists(c):
            return os.path.normpath(c)
    return None


def match(det_time, det_pol, ref_time, ref_pol, offset, tol):
    """Pair detections with reference transitions in order.

    A detection matches a reference transition of the same polarity when
    |det - (ref + offset)| <= tol. Returns (pairs, missed, extra) with pairs as
    index arrays (i_det, i_ref).
    """
    i = j = 0
    di, ri = [], []
    missed = extra = 0
    nd, nr = len(det_time), len(ref_time)
    while i < nd and j < nr:
        d = det_time[i] - (ref_time[j] + offset)
        if d < -tol:
            extra += 1
            i += 1
        elif d > tol:
            missed += 1
            j += 1
        elif det_pol[i] != ref_pol[j]:
            extra += 1
            missed += 1
            i += 1
            j += 1
        else:
            di.append(i)
            ri.append(j)
            i += 1
            j += 1
    extra += nd - i
    missed += nr - j
    return (np.asarray(di, dtype=np.int64), np.asarray(ri, dtype=np.int64)), missed, extra


def load_timeseries():
    """The SIGPROC/PRESTO readers: installed package, else the source tree."""
    try:
        from gnuradio.transient import timeseries
        return timeseries
    except ImportError:
        pass
    path = os.path.join(HERE, os.pardir, "python", "transient", "timeseries.py")
    if not os.path.exists(path):
        raise ImportError("gnuradio.transient.timeseries is not installed and %s is "
                          "missing" % os.path.normpath(path))
    spec = importlib.util.spec_from_file_location("transient_timeseries", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def logic_transitions(bits):
    """(index, polarity) of the transitions of a 0/1 array: first new sample."""
    b = np.asarray(bits, dtype=np.int8)
    idx = np.flatnonzero(b[1:] != b[:-1]) + 1
    return idx.astype(np.float64), np.where(b[idx] > 0, 1, -1).astype(np.int32)


def print_table(rate, det_time, det_pol, ref_time, pairs, ref_name, diff_name, rows):
    """First `rows` transitions with their matched reference transitions and the
    widths of the pulses they open (time to the next transition)."""
    us = 1e6 / rate
    ref_of = dict(zip(pairs[0].tolist(), pairs[1].tolist()))
    print("  %4s %-5s %15s %12s %15s %8s %11s %11s" %
          ("#", "edge", "time [sample]", "time [us]", ref_name + " [sample]", diff_name,
           "width [us]", ref_name + " [us]"))
    for k in range(min(rows, len(det_time))):
        width = (det_time[k + 1] - det_time[k]) * us if k + 1 < len(det_time) else math.nan
        j = ref_of.get(k)
        if j is not None:
            ref = ref_time[j]
            diff = det_time[k] - ref
            rw = (ref_time[j + 1] - ref) * us if j + 1 < len(ref_time) else math.nan
            ref_s, diff_s, rw_s = "%15.3f" % ref, "%8.3f" % diff, "%11.3f" % rw
        else:
            ref_s, diff_s, rw_s = "%15s" % "unmatched", "%8s" % "", "%11s" % ""
        print("  %4d %-5s %15.3f %12.3f %s %s %11.3f %s" %
              (k, "rise" if det_pol[k] > 0 else "fall", det_time[k], det_time[k] * us,
               ref_s, diff_s, width, rw_s))


def stat(fn, a):
    """fn(a) as float, NaN for an empty array."""
    return float(fn(a)) if len(a) else math.nan


def rms_of(a):
    return stat(lambda v: np.sqrt(np.mean(np.square(v))), a)


def consistency(name, r):
    """Tags and messages must tell the same story."""
    bad = []
    if r["detects"] != len(r["time"]):
        bad.append("%s: %d transitions on 'detects', %d tags" %
                   (name, r["detects"], len(r["time"])))
    if np.any(r["sample"] != r["offset"]):
        bad.append("%s: tag offsets differ from their 'sample' values" % name)
    if np.any(np.isnan(r["time"])) or np.any(r["time"] > r["offset"]):
        bad.append("%s: a crossing time is NaN or after the first sample in the new state"
                   % name)
    if np.any(np.diff(r["offset"]) <= 0) or np.any(r["polarity"][1:] == r["polarity"][:-1]):
        bad.append("%s: transitions out of order or not alternating" % name)
    return bad


# ---- flowgraph --------------------------------------------------------------


class DemoFlowgraph(object):
    """vector source -> edge_localizer_f -> vector sink (tags), detects -> store."""

    def __init__(self, gr, blocks, transient, sources, backend):
        self.tb = gr.top_block("transient_demo")
        self.branches = {}
        for name, (x, level_samples) in sources.items():
            src = blocks.vector_source_f(x, False)
            loc = transient.edge_localizer_f(
                auto_levels=True,
                tolerance_pct=10.0,
                mid_pct=50.0,
                hist_bins=100,
                level_samples=level_samples,
                level_interval=0,
                backend=backend)
            snk = blocks.vector_sink_f(1, len(x))
            dbg = blocks.message_debug()
            self.tb.connect(src, loc, snk)
            self.tb.msg_connect((loc, "detects"), (dbg, "store"))
            self.branches[name] = (loc, snk, dbg, len(x))

    def run(self):
        self.tb.run()

    def results(self, pmt, name):
        """Transitions of one branch from its tags: dict of arrays, plus checks."""
        loc, snk, dbg, n = self.branches[name]
        key = pmt.intern("edge")
        k_time, k_pol, k_sample = pmt.intern("time"), pmt.intern("polarity"), pmt.intern(
            "sample")
        times, pols, offsets, samples = [], [], [], []
        for tag in snk.tags():
            if not pmt.eq(tag.key, key):
                continue
            v = tag.value
            times.append(pmt.to_double(pmt.dict_ref(v, k_time, pmt.from_double(math.nan))))
            pols.append(pmt.to_long(pmt.dict_ref(v, k_pol, pmt.from_long(0))))
            offsets.append(tag.offset)
            samples.append(pmt.to_uint64(pmt.dict_ref(v, k_sample, pmt.from_uint64(0))))
        n_msg_edges = 0
        for i in range(dbg.num_messages()):
            msg = dbg.get_message(i)
            edges = pmt.dict_ref(msg, pmt.intern("edges"), pmt.PMT_NIL)
            if pmt.is_vector(edges):
                n_msg_edges += pmt.length(edges)
        return {
            "time": np.asarray(times, dtype=np.float64),
            "polarity": np.asarray(pols, dtype=np.int32),
            "offset": np.asarray(offsets, dtype=np.int64),
            "sample": np.asarray(samples, dtype=np.int64),
            "detects": n_msg_edges,
            "levels": (loc.low(), loc.mid(), loc.high()),
            "backend": loc.backend(),
            "samples": n,
        }


# ---- boxcar single-pulse search -----------------------------------------------

FRB_CHANNELS = 4
FRB_WINDOW = 8192  # statistics window of the search; the first one warms up


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


def match_pulses(cands, truth):
    """A candidate (start s, width L, channel c) hits a pulse when its boxcar
    [s, s + L) overlaps the samples that hold 90 % of the pulse's energy and c
    is the pulse's trial or a neighbour. Returns (best candidate per truth
    pulse or None, false alarms, extra candidates on a hit pulse)."""
    hit = [None] * len(truth)
    false = extra = 0
    for cand in cands:
        s, L, c = cand["start"], cand["width"], cand["channel"]
        j = next((j for j, p in enumerate(truth) if abs(p["channel"] - c) <= 1 and
                  s < p["extent"][1] and s + L > p["extent"][0]), None)
        if j is None:
            false += 1
        elif hit[j] is None:
            hit[j] = cand
        else:
            extra += 1
            if cand["snr"] > hit[j]["snr"]:
                hit[j] = cand
    return hit, false, extra


def pulse_dicts(snk, pmt, key="pulse"):
    """The "pulse" tags of a vector sink as dicts (plus the tag offset)."""
    out = []
    for tag in snk.tags():
        if pmt.symbol_to_string(tag.key) != key:
            continue
        d = pmt.to_python(tag.value)
        d["offset"] = int(tag.offset)
        out.append(d)
    return out


def detects_count(dbg, pmt):
    n = 0
    for i in range(dbg.num_messages()):
        n += len(pmt.to_python(dbg.get_message(i))["pulses"])
    return n


def boxcar_demo(args, gr, blocks, pmt, transient):
    """Parts (c) and (d): returns the list of failures (empty if fine)."""
    failures = []
    x_frb, truth = make_frb_field(args.frb_samples, FRB_CHANNELS, args.seed)

    pulsar = None
    if not args.no_recording:
        path = args.pulsar or find_recording(PULSAR_NAME)
        if path is None:
            return ["%s not found; give --pulsar or --no-recording" % PULSAR_NAME]
        try:
            pulsar = load_timeseries().read_timeseries(path)
        except (ImportError, ValueError, OSError) as e:
            return ["pulsar recording: %s" % e]

    tb = gr.top_block("transient_demo_boxcar")
    branches = {}
    try:
        # (c) 4 channels, AstroAccelerate's BoxDIT list up to 256 samples.
        srch = transient.boxcar_search_ff(
            FRB_CHANNELS, "boxdit", [32, 16, 16, 16, 8], max_width=256,
            threshold=args.boxcar_threshold, norm_mode="white", window=FRB_WINDOW,
            backend=args.backend)
        branches["frb"] = (blocks.vector_source_f(x_frb.ravel(), False, FRB_CHANNELS),
                           srch, FRB_CHANNELS)
        # (d) drifting baseline: running median of 2049 samples (two periods),
        # robust statistics over windows of 4096 samples.
        if pulsar is not None:
            srch = transient.boxcar_search_ff(
                1, "boxdit", [32, 16, 16, 16, 8], max_width=256, threshold=8.0,
                norm_mode="white", window=4096, baseline_window=2049,
                backend=args.backend)
            branches["pulsar"] = (blocks.vector_source_f(pulsar.data, False), srch, 1)
    except (RuntimeError, ValueError) as e:
        return ["cannot create the boxcar search (backend %s): %s" % (args.backend, e)]
    sinks = {}
    for name, (src, srch, nchan) in branches.items():
        snk = blocks.vector_sink_f(nchan)
        dbg = blocks.message_debug()
        tb.connect(src, srch, snk)
        tb.connect((srch, 1), blocks.null_sink(4 * nchan))
        tb.msg_connect((srch, "detects"), (dbg, "store"))
        sinks[name] = (snk, dbg)
    t_run = time.time()
    tb.run()
    t_run = time.time() - t_run

    # ---- (c) FRB-like pulses vs truth
    snk, dbg = sinks["frb"]
    srch = branches["frb"][1]
    cands = pulse_dicts(snk, pmt)
    if detects_count(dbg, pmt) != len(cands):
        failures.append("boxcar: %d pulses on 'detects', %d tags" %
                        (detects_count(dbg, pmt), len(cands)))
    if any(c["offset"] != c["start"] for c in cands):
        failures.append("boxcar: a 'pulse' tag is not on its start sample")
    hit, false, extra = match_pulses(cands, truth)
    nhit = sum(h is not None for h in hit)
    print()
    print("== boxcar search, FRB-like pulses: %d samples x %d trials of white noise, "
          "%d pulses (FWHM 2..128 samples, S/N 9..25, half of them scattered, "
          "neighbouring trials at 60 %%)" % (args.frb_samples, FRB_CHANNELS, len(truth)))
    print("   BoxDIT 32,16,16,16,8 up to 256 samples (L_end %d, latency %d), threshold "
          "%.1f, robust white-noise statistics per %d samples; backend %s" %
          (srch.lend(), srch.latency(), args.boxcar_threshold, FRB_WINDOW,
           srch.backend()))
    print("  %4s %3s %10s %7s %6s %5s | %10s %6s %6s %3s %7s %7s" %
          ("#", "ch", "centre", "FWHM", "tau", "S/N", "start", "width", "S/N", "ch",
           "members", "dt/FWHM"))
    for k, (p, h) in enumerate(zip(truth, hit)):
        if k >= args.rows:
            break
        if h is None:
            found = "%10s" % "missed"
        else:
            dt = (h["start"] + 0.5 * h["width"] - p["centre"]) / p["fwhm"]
            found = "%10d %6d %6.1f %3d %7d %+7.2f" % (h["start"], h["width"], h["snr"],
                                                      h["channel"], h["members"], dt)
        print("  %4d %3d %10.1f %7.1f %6.1f %5.1f | %s" %
              (k, p["channel"], p["centre"], p["fwhm"], p["tau"], p["snr"], found))
    rec = np.array([h["snr"] / p["snr"] for p, h in zip(truth, hit) if h is not None])
    dts = np.array([abs(h["start"] + 0.5 * h["width"] - p["centre"]) / p["fwhm"]
                    for p, h in zip(truth, hit) if h is not None])
    same = sum(1 for p, h in zip(truth, hit) if h is not None and h["channel"] == p["channel"])
    print("frb: %d candidates for %d injected pulses: %d hits (%d in the pulse's own "
          "trial), %d misses, %d false alarms, %d extra on a hit pulse; recovered/injected "
          "S/N median %.2f (min %.2f), |time error|/FWHM median %.2f" %
          (len(cands), len(truth), nhit, same, len(truth) - nhit, false, extra,
           stat(np.median, rec), stat(np.min, rec), stat(np.median, dts)))
    pr = transient.boxcar_predict("boxdit", 256, [32, 16, 16, 16, 8])
    print("   predicted for this search (paper Appendix A, rectangular pulses of 1 to %d "
          "samples, noise-free): mean systematic loss %.1f %%, mean worst-case loss "
          "%.1f %%" % (len(pr["S"]), 100 * pr["mean_psi_1"][-1], 100 * pr["mean_psi_w"][-1]))
    if nhit < 0.95 * len(truth) or false > 2:
        failures.append("frb: %d of %d hits, %d false alarms" % (nhit, len(truth), false))

    # ---- (d) pulsar
    if pulsar is not None:
        ts = load_timeseries()
        snk, dbg = sinks["pulsar"]
        srch = branches["pulsar"][1]
        cands = sorted(pulse_dicts(snk, pmt), key=lambda c: c["start"])
        starts = np.array([c["start"] for c in cands], dtype=np.float64)
        fold = ts.estimate_period(pulsar.data, pulsar.tsamp, pmin=0.05, pmax=2.0)
        print()
        print("== boxcar search, pulsar %s: %s, %d samples of %.2f us (%.2f s), DM %.2f, "
              "start MJD %.6f" % (os.path.basename(pulsar.path), pulsar.source,
                                  pulsar.nsamples, pulsar.tsamp * 1e6, pulsar.duration,
                                  pulsar.dm, pulsar.mjd))
        print("   BoxDIT 32,16,16,16,8 up to 256 samples, threshold 8, running-median "
              "baseline 2049 samples, robust statistics per 4096 samples; backend %s" %
              srch.backend())
        print("   folding the series: period %.6f s +- %.6f (catalogue about %.5f s)" %
              (fold["period"], fold["sigma"], PULSAR_CATALOGUE_PERIOD))
        if len(starts) >= 2:
            fit = ts.period_from_arrivals(starts * pulsar.tsamp, fold["period"])
        else:
            fit = {"period": math.nan, "n_used": 0, "n_off": len(starts),
                   "rms_phase": math.nan, "t0": 0.0}
        # Periods that lie after the warm-up window (no candidates there).
        searched = (pulsar.nsamples - 4096) * pulsar.tsamp
        expected = int(searched / fold["period"])
        print("  %4s %10s %10s %6s %6s %8s" % ("#", "start", "time [s]", "width", "S/N",
                                               "phase"))
        for k, c in enumerate(cands[:args.rows]):
            t = c["start"] * pulsar.tsamp
            ph = (t - fit["t0"]) / fit["period"] if math.isfinite(fit["period"]) else 0
            print("  %4d %10d %10.4f %6d %6.1f %+8.3f" %
                  (k, c["start"], t, c["width"], c["snr"], ph - round(ph)))
        print("pulsar: %d candidates, %d on the pulse phase (about %d periods searched "
              "after the first statistics window), %d off it; period from the pulses "
              "%.6f s (phase rms %.3f), from folding %.6f s" %
              (len(cands), fit["n_used"], expected, fit["n_off"], fit["period"],
               fit["rms_phase"], fold["period"]))
        if detects_count(dbg, pmt) != len(cands):
            failures.append("pulsar: %d pulses on 'detects', %d tags" %
                            (detects_count(dbg, pmt), len(cands)))
        if (fit["n_used"] < 0.9 * expected or fit["n_off"] > max(2, 0.05 * len(cands)) or
                not abs(fit["period"] - fold["period"]) <= 2 * fold["sigma"]):
            failures.append("pulsar: %d pulses on the phase of %d periods, %d off, period "
                            "%.6f vs %.6f s" % (fit["n_used"], expected, fit["n_off"],
                                                fit["period"], fold["period"]))
    print("boxcar flowgraph %.2f s" % t_run)
    return failures


# ---- SPIIR filter bank -------------------------------------------------------

SPIIR_RATE = 1024.0  # Hz
SPIIR_DURATIONS = (4.0, 6.0, 9.0, 13.0)  # s from 20 to 200 Hz: four chirp masses
SPIIR_INJECT = 2  # the template injected
SPIIR_SNR = 20.0  # injected amplitude (the matched-filter SNR of a perfect template)


def load_spiir_design():
    """gnuradio.transient.spiir_design, else the module of the source tree."""
    try:
        from gnuradio.transient import spiir_design
        return spiir_design
    except ImportError:
        pass
    here = os.path.join(HERE, os.pardir, "python", "transient")
    sys.path.insert(0, here)
    import spiir_design  # noqa: E402
    return spiir_design


def spiir_demo(gr, blocks, transient, pmt, backend, seed, multirate=False):
    """Design a bank, inject one of its chirps into noise, run spiir_bank_fc.
    Returns a list of failure messages (printing the results)."""
    sd = load_spiir_design()
    t0 = time.time()
    chirps = [sd.newtonian_chirp(SPIIR_RATE, 20.0, 200.0, duration=d)
              for d in SPIIR_DURATIONS]
    design = sd.design_bank([c.h for c in chirps], SPIIR_RATE)
    t_design = time.time() - t0
    rng = np.random.default_rng(seed)
    n = int(60 * SPIIR_RATE)
    end = int(41.5 * SPIIR_RATE) + 123  # the injected chirp's last sample
    x = rng.standard_normal(n).astype(np.float32)
    sd.inject(x, chirps[SPIIR_INJECT].h, end, SPIIR_SNR)

    a1, b0, delay, level, counts = design.bank.arrays()
    tb = gr.top_block("transient_demo_spiir")
    src = blocks.vector_source_f(x, False)
    bank = transient.spiir_bank_fc("", a1, b0, delay, level, counts, SPIIR_RATE,
                                   threshold=8.0, window=2048, multirate=multirate,
                                   backend=backend)
    snk = blocks.vector_sink_c(bank.ntemplates(), n)
    dbg = blocks.message_debug()
    tb.connect(src, bank, snk)
    tb.msg_connect((bank, "detects"), (dbg, "store"))
    t_run = time.time()
    tb.run()
    t_run = time.time() - t_run

    trig = [pmt.to_python(t.value) for t in snk.tags() if pmt.symbol_to_string(t.key) ==
            "trigger"]
    n_msg = sum(len(pmt.to_python(dbg.get_message(i))["triggers"])
                for i in range(dbg.num_messages()))
    print()
    print("== SPIIR: %d Newtonian chirp templates (20 to 200 Hz in %s s) at %g Hz, %d "
          "filters in all; designed in %.2f s" %
          (len(chirps), "/".join("%g" % d for d in SPIIR_DURATIONS), SPIIR_RATE,
           int(counts.sum()), t_design))
    print("   %-8s %7s %8s %7s %7s" % ("template", "cycles", "filters", "match", "levels"))
    for t, (c, r) in enumerate(zip(chirps, design.results)):
        lv = np.bincount(r.filters["level"])
        print("   %-8d %7.0f %8d %7.4f  %s" % (t, c.cycles, len(r.filters), r.match,
                                              "/".join(str(v) for v in lv)))
    truth_t = end / SPIIR_RATE
    expected = SPIIR_SNR * design.results[SPIIR_INJECT].match
    print("   injected: template %d ending at sample %d (t = %.4f s) into unit white "
          "noise, amplitude %g -> expected SNR %.2f +- 1 (noise); %.0f s of data; backend "
          "%s, %s" %
          (SPIIR_INJECT, end, truth_t, SPIIR_SNR, expected, n / SPIIR_RATE,
           bank.backend(), "multirate (latency %d samples)" % bank.latency()
           if multirate else "single rate"))
    print("   %4s %8s %10s %12s %11s %8s" % ("#", "template", "SNR", "time [s]", "sample",
                                           "error"))
    for k, v in enumerate(sorted(trig, key=lambda v: -v["snr"])[:8]):
        print("   %4d %8d %10.2f %12.4f %11d %+8d" % (k, v["template"], v["snr"], v["time"],
                                                    v["sample"], v["sample"] - end))
    failures = []
    if n_msg != len(trig):
        failures.append("spiir: %d triggers on 'detects', %d tags" % (n_msg, len(trig)))
    if not trig:
        failures.append("spiir: no trigger")
    else:
        best = max(trig, key=lambda v: v["snr"])
        print("spiir: %d triggers; loudest: template %d, SNR %.2f (expected %.2f +- 1), time "
              "%.4f s (truth %.4f s, error %+.1f ms); filtering %.2f s (%.0fx real time)" %
              (len(trig), best["template"], best["snr"], expected, best["time"], truth_t,
               1e3 * (best["time"] - truth_t), t_run, n / SPIIR_RATE / max(t_run, 1e-9)))
        if (best["template"] != SPIIR_INJECT or abs(best["sample"] - end) > 2 or
                abs(best["snr"] / expected - 1) > 0.2):
            failures.append("spiir: loudest trigger template %d, SNR %.2f at sample %d; "
                            "injected template %d, SNR %.2f at sample %d" %
                            (best["template"], best["snr"], best["sample"], SPIIR_INJECT,
                             expected, end))
    return failures


def load_kalman_signals():
    """gnuradio.transient.kalman_signals, else the module of the source tree."""
    try:
        from gnuradio.transient import kalman_signals
        return kalman_signals
    except ImportError:
        pass
    here = os.path.join(HERE, os.pardir, "python", "transient")
    sys.path.insert(0, here)
    import kalman_signals  # noqa: E402
    return kalman_signals


# Kalman part: Gaussian bursts of M-1 samples, AR(2) (a damped resonance), in
# AR(2) coloured noise plus white measurement noise, at random onsets.
KALMAN_M = 92
KALMAN_NS = 46
KALMAN_NOISE_AR = [0.6, -0.2]
KALMAN_TARGET_AR = [1.2, -0.72]
KALMAN_TARGET_VAR = 2.0
KALMAN_MEAS_VAR = 0.1
KALMAN_THRESHOLD = -6.0
KALMAN_BURSTS = 40


def kalman_demo(gr, blocks, transient, pmt, backend, seed):
    """Gaussian bursts in coloured noise through kalman_detector_ff.
    Returns a list of failure messages (printing the results)."""
    ks = load_kalman_signals()
    rng = np.random.default_rng(seed + 100)
    span = KALMAN_M - 1
    n = 400_000
    # Onsets at least 4 burst lengths apart.
    gaps = rng.integers(4 * span, 4 * span + 8000, KALMAN_BURSTS)
    onsets = np.cumsum(gaps)
    onsets = onsets[onsets < n - span]
    x, onsets = ks.gaussian_bursts(n, onsets, KALMAN_M, KALMAN_NOISE_AR, 1.0,
                                   KALMAN_MEAS_VAR, KALMAN_TARGET_AR, KALMAN_TARGET_VAR,
                                   "raised_cosine", 10.0, seed + 7)
    tb = gr.top_block("transient_demo_kalman")
    src = blocks.vector_source_f(x, False)
    det = transient.kalman_detector_ff(KALMAN_M, KALMAN_NS, KALMAN_THRESHOLD, 1e-9,
                                       KALMAN_NOISE_AR, 1.0, KALMAN_MEAS_VAR,
                                       KALMAN_TARGET_AR, KALMAN_TARGET_VAR,
                                       "raised_cosine", 10.0, "", backend)
    snk = blocks.vector_sink_f(1, n)
    dbg = blocks.message_debug()
    tb.connect(src, det, snk)
    tb.msg_connect((det, "detects"), (dbg, "store"))
    t_run = time.time()
    tb.run()
    t_run = time.time() - t_run
    dets = [pmt.to_python(dbg.get_message(i)) for i in range(dbg.num_messages())]
    tags = [t for t in snk.tags() if pmt.symbol_to_string(t.key) == "burst"]
    llr = np.asarray(snk.data())

    # A detection belongs to the burst whose samples it starts in.
    first = {}
    false = []
    for d in dets:
        owner = onsets[(onsets <= d["start"]) & (d["start"] < onsets + span)]
        if len(owner):
            first.setdefault(int(owner[0]), d)
        else:
            false.append(d)
    # The energy detector at the same false-alarm count: moving average of x^2
    # over N_s samples, its threshold set so that it fires outside the bursts
    # no more often than the Kalman detector did.
    e = np.convolve(x.astype(np.float64) ** 2, np.ones(KALMAN_NS) / KALMAN_NS)[:n]
    inside = np.zeros(n, bool)
    for o in onsets:
        inside[o:o + span + KALMAN_NS] = True
    e_out = np.sort(e[~inside])
    e_thr = e_out[-(len(false) + 1)]
    e_hits = sum(1 for o in onsets if e[o:o + span + KALMAN_NS].max() > e_thr)

    print()
    print("== Kalman bank: %d Gaussian bursts (AR(2) %s, raised-cosine envelope, %d "
          "samples) in AR(2) %s noise + white noise (var %g); M = %d, N_s = %d, threshold "
          "%g; backend %s" %
          (len(onsets), KALMAN_TARGET_AR, span, KALMAN_NOISE_AR, KALMAN_MEAS_VAR, KALMAN_M,
           KALMAN_NS, KALMAN_THRESHOLD, det.backend()))
    print("   %4s %10s %10s %10s %8s %9s" % ("#", "onset", "detected", "est.onset", "error",
                                          "peak LLR"))
    for k, o in enumerate(onsets[:12]):
        d = first.get(int(o))
        if d is None:
            print("   %4d %10d %10s %10s %8s %9s" % (k, o, "missed", "-", "-", "-"))
        else:
            print("   %4d %10d %10d %10d %+8d %9.2f" % (k, o, d["start"], d["onset"],
                                                     d["onset"] - o, d["peak_llr"]))
    err = np.array([first[o]["onset"] - o for o in first])
    print("kalman: %d bursts: %d hits, %d misses, %d false alarms; onset error median %+.0f "
          "samples (|err| <= %d for 90%%); energy detector at the same false alarms: %d "
          "hits; %d samples in %.2f s" %
          (len(onsets), len(first), len(onsets) - len(first), len(false),
           np.median(err) if len(err) else float("nan"),
           int(np.percentile(np.abs(err), 90)) if len(err) else 0, e_hits, n, t_run))
    failures = []
    if len(tags) != 2 * len(dets):
        failures.append("kalman: %d burst tags for %d detections" % (len(tags), len(dets)))
    if not np.all(np.isfinite(llr)):
        failures.append("kalman: non-finite LLR")
    if len(first) < 0.8 * len(onsets) or len(false) > 2:
        failures.append("kalman: %d of %d bursts found, %d false alarms" %
                        (len(first), len(onsets), len(false)))
    if len(first) < e_hits:
        failures.append("kalman: fewer hits (%d) than the energy detector (%d)" %
                        (len(first), e_hits))
    return failures


# ---- main -------------------------------------------------------------------


def other_parts(args, gr, blocks, pmt, transient):
    """The boxcar, SPIIR and Kalman parts: their failures, or None after a
    setup error (already reported)."""
    failures = []
    if not args.no_boxcar:
        failures += boxcar_demo(args, gr, blocks, pmt, transient)
    if not args.no_spiir:
        try:
            failures += spiir_demo(gr, blocks, transient, pmt, args.backend, args.seed,
                                   args.multirate)
        except (RuntimeError, ValueError) as e:
            sys.stderr.write("transient_demo: SPIIR part (backend %s): %s\n" %
                             (args.backend, e))
            return None
    if not args.no_kalman:
        try:
            failures += kalman_demo(gr, blocks, transient, pmt, args.backend, args.seed)
        except (RuntimeError, ValueError) as e:
            sys.stderr.write("transient_demo: Kalman part (backend %s): %s\n" %
                             (args.backend, e))
            return None
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="gr-transient demo: every detector in GNU Radio flow graphs against "
        "known truth (edges, boxcar search, SPIIR bank, Kalman bank) and the real "
        "recordings.")
    ap.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto",
                    help="where the localizer runs (default: auto = CUDA if usable)")
    ap.add_argument("--samples", type=int, default=2_000_000,
                    help="length of the synthetic pulse train (default 2,000,000)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the synthetic signal")
    ap.add_argument("--recording", default=None,
                    help="sigrok session file (default: examples/data/%s)" % RECORDING_NAME)
    ap.add_argument("--no-recording", action="store_true", help="synthetic source only")
    ap.add_argument("--rows", type=int, default=10, help="table rows per source")
    ap.add_argument("--no-edges", action="store_true",
                    help="skip the edge localizer parts (a) and (b)")
    ap.add_argument("--no-boxcar", action="store_true",
                    help="skip the boxcar search parts (c) and (d)")
    ap.add_argument("--frb-samples", type=int, default=262144,
                    help="samples per channel of the FRB-like field (default 262144)")
    ap.add_argument("--boxcar-threshold", type=float, default=7.0,
                    help="S/N threshold of the FRB-like search (default 7)")
    ap.add_argument("--pulsar", default=None,
                    help="pulsar time series, .tim or .dat (default: examples/data/%s)" %
                    PULSAR_NAME)
    ap.add_argument("--no-spiir", action="store_true", help="skip the SPIIR part")
    ap.add_argument("--no-kalman", action="store_true", help="skip the Kalman part")
    ap.add_argument("--multirate", action="store_true",
                    help="SPIIR part: run each filter at its level's rate")
    args = ap.parse_args(argv)
    t_start = time.time()

    try:
        from gnuradio import gr, blocks
        import pmt
        from gnuradio import transient
    except ImportError as e:
        sys.stderr.write("transient_demo: %s\n(needs GNU Radio 3.10 and gr-transient "
                         "installed, or PYTHONPATH pointing at the build tree)\n" % e)
        return 2

    if args.frb_samples < 4 * FRB_WINDOW:
        ap.error("--frb-samples must be at least %d" % (4 * FRB_WINDOW))
    if args.no_edges:
        failures = other_parts(args, gr, blocks, pmt, transient)
        if failures is None:
            return 2
        print()
        print("total %.2f s" % (time.time() - t_start))
        for f in failures:
            print("FAIL: " + f)
        return 1 if failures else 0

    # (a) synthetic
    if args.samples < 100_000:
        ap.error("--samples must be at least 100000")
    x_syn, truth = make_pulse_train(args.samples, args.seed)
    sources = {"synthetic": (x_syn, 65536)}

    # (b) recording
    rec = None
    if not args.no_recording:
        path = args.recording or find_recording()
        if path is None:
            sys.stderr.write("transient_demo: %s not found; give --recording or "
                             "--no-recording\n" % RECORDING_NAME)
            return 2
        try:
            sigrok = load_sigrok()
            rec = sigrok.read_sr(path)
            x_rec = np.asarray(rec.analog_channel("SDA analog"), dtype=np.float32)
            sda = rec.logic_channel("SDA")
        except KeyError as e:
            sys.stderr.write("transient_demo: %s\n" % e.args[0])
            return 2
        except (ImportError, ValueError, OSError) as e:
            sys.stderr.write("transient_demo: %s\n" % e)
            return 2
        # The bus idles low for the first 0.1 s while the EEPROM powers up: the
        # IEEE 181 estimate must see the traffic, so it takes the whole record.
        sources["recording"] = (x_rec, len(x_rec))

    try:
        fg = DemoFlowgraph(gr, blocks, transient, sources, args.backend)
    except (RuntimeError, ValueError) as e:
        sys.stderr.write("transient_demo: cannot create the edge localizer (backend %s): "
                         "%s\n" % (args.backend, e))
        return 2
    t_run = time.time()
    fg.run()
    t_run = time.time() - t_run

    failures = []

    # ---- (a) synthetic vs truth
    r = fg.results(pmt, "synthetic")
    failures += consistency("synthetic", r)
    lo, mi, hi = r["levels"]
    print("== synthetic pulse train: %d samples at %g MS/s, %.1f V / %.1f V, noise %d mV "
          "rms, ringing, runts, oscillation around mid" %
          (r["samples"], SYNTH_RATE / 1e6, SYNTH_LOW, SYNTH_HIGH, SYNTH_NOISE * 1000))
    print("   reference levels (IEEE 181 from the first %d samples): low %.3f V, "
          "mid %.3f V, high %.3f V; backend %s" %
          (sources["synthetic"][1], lo, mi, hi, r["backend"]))
    # A hit is within 2 samples of the truth: the edges' 10-90 % rise times are
    # 2.4 to 9.4 samples; noise and the estimated mid level move the crossing
    # by a few tenths of a sample at most.
    (di, ti), missed, extra = match(r["time"], r["polarity"], truth["time"],
                                    truth["polarity"], 0.0, 2.0)
    print_table(SYNTH_RATE, r["time"], r["polarity"], truth["time"], (di, ti), "truth",
                "error", args.rows)
    err = r["time"][di] - truth["time"][ti]
    nt = len(truth["time"])
    naive = int(np.count_nonzero((x_syn[:-1] < mi) != (x_syn[1:] < mi)))
    print("synthetic: %d transitions found, truth %d: %d hits, %d misses, %d false; timing "
          "error mean %+.3f rms %.3f max %.3f samples; the signal has %d runts (%d of them "
          "crossing mid) and %d oscillating edges: %d plain mid crossings" %
          (len(r["time"]), nt, len(di), missed, extra, stat(np.mean, err), rms_of(err),
           stat(lambda e: np.max(np.abs(e)), err), truth["runts"], truth["runts_mid"],
           truth["oscillating"], naive))
    if len(di) < 0.99 * nt or extra > 0.01 * nt or not rms_of(err) <= 0.5:
        failures.append("synthetic: %d of %d hits, %d false, rms timing error %.3f" %
                        (len(di), nt, extra, rms_of(err)))

    # ---- (b) recording vs its logic channel
    if rec is not None:
        r = fg.results(pmt, "recording")
        failures += consistency("recording", r)
        lo, mi, hi = r["levels"]
        lt, lp = logic_transitions(sda)
        print()
        print("== recording %s: %r, %d samples at %g MHz (%.3f s), I2C SDA" %
              (os.path.basename(rec.path), "SDA analog", r["samples"], rec.samplerate / 1e6,
               rec.duration))
        print("   reference levels (IEEE 181 from the whole record): low %.3f V, "
              "mid %.3f V, high %.3f V; backend %s" % (lo, mi, hi, r["backend"]))
        # The analog mid crossing lags the logic probe's transition by 4 +- 2
        # samples on this instrument: a fixed skew of 3 to 4 samples between its
        # analog and logic inputs, plus about one sample on rising edges, where
        # the slow open-drain rise passes the logic threshold before mid (see
        # tests/c/test_edges_recording.c).
        lag, lag_tol = 4.0, 2.0
        (di, li), missed, extra = match(r["time"], r["polarity"], lt, lp, lag, lag_tol)
        print_table(rec.samplerate, r["time"], r["polarity"], lt, (di, li), "logic", "lag",
                    args.rows)
        d = r["time"][di] - lt[li]
        print("recording: %d transitions found, logic probe %d: %d matched, %d missed, %d "
              "extra; lag behind the logic %.2f..%.2f samples (median %.2f = %.0f ns, "
              "allowed %.0f +- %.0f)" %
              (len(r["time"]), len(lt), len(di), missed, extra, stat(np.min, d),
               stat(np.max, d), stat(np.median, d),
               stat(np.median, d) * 1e9 / rec.samplerate, lag, lag_tol))
        if len(di) < 0.99 * len(lt) or extra > 0.01 * len(lt):
            failures.append("recording: %d of %d matched, %d extra" %
                            (len(di), len(lt), extra))

    more = other_parts(args, gr, blocks, pmt, transient)
    if more is None:
        return 2
    failures += more

    print()
    print("edge flowgraph %.2f s, total %.2f s" % (t_run, time.time() - t_start))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
