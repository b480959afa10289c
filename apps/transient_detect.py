#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""transient-detect: run a gr-transient detector over a recording and write
its detections as CSV, JSON and/or SigMF annotations.

    transient-detect DETECTOR INPUT [options]

DETECTOR is one of
  edges   transient.edge_localizer_f   transitions of a two-level signal
  boxcar  transient.boxcar_search_ff   single pulses (boxcar_search_cf: the
                                       power of complex input)
  spiir   transient.spiir_bank_fc/_cc  matched-filter triggers (--bank FILE); or,
          with --template FILE / --approximant NAME, a search of strain
          (GWOSC HDF5 or raw): PSD, whitening, bank design, triggers with
          chi-square (spiir_detect; share/doc/gr-transient/spiir.md)
  kalman  transient.kalman_detector_ff Gaussian bursts in coloured noise
  frb     FRB search of a SIGPROC filterbank (.fil) or PSRFITS search-mode
          file (.fits, .sf; astropy): dedispersion over a DM plan, boxcar
          search, candidates with DM (transient-frb, over libtransient's
          tr_frb; no GNU Radio; share/doc/gr-transient/frb.md)

INPUT is raw float32 (.f32) or complex64 (.c64, .cf32, .cfile), SigMF
(.sigmf-meta/.sigmf-data), a sigrok session (.sr, --channel), SIGPROC
(.tim/.fil) or PRESTO (.dat + .inf); --format overrides the recognition.

The recording streams through a GNU Radio flowgraph (file source -> detector
-> null sinks) and the detector's "detects" messages are collected. Exit
status: 0 on success, 2 on a usage or input error (one line on stderr, nothing
written), 1 when the flowgraph fails, 130 when interrupted. When the search
could not run as its settings say (boxcar: the input is shorter than the
statistics window or than --max-width, or a channel has no usable
statistics) one "warning:" line on stderr says what was done instead (even
with -q); the status stays 0.
See share/doc/gr-transient/transient-detect.md.
"""

import argparse
import csv
import io
import json
import math
import os
import re
import shutil
import sys
import threading
import time

PROG = "transient-detect"
DETECTORS = ("edges", "boxcar", "spiir", "kalman", "frb")
SIGMF_EXTENSION = {"name": "transient", "version": "1.0.0", "optional": True}


def _version():
    """The package's version; from the source tree's CMakeLists.txt when the
    installed package predates __version__ or is absent."""
    try:
        from gnuradio.transient import __version__
        return __version__
    except ImportError:
        here = os.path.dirname(os.path.abspath(__file__))
        try:
            with open(os.path.join(here, os.pardir, "CMakeLists.txt")) as f:
                m = re.search(r"project\([^)]*VERSION\s+([0-9.]+)", f.read())
            return m.group(1) if m else "unknown"
        except OSError:
            return "unknown"


def _import_package():
    """gnuradio.transient's recordings, sigmf, io_checks, run_advice and
    tempfiles modules; from the
    source tree (../python/transient) when the installed package predates them."""
    try:
        from gnuradio.transient import io_checks, recordings, run_advice, sigmf, tempfiles
        return recordings, sigmf, io_checks, run_advice, tempfiles
    except ImportError:
        here = os.path.dirname(os.path.abspath(__file__))
        src = os.path.join(here, os.pardir, "python", "transient")
        if not os.path.exists(os.path.join(src, "recordings.py")):
            raise
        sys.path.insert(0, os.path.abspath(src))
        import io_checks
        import recordings
        import run_advice
        import sigmf
        import tempfiles
        return recordings, sigmf, io_checks, run_advice, tempfiles


recordings, sigmf, io_checks, run_advice, tempfiles = _import_package()


def _import_frb():
    """gnuradio.transient.frb_detect, or the source tree's (as _import_package)."""
    try:
        from gnuradio.transient import frb_detect
        return frb_detect
    except ImportError:
        src = os.path.join(_app_dir(), os.pardir, "python", "transient")
        if not os.path.exists(os.path.join(src, "frb_detect.py")):
            raise
        sys.path.insert(0, os.path.abspath(src))
        import frb_detect
        return frb_detect


def _import_spiir_detect():
    """gnuradio.transient.spiir_detect (the strain search), installed or built."""
    from gnuradio.transient import spiir_detect
    return spiir_detect


def _app_dir():
    return os.path.dirname(os.path.abspath(__file__))


