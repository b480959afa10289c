#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""transient-kalman-fit: fit the Kalman-bank detector's models (noise AR,
burst AR, envelope, onset prior alpha) from a recording and write the model
file transient-detect kalman --model-file and kalman_detector_ff load.

    transient-kalman-fit INPUT -o MODEL --noise A:B [--noise ...] --signal A:B ...
    transient-kalman-fit INPUT -o MODEL --labels bursts.csv

INPUT is any recording transient-detect reads (raw float32/complex64,
SigMF, sigrok, SIGPROC, PRESTO). Signal ranges are bursts from their onsets
(or a CSV of start,stop per line); noise ranges are noise only (default with
--labels: the gaps between the bursts, M samples after each burst left out).
Ranges are in samples, or in seconds with --units seconds.

A fraction of the signal ranges and of the noise samples (the last ones in
time, --holdout) is held back from the fit; the program prints the fitted
orders, coefficients with standard errors, and the detection probability of
the fitted detector on the held-back data (at the fitted alpha and at
--roc-alpha) beside the energy detector's at 1e-2, 1e-3 and 1e-4 false alarms
per sample.

Exit status: 0 on success, 2 on a usage or input error (one line on stderr,
nothing written), 1 when the fit or the detector fails. An existing MODEL is
not replaced unless --force. See share/doc/gr-transient/kalman.md.
"""

import argparse
import csv
import math
import os
import sys

import numpy as np

PROG = "transient-kalman-fit"
# Most samples read from a recording (float32, and float64 copies in the fit).
MAX_SAMPLES = 1 << 27


def _package():
    from gnuradio.transient import (io_checks, kalman_ar, kalman_fit, kalman_roc,
                                    recordings, tempfiles)
    return io_checks, kalman_ar, kalman_fit, kalman_roc, recordings, tempfiles


io_checks, kalman_ar, kalman_fit, kalman_roc, recordings, tempfiles = _package()


def _version():
    try:
        from gnuradio.transient import __version__
        return __version__
    except ImportError:
        return "unknown"


class UsageError(Exception):
    """A problem with the options or the input: exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message):
        raise UsageError(message)


def _range(text):
    parts = text.split(":")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError("expected START:STOP, got %r" % text)
    try:
        a, b = float(parts[0]), float(parts[1])
    except ValueError:
        raise argparse.ArgumentTypeError("expected START:STOP numbers, got %r" % text)
    if not (math.isfinite(a) and math.isfinite(b) and 0 <= a < b):
        raise argparse.ArgumentTypeError("need 0 <= START < STOP, got %r" % text)
    return (a, b)


def _number(kind, lo, hi, text):
    try:
        v = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number, got %r" % text)
    if not (lo <= v <= hi):
        raise argparse.ArgumentTypeError("must lie in [%g, %g], got %r" % (lo, hi, text))
    return v


def build_parser():
    p = _Parser(prog=PROG, description="Fit the Kalman-bank detector's models from a "
                "recording and write its model file (share/doc/gr-transient/kalman.md).")
    p.add_argument("--version", action="version", version=PROG + " " + _version())
    p.add_argument("input", help="the recording")
    p.add_argument("-o", "--output", required=True, help="model file to write")
    p.add_argument("--force", action="store_true", help="replace an existing output")
    g = p.add_argument_group("input")
    g.add_argument("--format", default="auto", choices=("auto", ) + recordings.FORMATS,
                   help="input format (default: from the suffix or the first bytes)")
    g.add_argument("--rate", type=lambda t: _number(float, 1e-300, math.inf, t),
                   help="sample rate in Hz (raw files; overrides the file's)")
    g.add_argument("--channel", help="channel of a multi-channel or sigrok recording")
    g.add_argument("--complex-to", choices=("error", "mag", "power", "real", "imag"),
                   default="error", help="complex input: |z|, |z|^2, Re or Im "
                   "(default: refuse)")
    g = p.add_argument_group("segments")
    g.add_argument("--noise", type=_range, action="append", default=[],
                   metavar="START:STOP", help="a noise-only range (repeatable)")
    g.add_argument("--signal", type=_range, action="append", default=[],
                   metavar="START:STOP", help="a burst, from its onset (repeatable)")
    g.add_argument("--labels", help="CSV file of bursts, start,stop per line (a header "
                   "line is allowed)")
    g.add_argument("--units", choices=("samples", "seconds"), default="samples",
                   help="units of the ranges and labels (default samples)")
    g = p.add_argument_group("model")
    g.add_argument("--M", type=lambda t: _number(int, 3, 1 << 24, t),
                   help="hypotheses; bursts last M-1 samples (default: median burst "
                   "length + 1)")
    g.add_argument("--alpha", type=lambda t: _number(float, 1e-300, 1.0 - 1e-16, t),
                   help="onset prior per sample (default: bursts per sample)")
    g.add_argument("--max-order", type=lambda t: _number(int, 1, 32, t), default=8,
                   help="highest AR order tried (8)")
    g.add_argument("--criterion", choices=kalman_ar.CRITERIA, default="bic",
                   help="order selection (bic)")
    g.add_argument("--method", choices=kalman_ar.METHODS, default="auto",
                   help="noise AR fit: auto = Burg below %d samples, else Yule-Walker" %
                   kalman_ar.BURG_BELOW)
    g.add_argument("--envelope", choices=kalman_fit.ENVELOPES, default="auto",
                   help="burst envelope (auto: the family that fits best by BIC)")
    g.add_argument("--env-param", type=lambda t: _number(float, 1e-300, math.inf, t),
                   help="exp/gauss envelope parameter in samples (default: fitted)")
    g.add_argument("--max-root", type=lambda t: _number(float, 0.5, 0.999999, t),
                   default=kalman_ar.MAX_ROOT,
                   help="largest AR root radius kept (%g)" % kalman_ar.MAX_ROOT)
    g = p.add_argument_group("evaluation")
    g.add_argument("--holdout", type=lambda t: _number(float, 0.0, 0.9, t), default=0.25,
                   help="fraction of the bursts and noise held back for the ROC, 0 = no "
                   "ROC (0.25)")
    g.add_argument("--roc-alpha", type=lambda t: _number(float, 1e-300, 1.0 - 1e-16, t),
                   default=1e-9, help="the ROC's second alpha, beside the fitted one "
                   "(1e-9, the detector's default)")
    g.add_argument("--Ns", type=lambda t: _number(int, 1, 1 << 24, t),
                   help="present hypotheses of the ROC's detector and the energy "
                   "detector's window (default (M-1)//3)")
    return p


def _to_samples(r, units, rate, path):
    if units == "seconds":
        if rate is None:
            raise UsageError("%s has no sample rate; give --rate to use seconds" % path)
        return (int(round(r[0] * rate)), int(round(r[1] * rate)))
    if r[0] != int(r[0]) or r[1] != int(r[1]):
        raise UsageError("range %g:%g is not in whole samples (--units seconds?)" % r)
    return (int(r[0]), int(r[1]))


def read_labels(path):
    """(start, stop) pairs of a CSV file; UsageError naming the file and line."""
    io_checks.input_file(path, "labels")
    out = []
    with open(path, newline="") as f:
        for i, row in enumerate(csv.reader(f)):
            if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            try:
                out.append(_range("%s:%s" % (row[0].strip(), row[1].strip())))
            except (IndexError, argparse.ArgumentTypeError) as e:
                if i == 0 and not out:
                    continue  # a header line
                raise UsageError("%s:%d: %s" % (path, i + 1, e if isinstance(
                    e, argparse.ArgumentTypeError) else "expected start,stop"))
    if not out:
        raise UsageError("%s: no bursts (start,stop lines)" % path)
    return out


def gaps(bursts, n, guard):
    """The ranges of [0, n) outside the bursts and `guard` samples after each."""
    out, pos = [], 0
    for a, b in sorted(bursts):
        if a > pos:
            out.append((pos, a))
        pos = max(pos, b + guard)
    if pos < n:
        out.append((pos, n))
    return out