class UsageError(Exception):
    """A problem with the options or the input: exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message):
        raise UsageError(message)


def _floats(text):
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated numbers, got %r" % text)


def _ints(text):
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated integers, got %r" % text)


def _nonneg_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected an integer, got %r" % text)
    if v < 0:
        raise argparse.ArgumentTypeError("must be >= 0, got %d" % v)
    return v


def _pos_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number, got %r" % text)
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError("must be a positive number, got %r" % text)
    return v


# spiir_design.DEFAULT_MAX_LATENCY (the package is imported only for a search)
SPIIR_MAX_LATENCY = 55


def _spiir_search_arguments(parser):
    """The strain search options of spiir (without --bank; spiir_detect)."""
    g = parser.add_argument_group("search of strain without --bank (share/doc/gr-transient/"
                                  "spiir.md): the bank is designed from the template")
    g.add_argument("--template", metavar="FILE",
                   help="waveform: .npy, text (time, h) or (time, h+, hx), HDF5 (hplus, "
                   "hcross)")
    g.add_argument("--template-rate", type=_pos_float,
                   help="sample rate of a .npy template (default: the strain's)")
    g.add_argument("--approximant", metavar="NAME",
                   help="lalsimulation approximant instead of --template (needs lalsuite)")
    g.add_argument("--m1", type=_pos_float, help="--approximant: mass 1 (solar masses)")
    g.add_argument("--m2", type=_pos_float, help="--approximant: mass 2 (solar masses)")
    g.add_argument("--psd", default="estimate", metavar="estimate|design|FILE",
                   help="PSD: Welch median of the strain (estimate, default), the Advanced "
                   "LIGO design fit (design), or a two-column file (frequency, ASD)")
    g.add_argument("--psd-is-psd", action="store_true",
                   help="the --psd file's second column is the PSD, not the ASD")
    g.add_argument("--psd-seconds", type=_pos_float, default=4.0,
                   help="PSD segment and grid length in s (4)")
    g.add_argument("--f-low", type=_pos_float, default=20.0,
                   help="whitening and template band starts here, Hz (20)")
    g.add_argument("--target-match", type=float, default=0.97,
                   help="bank design: epsilon searched until the match with the whitened "
                   "template reaches this (0.97)")
    g.add_argument("--max-latency", type=int, default=SPIIR_MAX_LATENCY,
                   help="multirate lag allowed, samples (%d)" %
                   SPIIR_MAX_LATENCY)
    g.add_argument("--chisq-half", type=int, default=None,
                   help="chi-square lags each side of the peak, samples (0.1 s)")
    g.add_argument("--taper", type=float, default=1.0,
                   help="seconds at each end of the strain ramped in before whitening (1)")


def build_parser():
    common = _Parser(add_help=False)
    g = common.add_argument_group("input")
    g.add_argument("input", help="the recording")
    g.add_argument("--format", default="auto", choices=("auto", ) + recordings.FORMATS,
                   help="input format (default: from the suffix or the first bytes)")
    g.add_argument("--rate", type=_pos_float,
                   help="sample rate in Hz (raw files; overrides the file's)")
    g.add_argument("--channel",
                   help="channel: sigrok analog channel or logic probe name, or a "
                   "channel index of multi-channel SigMF/SIGPROC data")
    g.add_argument("--complex-to", choices=("error", "mag", "power", "real", "imag"),
                   default="error",
                   help="complex input to the real-only detectors (edges, kalman, "
                   "spiir is complex-capable): |z|, |z|^2, Re or Im (default: refuse)")
    g.add_argument("--start", type=_nonneg_int, default=0,
                   help="first sample to process (default 0)")
    g.add_argument("--samples", type=_nonneg_int, default=0,
                   help="samples to process (default 0: to the end)")
    g = common.add_argument_group("output")
    g.add_argument("-o", "--output",
                   help="detections file (.csv or .json; '-' = stdout). Without -o "
                   "and --sigmf-annotations, CSV goes to stdout")
    g.add_argument("--output-format", choices=("csv", "json"),
                   help="format of -o (default: from its suffix)")
    g.add_argument("--sigmf-annotations", nargs="?", const="", metavar="META",
                   help="write SigMF metadata with one annotation per detection to "
                   "META (default: beside the input, see share/doc/gr-transient/transient-detect.md)")
    g.add_argument("--in-place", action="store_true",
                   help="SigMF input: add the annotations to the input's own "
                   ".sigmf-meta (replacing this detector's earlier ones)")
    g.add_argument("--progress", action="store_true",
                   help="progress bar on stderr even when it is not a terminal")
    g.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar, summary or notes on stderr")
    g.add_argument("-v", "--verbose", action="store_true",
                   help="GNU Radio's informational log lines too (e.g. the backend "
                   "choice); by default only its warnings and errors")
    g = common.add_argument_group("backend")
    g.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto")
    g.add_argument("--device", type=_nonneg_int, default=0, help="CUDA device index")

    p = _Parser(prog=PROG, description="Run a gr-transient detector over a recording "
                "and write its detections (share/doc/gr-transient/transient-detect.md).")
    p.add_argument("--version", action="version", version=PROG + " " + _version())
    sub = p.add_subparsers(dest="detector", metavar="DETECTOR", parser_class=_Parser)
    sub.required = True

    e = sub.add_parser("edges", parents=[common], help="edge_localizer_f: transitions")
    g = e.add_argument_group("edge_localizer_f")
    g.add_argument("--auto-levels", action="store_true",
                   help="estimate the levels (IEEE 181 histogram) instead of --low/--mid/--high")
    g.add_argument("--low", type=float, default=0.1, help="fixed low level (0.1)")
    g.add_argument("--mid", type=float, default=0.5, help="fixed mid level (0.5)")
    g.add_argument("--high", type=float, default=0.9, help="fixed high level (0.9)")
    g.add_argument("--tolerance-pct", type=float, default=10.0,
                   help="auto: state boundaries in %% of the amplitude (10)")
    g.add_argument("--mid-pct", type=float, default=50.0,
                   help="auto: mid reference in %% of the amplitude (50)")
    g.add_argument("--hist-bins", type=_nonneg_int, default=100, help="auto: bins (100)")
    g.add_argument("--level-samples", type=_nonneg_int, default=65536,
                   help="auto: samples per level estimate (65536)")
    g.add_argument("--level-interval", type=_nonneg_int, default=0,
                   help="auto: re-estimate every N samples, 0 = never (0)")
    g.add_argument("--batch", type=_nonneg_int, default=65536, help="CUDA batch (65536)")
    g = e.add_argument_group("IEEE 181 metrics (share/doc/gr-transient/edges.md)")
    g.add_argument("--metrics", action="store_true",
                   help="add the transition and pulse metrics of every transition "
                   "(risetime/falltime 10-90 %%, 20-80 %%, slewrate, overshoot, undershoot, "
                   "settlingtime to 2 %%, pulsewidth, pulseperiod, dutycycle, tie) in seconds")
    g.add_argument("--tie-edges", choices=("rising", "falling", "both"), default="rising",
                   help="--metrics: transitions whose time-interval error is measured "
                   "(rising)")
    g.add_argument("--tie-ui", type=float, default=0.0,
                   help="--metrics: unit interval of the ideal clock in seconds; 0: every "
                   "measured transition is one clock period (0)")
    g.add_argument("--tie-window", type=_nonneg_int, default=0,
                   help="--metrics: transitions per least-squares clock fit, 0 = the "
                   "whole record (0)")

    b = sub.add_parser("boxcar", parents=[common],
                       help="boxcar_search_ff/_cf: single pulses")
    g = b.add_argument_group("boxcar_search_ff / boxcar_search_cf")
    g.add_argument("--algorithm", choices=("boxdit", "igrid", "ideal"), default="boxdit")
    g.add_argument("--widths", type=_ints, default=[32, 16, 16, 16, 8],
                   help="BoxDIT widths per iteration (32,16,16,16,8)")
    g.add_argument("--depth", type=_nonneg_int, default=1, help="IGRID depth 1..3 (1)")
    g.add_argument("--layers", type=_nonneg_int, default=0, help="IGRID layers, 0 = 2^(d+1)")
    g.add_argument("--max-width", type=_nonneg_int, default=256,
                   help="widest pulse in samples (256)")
    g.add_argument("--threshold", type=float, default=7.0, help="S/N threshold (7)")
    g.add_argument("--norm-mode", choices=("white", "levels", "fixed"), default="white")
    g.add_argument("--reject-sigma", type=float, default=3.0,
                   help="outlier rejection of the statistics, 0 = none (3)")
    g.add_argument("--window", type=_nonneg_int, default=16384,
                   help="samples per statistics window (16384)")
    g.add_argument("--norm-history", type=_nonneg_int, default=4,
                   help="statistics windows merged (4)")
    g.add_argument("--baseline-window", type=_nonneg_int, default=0,
                   help="baseline removal window in samples, 0 = none (0)")
    g.add_argument("--baseline-mode", choices=("median", "block"), default="median")
    g.add_argument("--fixed-mean", type=float, default=0.0, help="fixed mode mean (0)")
    g.add_argument("--fixed-sigma", type=float, default=1.0, help="fixed mode sigma (1)")
    g.add_argument("--cluster-time", type=_nonneg_int, default=0,
                   help="friends-of-friends gap in samples (0)")
    g.add_argument("--cluster-chan", type=_nonneg_int, default=1,
                   help="friends-of-friends channel distance (1)")
    g.add_argument("--batch", type=_nonneg_int, default=65536, help="CUDA batch (65536)")

    s = sub.add_parser("spiir", parents=[common], help="spiir_bank_fc/_cc: chirp triggers")
    g = s.add_argument_group("spiir_bank_fc / spiir_bank_cc")
    g.add_argument("--bank",
                   help="bank file (share/doc/gr-transient/spiir.md; gnuradio.transient."
                   "spiir_bank); without it, --template or --approximant designs one")
    g.add_argument("--threshold", type=float, default=8.0, help="|SNR| threshold (8)")
    g.add_argument("--window", type=_nonneg_int, default=None,
                   help="samples after a peak that end its cluster (1024; without --bank "
                   "the whitened template's length)")
    g.add_argument("--multirate", action="store_true", help="run filters at their levels")
    g.add_argument("--batch", type=_nonneg_int, default=4096, help="CUDA batch (4096)")
    _spiir_search_arguments(s)

    k = sub.add_parser("kalman", parents=[common], help="kalman_detector_ff: bursts")
    g = k.add_argument_group("kalman_detector_ff")
    g.add_argument("--M", type=_nonneg_int, default=92, help="hypotheses (92)")
    g.add_argument("--Ns", type=_nonneg_int, default=46, help="present hypotheses (46)")
    g.add_argument("--threshold", type=float, default=0.0, help="LLR threshold (0)")
    g.add_argument("--alpha", type=float, default=1e-9, help="onset prior (1e-9)")
    g.add_argument("--noise-ar", type=_floats, default=[0.5], help="noise AR (0.5)")
    g.add_argument("--noise-var", type=float, default=1.0, help="noise variance (1)")
    g.add_argument("--meas-var", type=float, default=0.0, help="white noise variance (0)")
    g.add_argument("--target-ar", type=_floats, default=[0.9], help="burst AR (0.9)")
    g.add_argument("--target-var", type=float, default=1.0, help="burst variance (1)")
    g.add_argument("--envelope", choices=("rect", "exp", "gauss", "raised_cosine"),
                   default="rect")
    g.add_argument("--env-param", type=float, default=10.0,
                   help="exp/gauss envelope parameter in samples (10)")
    g.add_argument("--model-file", default="", help="model file instead of designing")
    g.add_argument("--batch", type=_nonneg_int, default=65536, help="CUDA batch (65536)")

    _import_frb().add_parser(sub)
    return p


# ---- detections ---------------------------------------------------------------

# Columns of every detector after "sample" and "time".
FIELDS = {
    "edges": ("polarity", "crossing"),
    "boxcar": ("width", "snr", "channel", "centre", "members"),
    "spiir": ("template", "snr", "phase", "chisq", "merger_time"),
    "kalman": ("end", "duration", "peak", "peak_llr", "onset"),
}


def _num(v):
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v


def to_detections(det, messages, start, rate):
    """Rows (dicts) from the detector's "detects" messages (pmt.to_python; for
    edges, transient.edge_arrays of the block's "vectors" messages).

    Every row has "sample" (absolute sample in the recording), "time" (seconds
    from the recording's first sample, None without a rate), "count" (samples
    the detection covers) and the detector's fields (FIELDS)."""
    rows = []

    def t(s):
        return None if rate is None else s / rate

    for m in messages:
        if det == "edges":
            for s, x, p in zip(m["sample"].tolist(), m["time"].tolist(),
                               m["polarity"].tolist()):
                s += start
                crossing = (x + start) if math.isfinite(x) else None
                rows.append({"sample": s, "time": t(crossing if crossing is not None else s),
                             "count": 1, "polarity": p, "crossing": crossing})
        elif det == "boxcar":
            for d in m.get("pulses", []):
                s = int(d["start"]) + start
                rows.append({"sample": s, "time": t(s), "count": int(d["width"]),
                             "width": int(d["width"]), "snr": float(d["snr"]),
                             "channel": int(d["channel"]),
                             # start + (width - 1) / 2 with its fraction
                             # (the block's "sample" is rounded down)
                             "centre": s + (int(d["width"]) - 1) / 2.0,
                             "members": int(d["members"])})
        elif det == "spiir":
            for d in m.get("triggers", []):
                s = int(d["sample"]) + start
                tt = float(d["time"])
                # chisq, merger_time: the strain search's (spiir_detect)
                rows.append({"sample": s,
                             "time": None if rate is None else tt + start / rate,
                             "count": 1, "template": int(d["template"]),
                             "snr": float(d["snr"]), "phase": float(d["phase"]),
                             "chisq": None, "merger_time": None})
        else:
            s = int(m["start"]) + start
            e = int(m["end"]) + start
            rows.append({"sample": s, "time": t(s), "count": max(1, e - s), "end": e,
                         "duration": e - s, "peak": int(m["peak"]) + start,
                         "peak_llr": float(m["peak_llr"]), "onset": int(m["onset"]) + start})
    rows.sort(key=lambda r: (r["sample"], r.get("template", 0), r.get("channel", 0)))
    return rows