def split(signal, noise, fraction):
    """Training and held-back parts: the last `fraction` of the signal ranges
    and of the noise samples, in time order."""
    signal = sorted(signal)
    k = int(math.ceil(fraction * len(signal))) if fraction > 0 else 0
    train_s, held_s = signal[:len(signal) - k], signal[len(signal) - k:]
    total = sum(b - a for a, b in noise)
    keep = total - int(round(fraction * total))
    train_n, held_n, seen = [], [], 0
    for a, b in sorted(noise):
        cut = a + max(0, min(b - a, keep - seen))
        if cut > a:
            train_n.append((a, cut))
        if cut < b:
            held_n.append((cut, b))
        seen += b - a
    return train_s, held_s, train_n, held_n


def _signal_input(rec, how, start, count):
    x = rec.read(start, count)
    if rec.is_complex:
        if how == "error":
            raise UsageError("%s is complex; the Kalman detector takes real samples "
                             "(--complex-to mag, power, real or imag)" % rec.path)
        x = {"mag": np.abs, "power": lambda z: np.abs(z)**2, "real": np.real,
             "imag": np.imag}[how](x)
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 1:
        raise UsageError("%s has %d channels; choose one with --channel" %
                         (rec.path, x.shape[1]))
    return x


def evaluate(x, model_path, fit, held_s, held_n, all_bursts, Ns, alphas):
    """ROC rows on the held-back data (pfa, then the Kalman detector's pd and
    LLR threshold at each alpha, then the energy detector's pd), and the
    number of held-back noise samples."""
    lo = max(0, min([a for a, _ in held_s] + [a for a, _ in held_n]) - 10 * fit.M)
    hi = max([b for _, b in held_s] + [b for _, b in held_n])
    seg = x[lo:hi]
    mask = np.zeros(hi - lo, dtype=bool)
    for a, b in held_n:
        mask[a - lo:b - lo] = True
    mask &= kalman_roc.noise_mask(hi - lo, [(a - lo, b - lo) for a, b in all_bursts],
                                  fit.M, start=fit.M)
    bursts = [(a - lo, b - lo) for a, b in held_s]
    cols = [kalman_roc.PFA]
    for alpha in alphas:
        cols.extend(kalman_roc.roc(kalman_roc.detector_llr(seg, model_path, Ns, alpha),
                                   bursts, mask))
    cols.append(kalman_roc.roc(kalman_roc.energy_statistic(seg, Ns), bursts, mask)[0])
    return list(zip(*cols)), int(mask.sum())


def _pd(v):
    return "n/a" if not np.isfinite(v) else "%.3f" % v


def _pd_thr(pd, thr):
    return "n/a" if not np.isfinite(pd) else "%.3f (%.4g)" % (pd, thr)


def run(argv=None, stdout=None, stderr=None):
    """The tool; returns the exit status."""
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    rec = None
    try:
        args = build_parser().parse_args(argv)
        if os.path.lexists(args.output) and not args.force:
            raise UsageError("%s exists; give --force to replace it" % args.output)
        out = io_checks.output_path(args.output)
        if not args.signal and not args.labels:
            raise UsageError("no bursts: give --signal ranges or --labels")
        if args.signal and args.labels:
            raise UsageError("give --signal ranges or --labels, not both")
        try:
            rec = recordings.open_recording(args.input, args.format, rate=args.rate,
                                            channel=args.channel)
        except (ValueError, OSError) as e:
            raise UsageError(str(e) if isinstance(e, ValueError) else "%s: %s" % (
                getattr(e, "filename", None) or args.input, e.strerror or e))
        raw = read_labels(args.labels) if args.labels else args.signal
        signal = [_to_samples(r, args.units, rec.rate, rec.path) for r in raw]
        noise = [_to_samples(r, args.units, rec.rate, rec.path) for r in args.noise]
        n = rec.nsamples
        for what, rs in (("signal", signal), ("noise", noise)):
            for a, b in rs:
                if not 0 <= a < b <= n:
                    raise UsageError("%s range %d:%d lies outside the %d samples of %s" %
                                     (what, a, b, n, rec.path))
        M = args.M or int(np.median([b - a for a, b in signal])) + 1
        if M < 3:
            raise UsageError("%s: bursts of %d samples; M must be >= 3 (--M)" %
                             (args.labels or "--signal", M - 1))
        if not noise:
            if not args.labels:
                raise UsageError("no noise: give --noise ranges")
            noise = gaps(signal, n, M)
        try:
            kalman_fit.check_disjoint(noise, signal)
        except ValueError as e:
            raise UsageError("%s: %s" % (rec.path, e))
        # only the stretch the ranges cover is read (with the detector's
        # warm-up before the first), positions relative to its start
        lo = max(0, min(a for a, _ in signal + noise) - 10 * M)
        hi = min(n, max([b for _, b in signal + noise] + [a + M - 1 for a, _ in signal]))
        if hi - lo > MAX_SAMPLES:
            raise UsageError("the ranges span %d samples of %s; at most %d are read (give "
                             "--noise ranges near the bursts, or fewer bursts)" %
                             (hi - lo, rec.path, MAX_SAMPLES))
        x = _signal_input(rec, args.complex_to, lo, hi - lo)
        signal = [(a - lo, b - lo) for a, b in signal]
        noise = [(a - lo, b - lo) for a, b in noise]
        train_s, held_s, train_n, held_n = split(signal, noise, args.holdout)
        if not train_s:
            raise UsageError("%d signal range(s), all held back for the ROC: none left for "
                             "the fit (more ranges, or --holdout 0)" % len(signal))
        try:
            fit = kalman_fit.fit_models(x, train_n, train_s, M=M, alpha=args.alpha or
                                        len(signal) / float(n), max_order=args.max_order,
                                        criterion=args.criterion, method=args.method,
                                        envelope=args.envelope, env_param=args.env_param,
                                        max_root=args.max_root)
        except ValueError as e:
            raise UsageError("%s: %s" % (rec.path, e))
        with tempfiles.temporary(os.path.dirname(os.path.abspath(out)),
                                 ".transient-kalman-fit-") as tmp:
            fit.save(tmp)
            Ns = args.Ns or max(1, (M - 1) // 3)
            if Ns >= M:
                raise UsageError("--Ns %d must be below M = %d" % (Ns, M))
            w = stdout.write
            w("%s: %d samples%s, %d bursts (%d fitted, %d held back), %d noise samples "
              "fitted\n" % (rec.path, n, "" if rec.rate is None else " at %.6g Hz" % rec.rate,
                            len(signal), len(train_s), len(held_s),
                            sum(b - a for a, b in train_n)))
            w(fit.summary() + "\n")
            if held_s and held_n:
                alphas = (fit.alpha, args.roc_alpha)
                rows, nn = evaluate(x, tmp, fit, held_s, held_n, signal, Ns, alphas)
                w("held-back data: %d bursts, %d noise samples; detector Ns = %d; probability of "
                  "detection (LLR threshold)\n" % (len(held_s), nn, Ns))
                w("  false alarms/sample  kalman, alpha %-10.3g  kalman, alpha %-10.3g  energy\n"
                  % alphas)
                for r in rows:
                    w("  %-19.0e  %-24s  %-24s  %s\n" % (r[0], _pd_thr(r[1], r[2]),
                                                       _pd_thr(r[3], r[4]), _pd(r[5])))
                if any(not np.isfinite(r[1]) for r in rows):
                    io_checks.note(stderr, PROG, "n/a: fewer than 1/rate held-back noise samples "
                                   "(%d); more noise or a larger --holdout" % nn)
            elif args.holdout > 0:
                io_checks.note(stderr, PROG, "no ROC: nothing held back (%d bursts, %d noise "
                               "ranges)" % (len(signal), len(noise)))
            os.chmod(tmp, 0o644)
            os.replace(tmp, out)
        w("model written to %s (transient-detect kalman %s --model-file %s --Ns %d "
          "--alpha %.6g)\n" % (args.output, args.input, args.output, Ns, fit.alpha))
        return 0
    except (KeyboardInterrupt, UsageError, RuntimeError, ValueError, OSError) as e:
        return io_checks.fail(e, PROG, stderr, (UsageError, ))
    finally:
        if rec is not None:
            rec.close()


if __name__ == "__main__":
    io_checks.exit_on_signals()  # SIGTERM, SIGHUP: the clean-up of Ctrl-C
    sys.exit(run())