# --metrics: columns after the edge's, MATLAB's names where it has one; times
# in seconds (in samples without a sample rate), levels in % of the amplitude.
METRIC_COLUMNS = ("risetime", "falltime", "risetime2080", "falltime2080", "slewrate",
                  "overshoot", "undershoot", "preshoot_overshoot", "preshoot_undershoot",
                  "settlingtime", "pulsewidth", "pulseperiod", "dutycycle", "tie",
                  "metric_flags")


def add_metrics(args, rows, metric_msgs, start, rate, stderr):
    """Fill the METRIC_COLUMNS of the edge rows from the block's metrics
    messages; the time-interval error of the --tie-edges transitions against a
    least-squares clock. Returns (TIE RMS, TIE peak-to-peak) in seconds."""
    from gnuradio import transient
    import numpy as np
    scale = 1.0 / rate if rate else 1.0
    if not rate and not args.quiet:
        io_checks.note(stderr, PROG, "no sample rate: metric times are in samples")
    by_sample = {}
    for m in metric_msgs:
        for i, s in enumerate(m["sample"].tolist()):
            by_sample[s + start] = {k: float(v[i]) for k, v in m.items()}
    for r in rows:
        m = by_sample.get(r["sample"])
        rise = r["polarity"] > 0
        for c in METRIC_COLUMNS:
            r[c] = None
        if m is None:
            continue
        r["risetime" if rise else "falltime"] = m["duration"] * scale
        r["risetime2080" if rise else "falltime2080"] = m["duration2"] * scale
        r["slewrate"] = m["slew"] / scale
        for c, k in (("overshoot", "overshoot"), ("undershoot", "undershoot"),
                     ("preshoot_overshoot", "pre_overshoot"),
                     ("preshoot_undershoot", "pre_undershoot"), ("dutycycle", "duty")):
            r[c] = m[k]
        for c, k in (("settlingtime", "settling"), ("pulsewidth", "width"),
                     ("pulseperiod", "period")):
            r[c] = m[k] * scale
        r["metric_flags"] = int(m["flags"])
    want = {"rising": (1, ), "falling": (-1, ), "both": (1, -1)}[args.tie_edges]
    sel = [r for r in rows if r["polarity"] in want]
    times = np.array([r["crossing"] if r["crossing"] is not None else np.nan for r in sel],
                     np.float64)
    try:
        tie, rms, pp = transient.edge_tie(times, args.tie_ui / scale, args.tie_window)
    except ValueError as e:
        raise UsageError("--tie-ui/--tie-window: %s" % e)
    for r, v in zip(sel, tie.tolist()):
        r["tie"] = v * scale
    return rms * scale, pp * scale


def label(det, r):
    if det == "edges":
        return "rising edge" if r["polarity"] > 0 else "falling edge"
    if det == "boxcar":
        return "pulse S/N %.1f" % r["snr"]
    if det == "spiir":
        return "trigger T%d S/N %.1f" % (r["template"], r["snr"])
    return "burst LLR %.1f" % r["peak_llr"]


def to_annotations(det, rows, rec):
    """SigMF annotations of the detections (sample numbers of the dataset)."""
    out = []
    captures = rec.info.get("doc", {}).get("captures", [])
    for r in rows:
        # The band of the capture that holds the detection (complex samples only).
        edges = None
        f = sigmf.frequency_at(captures, r["sample"]) if captures else rec.frequency
        if rec.is_complex and f is not None and rec.rate is not None:
            edges = (f - rec.rate / 2, f + rec.rate / 2)
        a = {"core:sample_start": int(r["sample"]), "core:sample_count": int(r["count"]),
             "core:label": label(det, r), "core:generator": "gr-transient " + PROG,
             "transient:detector": det}
        if r["time"] is not None:
            a["transient:time"] = r["time"]
        for f in FIELDS[det]:
            a["transient:" + f] = _num(r[f])
        if edges is not None:
            a["core:freq_lower_edge"], a["core:freq_upper_edge"] = edges
        out.append(a)
    return out


def detections_from_annotations(anns, det=None):
    """Rows back from annotations written by to_annotations (for checks)."""
    rows = []
    for a in anns:
        if not str(a.get("core:generator", "")).endswith(PROG):
            continue
        if det is not None and a.get("transient:detector") != det:
            continue
        d = a.get("transient:detector")
        r = {"sample": a["core:sample_start"], "time": a.get("transient:time"),
             "count": a.get("core:sample_count")}
        for f in FIELDS.get(d, ()):
            r[f] = a.get("transient:" + f)
        rows.append(r)
    return rows


def csv_bytes(det, rows, extra=()):
    buf = io.StringIO()
    cols = ("sample", "time") + FIELDS[det] + tuple(extra)
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if _num(r[c]) is None else
                    (repr(r[c]) if isinstance(r[c], float) else r[c]) for c in cols])
    return buf.getvalue().encode("utf-8")


def json_bytes(det, rows, rec, params, stats):
    doc = {
        "generator": "gr-transient " + PROG,
        "detector": det,
        "recording": {"path": rec.path, "format": rec.format, "datatype": rec.datatype.text,
                      "samples": rec.nsamples, "sample_rate": rec.rate,
                      "channel": rec.channel_name if rec.channel_name is not None
                      else rec.channel},
        "processed": stats,
        "parameters": params,
        "detections": [{k: _num(v) for k, v in r.items() if k != "count"} for r in rows],
    }
    return (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode("utf-8")


# ---- flowgraph ----------------------------------------------------------------


def make_detector(args, transient, is_complex, vlen, rate):
    det = args.detector
    if det == "edges":
        # Messages only (the output stays unconnected: no copy, no tags), as
        # uniform vectors: no PMT per transition, for recordings with dense ones.
        return transient.edge_localizer_f(args.auto_levels, args.low, args.mid, args.high,
                                          args.tolerance_pct, args.mid_pct, args.hist_bins,
                                          args.level_samples, args.level_interval,
                                          args.backend, args.device, args.batch,
                                          msg_format="vectors", metrics=args.metrics)
    if det == "boxcar":
        make = transient.boxcar_search_cf if is_complex else transient.boxcar_search_ff
        return make(vlen, args.algorithm, args.widths, args.depth, args.layers,
                    args.max_width, args.threshold, args.norm_mode, args.reject_sigma,
                    args.window, args.norm_history, args.baseline_window,
                    args.baseline_mode, args.fixed_mean, args.fixed_sigma,
                    args.cluster_time, args.cluster_chan, args.backend, args.device,
                    args.batch)
    if det == "spiir":
        make = transient.spiir_bank_cc if is_complex else transient.spiir_bank_fc
        return make(args.bank, [], [], [], [], [], rate or 0.0, args.threshold,
                    1024 if args.window is None else args.window, args.multirate,
                    args.backend, args.device, args.batch)
    return transient.kalman_detector_ff(args.M, args.Ns, args.threshold, args.alpha,
                                        args.noise_ar, args.noise_var, args.meas_var,
                                        args.target_ar, args.target_var, args.envelope,
                                        args.env_param, args.model_file, args.backend,
                                        args.device, args.batch)


def make_source(gr, blocks, rec, start, count):
    """A source of `count` samples of rec from `start`: file_source when the
    bytes stream as they are, else a Python block reading and converting chunks."""
    itemsize = (8 if rec.is_complex else 4) * rec.vlen
    if rec.native:
        return blocks.file_source(itemsize, rec.data_path, False,
                                  rec.offset // rec.datatype.sample_bytes + start, count)
    import numpy as np

    class chunk_source(gr.sync_block):

        def __init__(self):
            sig = np.complex64 if rec.is_complex else np.float32
            gr.sync_block.__init__(self, "transient_detect_source", [],
                                   [(sig, rec.vlen) if rec.vlen > 1 else sig])
            self.pos = start
            self.end = start + count
            self.f = open(rec.data_path, "rb")
            self.error = None  # a read error ends the stream; raised after the run

        def work(self, input_items, output_items):
            out = output_items[0]
            n = min(len(out), self.end - self.pos)
            if n > 0:
                try:
                    out[:n] = rec.read(self.pos, n, self.f)
                except (ValueError, OSError) as e:
                    self.error = e
                    n = 0
            if n <= 0:
                self.f.close()
                return -1  # WORK_DONE
            self.pos += n
            return n

    return chunk_source()


def complex_to_real(blocks, how):
    return {"mag": blocks.complex_to_mag, "power": blocks.complex_to_mag_squared,
            "real": blocks.complex_to_real, "imag": blocks.complex_to_imag}[how]()


class Progress(object):

    def __init__(self, total, enabled, stream=sys.stderr):
        self.total, self.enabled, self.stream = max(1, total), enabled, stream
        self.t0 = time.time()
        self.shown = False

    def update(self, done):
        if not self.enabled:
            return
        frac = min(1.0, done / float(self.total))
        width = 30
        fill = int(round(frac * width))
        el = time.time() - self.t0
        rate = done / el if el > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else float("nan")
        self.stream.write("\r[%s%s] %5.1f%% %.3g Msamples/s ETA %s " %
                          ("#" * fill, "." * (width - fill), 100 * frac, rate / 1e6,
                           "%.0f s" % eta if math.isfinite(eta) else "?"))
        self.stream.flush()
        self.shown = True

    def finish(self):
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def run_flowgraph(args, rec, start, count, progress):
    """Stream the recording through the detector; returns (messages, backend,
    seconds, sample rate: the recording's, or for spiir without one the bank's)."""
    from gnuradio import blocks, gr
    import pmt
    from gnuradio import transient

    is_complex = rec.is_complex
    real_only = args.detector in ("edges", "kalman")
    if rec.vlen > 1 and args.detector != "boxcar":
        raise UsageError("%s: %d channels: only boxcar searches all channels; choose one "
                         "with --channel" % (rec.path, rec.vlen))
    conv = None
    if is_complex and real_only:
        if args.complex_to == "error":
            raise UsageError("%s: complex samples; %s needs real ones (--complex-to "
                             "mag|power|real|imag)" % (rec.path, args.detector))
        conv = complex_to_real(blocks, args.complex_to)
        is_complex = False
    try:
        det = make_detector(args, transient, is_complex, rec.vlen, rec.rate)
    except (ValueError, RuntimeError, TypeError) as e:
        raise UsageError("cannot make the %s detector: %s" % (args.detector, e))
    if args.detector == "boxcar" and not args.verbose:
        det.set_log_level("error")  # its end-of-stream warning: run() prints it once
    tb = gr.top_block("transient_detect")
    src = make_source(gr, blocks, rec, start, count)
    chain = [src] + ([conv] if conv is not None else []) + [det]
    tb.connect(*chain)
    sig = det.output_signature()
    nout = sig.min_streams() if args.detector != "boxcar" else 2
    # edge_localizer_f's output is optional: left unconnected (messages only).
    for i in range(0 if args.detector == "edges" else max(1, nout)):
        tb.connect((det, i), blocks.null_sink(sig.sizeof_stream_item(i)))
    store = blocks.message_debug()
    tb.msg_connect((det, "detects"), (store, "store"))

    t0 = time.time()
    watch = io_checks.StreamWatch(rec.data_path, rec.offset + (start + count) * rec.frame_bytes,
                                  count)
    stopped = None
    tb.start()
    waiter = threading.Thread(target=tb.wait, daemon=True)
    waiter.start()
    try:
        while waiter.is_alive():
            waiter.join(0.25)
            progress.update(det.nitems_read(0))
            stopped = waiter.is_alive() and watch.check(det.nitems_read(0))
            if stopped:
                tb.stop()
                waiter.join(5.0)
                break
    except KeyboardInterrupt:
        tb.stop()
        tb.wait()
        progress.finish()
        raise
    progress.update(det.nitems_read(0))
    progress.finish()
    if stopped:
        raise RuntimeError(stopped)
    if getattr(src, "error", None) is not None:
        raise RuntimeError(str(src.error))
    elapsed = time.time() - t0
    # Messages are delivered asynchronously: wait until the count settles.
    last, t_end = -1, time.time() + 1.0
    while time.time() < t_end:
        n = store.num_messages()
        if n == last:
            break
        last = n
        time.sleep(0.02)
    to_python = pmt.to_python
    if args.detector == "edges":
        def to_python(m):
            return transient.metric_arrays(m) if transient.is_metrics(m) else \
                transient.edge_arrays(m)
    msgs = [to_python(store.get_message(i)) for i in range(store.num_messages())]
    if det.nitems_read(0) != count:
        raise RuntimeError("the detector read %d of %d samples" % (det.nitems_read(0), count))
    rate = rec.rate
    if rate is None and args.detector == "spiir":
        rate = det.samp_rate()  # the bank's
    # what the search did differently from its settings (run() prints it)
    warning = det.warning() if args.detector == "boxcar" else ""
    return msgs, det.backend(), elapsed, rate, warning


# ---- outputs ------------------------------------------------------------------


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def plan_sigmf(args, rec):
    """(meta path, data path to create or None) of --sigmf-annotations."""
    if args.in_place:
        if rec.format != "sigmf":
            raise UsageError("--in-place needs SigMF input")
        if args.sigmf_annotations not in (None, "") and \
                not _same_file(args.sigmf_annotations, rec.path):
            raise UsageError("--in-place writes %s; do not name another file" % rec.path)
        return rec.path, None
    meta = args.sigmf_annotations
    if rec.format == "sigmf":
        if not meta:
            meta = sigmf.meta_paths(rec.path)[0][:-len(".sigmf-meta")] + \
                ".transient.sigmf-meta"
        if os.path.exists(meta) and _same_file(meta, rec.path):
            raise UsageError("%s is the input's metadata; use --in-place to add the "
                             "annotations to it" % meta)
    if not meta:
        base = os.path.splitext(rec.path)[0]
        meta = base + ".sigmf-meta"
    if not meta.endswith(".sigmf-meta"):
        raise UsageError("--sigmf-annotations: %r must end in .sigmf-meta" % meta)
    for p in (rec.path, rec.data_path):
        if os.path.exists(meta) and _same_file(meta, p):
            raise UsageError("%s is the input; choose another --sigmf-annotations file" % meta)
    data = None
    if rec.format == "sigrok":
        data = meta[:-len(".sigmf-meta")] + ".sigmf-data"
        if os.path.lexists(data) and not os.path.lexists(meta):
            raise UsageError("%s exists without its metadata; remove it or choose another "
                             "--sigmf-annotations file" % data)
    folder = os.path.dirname(os.path.abspath(io_checks.output_path(meta, "--sigmf-annotations")))
    if rec.format != "sigrok" and not sigmf.dataset_inside(os.path.relpath(rec.data_path,
                                                                           folder)):
        raise UsageError("--sigmf-annotations %s: SigMF metadata must lie in the folder of "
                         "its data (%s)" % (meta, rec.data_path))
    io_checks.merge_meta(meta, sigmf.load_json, lambda d: _describes(d, rec, meta, args))
    return meta, data


def sigmf_doc(args, rec, meta_path, anns):
    """The metadata document to write at meta_path: existing metadata of the
    same recording with the annotations added (this detector's earlier ones
    replaced), else a new one; existing metadata of anything else is refused."""
    folder = os.path.dirname(os.path.abspath(meta_path))
    existing = None if args.in_place else io_checks.merge_meta(
        meta_path, sigmf.load_json, lambda d: _describes(d, rec, meta_path, args))
    if existing is not None:
        doc = existing
        doc["annotations"] = _without_own(doc["annotations"], args.detector)
    elif rec.format == "sigmf":
        import copy
        doc = copy.deepcopy(rec.info["doc"])
        if not args.in_place:
            # A copy under another name: it names the original dataset file.
            doc["global"]["core:dataset"] = os.path.relpath(os.path.abspath(rec.data_path),
                                                            folder)
        if args.in_place:
            doc["annotations"] = _without_own(doc["annotations"], args.detector)
    elif rec.format == "sigrok":
        doc = sigmf.new_meta("rf32_le", rec.rate, description=_sigrok_description(rec))
    else:
        desc = "%s (%s)" % (os.path.basename(rec.path), rec.format)
        doc = sigmf.new_meta(rec.datatype.text, rec.rate,
                             dataset=os.path.relpath(os.path.abspath(rec.data_path), folder),
                             description=desc, header_bytes=rec.offset,
                             num_channels=rec.num_channels)
    doc["global"].setdefault("core:version", sigmf.SIGMF_VERSION)
    return sigmf.add_annotations(doc, anns, extension=SIGMF_EXTENSION)


def _without_own(anns, det):
    """Annotations less this tool's earlier ones of detector det."""
    return [
        a for a in anns if not (str(a.get("core:generator", "")).endswith(PROG) and
                                a.get("transient:detector") == det)
    ]


def _sigrok_description(rec):
    return "%s channel %r (sigrok session)" % (os.path.basename(rec.path), rec.channel_name)


def _describes(doc, rec, meta_path, args):
    """True when existing metadata doc (at meta_path) describes rec's samples:
    its dataset is rec's data file, or for sigrok the channel extracted before."""
    g = doc["global"]
    if rec.format == "sigrok":
        return g.get("core:description") == _sigrok_description(rec) and \
            g.get("core:datatype") == "rf32_le"
    ds = g.get("core:dataset")
    if not isinstance(ds, str) or not sigmf.dataset_inside(ds):
        return False
    return _same_file(os.path.join(os.path.dirname(os.path.abspath(meta_path)), ds),
                      rec.data_path)


def _output_format(args):
    if args.output_format:
        return args.output_format
    if args.output in (None, "-"):
        return "csv"
    ext = os.path.splitext(args.output)[1].lower()
    if ext in (".csv", ".json"):
        return ext[1:]
    raise UsageError("-o %s: give a .csv or .json file or --output-format" % args.output)


def emit(path, data, stdout):
    """Write the bytes data to path, or to stdout for None or '-'."""
    io_checks.emit(path, data, stdout)


def _params(args):
    skip = {"input", "output", "output_format", "sigmf_annotations", "in_place", "progress",
            "quiet", "verbose", "format"}
    return {k: v for k, v in sorted(vars(args).items()) if k not in skip}


def _set_log_level(gr, verbose):
    """Only warnings and errors of GNU Radio's loggers unless verbose."""
    if verbose:
        return
    try:
        gr.logging().set_default_level(gr.log_levels.warn)
    except Exception:  # pragma: no cover - older GNU Radio
        pass


def _edges_advice(args, rec, start, count):
    """Check the edges settings before the run (UsageError beyond a ceiling)
    and return f(detections) -> warnings about the levels and the data."""
    if args.detector != "edges":
        return lambda n: []
    for text in run_advice.edges_limits(args.auto_levels, args.level_samples, args.hist_bins,
                                        args.level_interval, io_checks.MAX_LEVEL_SAMPLES,
                                        io_checks.MAX_HIST_BINS):
        raise UsageError(text)
    rng = None if args.auto_levels else run_advice.data_range(rec, start, count,
                                                             args.complex_to)
    levels = (args.low, args.mid, args.high)
    return lambda n: run_advice.edges_level_advice(levels, args.auto_levels, rng, n)


def run(argv=None, stdout=None, stderr=None):
    """The tool; returns the exit status (raises nothing for usage/input errors)."""
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    rec = None
    try:
        args = build_parser().parse_args(argv)
        if args.detector == "frb":
            return _import_frb().run(args, stdout, stderr, PROG, sigmf, recordings, _app_dir())
        if args.detector == "spiir" and args.bank is not None and (
                args.template is not None or args.approximant is not None):
            raise UsageError("give either --bank or a template to design one from, not both")
        if args.detector == "spiir" and args.bank is None:
            _output_format(args)
            if args.output is not None:
                io_checks.output_path(args.output)
            return _import_spiir_detect().run(args, stdout, stderr, sys.modules[__name__])
        fmt = _output_format(args)
        if args.output is not None:
            io_checks.output_path(args.output)
        if args.in_place and args.sigmf_annotations is None:
            args.sigmf_annotations = ""
        try:
            rec = recordings.open_recording(args.input, args.format, rate=args.rate,
                                            channel=args.channel,
                                            allow_all_channels=args.detector == "boxcar")
        except (ValueError, OSError) as e:
            raise UsageError(str(e) if isinstance(e, ValueError) else "%s: %s" % (
                getattr(e, "filename", None) or args.input, e.strerror or e))
        if (args.detector == "boxcar" and rec.format == "sigproc" and rec.num_channels > 1
                and args.channel is None):
            raise UsageError("%s is a filterbank of %d frequency channels: boxcar would "
                             "search each channel on its own and miss dispersed pulses; "
                             "use 'transient-detect frb %s' (dedispersion, then the boxcar "
                             "search over DM trials)" % (rec.path, rec.num_channels, rec.path))
        if args.output not in (None, "-") and (_same_file(args.output, rec.path) or
                                               _same_file(args.output, rec.data_path)):
            raise UsageError("-o %s is the input" % args.output)
        sig = plan_sigmf(args, rec) if args.sigmf_annotations is not None else None
        start = args.start
        if start > rec.nsamples:
            raise UsageError("--start %d is beyond the %d samples of %s" %
                             (start, rec.nsamples, rec.path))
        count = rec.nsamples - start
        if args.samples:
            count = min(count, args.samples)
        if count == 0:
            raise UsageError("%s: no samples to process" % rec.path)
        advice = _edges_advice(args, rec, start, count)

        from gnuradio import gr
        _set_log_level(gr, args.verbose)
        show = not args.quiet and (args.progress or stderr.isatty())
        msgs, backend, elapsed, rate, warning = run_flowgraph(
            args, rec, start, count, Progress(count, show, stderr))
        if warning:
            stderr.write("%s: warning: %s: %s\n" % (PROG, args.detector, warning))
        if rec.rate is None and rate is not None:
            rec.rate = rate
        metric_msgs = [m for m in msgs if "duration" in m]
        msgs = [m for m in msgs if "duration" not in m]
        rows = to_detections(args.detector, msgs, start, rec.rate)
        tie = add_metrics(args, rows, metric_msgs, start, rec.rate, stderr) \
            if args.detector == "edges" and args.metrics else None
        for text in advice(len(rows)) if not args.quiet else ():
            io_checks.note(stderr, PROG, text)

        stats = {"start": start, "samples": count, "seconds": None if rec.rate is None
                 else count / rec.rate, "backend": backend, "detections": len(rows)}
        if tie is not None:
            stats["tie_rms"], stats["tie_pk_pk"] = _num(tie[0]), _num(tie[1])
        outputs = []
        if args.output is not None or sig is None:
            data = csv_bytes(args.detector, rows, METRIC_COLUMNS if tie else ()) \
                if fmt == "csv" else \
                json_bytes(args.detector, rows, rec, _params(args), stats)
            outputs.append((args.output, data))
        if sig is not None:
            meta, data_file = sig
            doc = sigmf_doc(args, rec, meta, to_annotations(args.detector, rows, rec))
            if data_file is not None and os.path.exists(meta):
                data_file = None  # sigrok, merged: the dataset was extracted before
            if data_file is not None:  # sigrok: the extracted channel as the dataset
                folder = os.path.dirname(os.path.abspath(data_file))
                with tempfiles.temporary(folder, ".transient-detect-") as tmp:
                    shutil.copyfile(rec.data_path, tmp)
                    os.chmod(tmp, 0o644)
                    os.replace(tmp, data_file)
            io_checks.write_output(meta, sigmf.serialize(doc))
        for path, data in outputs:
            emit(path, data, stdout)
        if not args.quiet:
            what = "%d samples" % count
            if rec.rate is not None:
                what += " (%.6g s at %.6g Hz)" % (count / rec.rate, rec.rate)
            else:
                what += " (no sample rate: times left empty; give --rate)"
            extra = ", SigMF annotations in %s" % sig[0] if sig is not None else ""
            stderr.write("%s: %s: %d detections in %s of %s, backend %s, %.2f s%s\n" %
                         (PROG, args.detector, len(rows), what, rec.path, backend, elapsed,
                          extra))
        return 0
    except UsageError as e:
        stderr.write("%s: error: %s\n" % (PROG, e))
        return 2
    except KeyboardInterrupt as e:
        stderr.write("%s: interrupted; nothing written\n" % PROG)
        return getattr(e, "status", 130)
    except (io_checks.InputError, io_checks.OutputError) as e:
        stderr.write("%s: error: %s\n" % (PROG, e))
        return 2
    except (RuntimeError, ValueError, OSError) as e:
        stderr.write("%s: error: %s\n" % (PROG, e))
        return 1
    finally:
        if rec is not None:
            rec.close()


def main(argv=None):
    io_checks.exit_on_signals()
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
