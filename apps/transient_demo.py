#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gr-transient demo, headless: every detector in GNU Radio flow graphs against
known truth and the real recordings, one table of the results.

The flow graphs are the GNU Radio Companion files share/gr-transient/examples/demo_*.grc. The demo
compiles them with grcc into a temporary directory, imports the generated top
blocks, runs them with its options as the flow graphs' parameters and reads
their sinks (vector sinks keep the stream tags, message debug blocks the
"detects" messages):

  demo_edges.grc   edge localizer: (a) a synthetic pulse train with ringing,
                   runts and oscillating edges (truth: the mid crossings of the
                   transitions); (b) the SDA line of the I2C recording
                   share/gr-transient/examples/data/i2c_sda_analog_8MHz.sr against the logic
                   analyzer probe that sampled the same wire.
  demo_boxcar.grc  boxcar search: (c) FRB-like pulses (Gaussian, some scattered,
                   S/N 9 to 25, widths 2 to 128 samples) in 4 trials of white
                   noise; (d) PSR J1807-0847 in share/gr-transient/examples/data/GBT_J1807-0847.dat:
                   one pulse per period, the period fitted to them against the
                   period found by folding.
  demo_spiir.grc   SPIIR bank: (e) one chirp of a designed 4-template bank in
                   white noise: the loudest trigger must name the template, at
                   the injected sample, with the expected SNR.
  demo_kalman.grc  Kalman bank: (f) Gaussian bursts in coloured noise: hits
                   against the onsets, and no fewer than an energy detector at
                   the same false-alarm count.

The signals and the truth come from gnuradio.transient.demo_signals, the
checks from gnuradio.transient.demo_score. The table has, per detector and
source, the injected (or expected) events, the detections, hits, misses, false
alarms, a quality figure and the backend each block actually used.

Other sources, without truth (a table of the detections of each detector):
  --source file --file PATH --format float32|complex64   (demo_file.grc)
  --source sdr --freq HZ --rate SPS --gain DB            (demo_sdr.grc, gr-osmosdr)

The backend (--backend auto|cpu|cuda) is passed to every block: auto uses CUDA
when a GPU is usable, else the CPU. Exit status 1 if a detection fails badly,
2 on a setup error.
"""

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRUTH_GRAPHS = ("edges", "boxcar", "spiir", "kalman")


class SetupError(Exception):
    pass


def examples_dir(given=None):
    """The directory of the demo_*.grc files: --examples, the source tree's
    examples/, else the installed share/gr-transient/examples."""
    cands = [given] if given else [
        os.path.join(HERE, os.pardir, "examples"),
        os.path.join(HERE, os.pardir, "share", "gr-transient", "examples"),
        os.path.join(sys.prefix, "share", "gr-transient", "examples"),
        "/usr/local/share/gr-transient/examples",
        "/usr/share/gr-transient/examples",
    ]
    for c in cands:
        if os.path.exists(os.path.join(c, "demo_edges.grc")):
            return os.path.normpath(c)
    raise SetupError("the demo flow graphs (demo_*.grc) are not in %s" % ", ".join(cands))


def compile_graphs(names, src_dir, out_dir):
    """grcc examples/demo_<name>.grc -> out_dir/demo_<name>.py; the generated
    modules, imported."""
    grcc = shutil.which("grcc")
    if grcc is None:
        raise SetupError("grcc (GNU Radio Companion's compiler) not found on PATH")
    files = [os.path.join(src_dir, "demo_%s.grc" % n) for n in names]
    p = subprocess.run([grcc, "-o", out_dir] + files, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    missing = [n for n in names if not os.path.exists(os.path.join(out_dir, "demo_%s.py" % n))]
    if p.returncode != 0 or missing or "Error" in p.stdout:
        raise SetupError("grcc failed on %s:\n%s" % (", ".join(files), p.stdout))
    sys.path.insert(0, out_dir)
    return {n: importlib.import_module("demo_%s" % n) for n in names}


def make(mod, name, **params):
    """An instance of the generated top block (blocks refuse bad settings)."""
    try:
        return getattr(mod, "demo_%s" % name)(**params)
    except FileNotFoundError as e:
        raise SetupError("%s (give the path, or --no-recording)" % e)
    except (RuntimeError, ValueError, KeyError, OSError) as e:
        raise SetupError("cannot create demo_%s (backend %s): %s" %
                         (name, params.get("backend"), e))


def run_truth(args, mods, ds, score):
    """The four flow graphs with known truth: (rows, seconds per graph)."""
    rec = "" if args.no_recording else (args.recording or "default")
    pulsar = "" if args.no_recording else (args.pulsar or "default")
    params = {
        "edges": dict(samples=args.samples, recording=rec),
        "boxcar": dict(samples=args.frb_samples, threshold=args.boxcar_threshold,
                       recording=pulsar),
        "spiir": dict(multirate=int(args.multirate)),
        "kalman": dict(samples=args.kalman_samples),
    }
    rows, times = [], {}
    for name in args.detectors:
        t0 = time.time()
        tb = make(mods[name], name, backend=args.backend, seed=args.seed, **params[name])
        t1 = time.time()
        tb.run()
        times[name] = (t1 - t0, time.time() - t1)
        rows += score.score(tb, name)
    return rows, times


def describe(args, ds):
    """A few lines on what the flow graphs stream."""
    lines = []
    rec = not args.no_recording
    if "edges" in args.detectors:
        lines.append("edges:  synthetic pulse train, %d samples (3.3 V logic, noise %d mV, "
                     "ringing, runts, oscillating edges)%s" %
                     (args.samples, 1000 * ds.SYNTH_NOISE,
                      "; I2C recording " + (args.recording or ds.RECORDING_NAME) if rec else ""))
    if "boxcar" in args.detectors:
        lines.append("boxcar: FRB-like pulses in %d x %d samples of white noise, S/N 9..25, "
                     "threshold %g%s" %
                     (ds.FRB_CHANNELS, args.frb_samples, args.boxcar_threshold,
                      "; pulsar recording " + (args.pulsar or ds.PULSAR_NAME) if rec else ""))
    if "spiir" in args.detectors:
        lines.append("spiir:  template %d of %d Newtonian chirps, amplitude %g, in %g s of "
                     "white noise at %g Hz (%s)" %
                     (ds.SPIIR_INJECT, len(ds.SPIIR_DURATIONS), ds.SPIIR_SNR, ds.SPIIR_SECONDS,
                      ds.SPIIR_RATE, "multirate" if args.multirate else "single rate"))
    if "kalman" in args.detectors:
        lines.append("kalman: Gaussian bursts (AR(2), %d samples) in AR(2) noise + white "
                     "noise, %d samples, threshold %g" %
                     (ds.KALMAN_M - 1, args.kalman_samples, ds.KALMAN_THRESHOLD))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="gr-transient demo: the flow graphs share/gr-transient/examples/demo_*.grc (compiled with "
        "grcc) stream synthetic data with known injections and real recordings through the "
        "four detectors and print one table of detections against the truth.")
    from gnuradio.transient import __version__
    ap.add_argument("--version", action="version", version="%(prog)s " + __version__)
    ap.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto",
                    help="backend of every block (default: auto = CUDA if usable, else CPU)")
    ap.add_argument("--source", choices=("synthetic", "file", "sdr"), default="synthetic",
                    help="synthetic injections and the recordings (default, with truth), a "
                    "raw file, or an SDR through gr-osmosdr")
    g = ap.add_argument_group("synthetic source")
    g.add_argument("--detectors", default=",".join(TRUTH_GRAPHS),
                   help="comma-separated subset of %s" % ",".join(TRUTH_GRAPHS))
    g.add_argument("--seed", type=int, default=1, help="seed of the synthetic signals")
    g.add_argument("--samples", type=int, default=2_000_000,
                   help="length of the synthetic pulse train (edges; default 2,000,000)")
    g.add_argument("--frb-samples", type=int, default=262144,
                   help="samples per trial of the FRB-like field (default 262144)")
    g.add_argument("--boxcar-threshold", type=float, default=7.0,
                   help="S/N threshold of the FRB-like search (default 7)")
    g.add_argument("--kalman-samples", type=int, default=400_000,
                   help="length of the Kalman bursts stream (default 400,000)")
    g.add_argument("--multirate", action="store_true",
                   help="SPIIR: run each filter at its level's rate")
    g.add_argument("--recording", default=None,
                   help="sigrok session file for edges (default: share/gr-transient/examples/data/"
                   "i2c_sda_analog_8MHz.sr)")
    g.add_argument("--pulsar", default=None,
                   help="pulsar time series, .tim or .dat (default: share/gr-transient/examples/data/"
                   "GBT_J1807-0847.dat)")
    g.add_argument("--no-recording", action="store_true", help="synthetic signals only")
    g = ap.add_argument_group("file source (--source file)")
    g.add_argument("--file", help="raw samples, no header")
    g.add_argument("--format", choices=("float32", "complex64"), default="float32",
                   help="sample format (default float32; complex: |z| for edges, SPIIR and "
                   "Kalman, |z|^2 for the boxcar search)")
    g.add_argument("--offset", type=int, default=0, help="samples to skip")
    g.add_argument("--count", type=int, default=0, help="samples to read (0: all)")
    g = ap.add_argument_group("SDR source (--source sdr, needs gr-osmosdr)")
    g.add_argument("--freq", type=float, default=100e6, help="centre frequency, Hz")
    g.add_argument("--rate", type=float, default=2e6, help="sample rate, S/s")
    g.add_argument("--gain", type=float, default=20.0, help="RF gain, dB")
    g.add_argument("--device-args", default="", help="osmosdr device arguments, e.g. rtl=0")
    g.add_argument("--capture", type=int, default=4_000_000,
                   help="samples to capture (default 4,000,000)")
    g.add_argument("--threshold", type=float, default=None,
                   help="boxcar S/N threshold for file/SDR sources (default 8 for a file, 20 "
                   "for |z|^2 of an SDR)")
    ap.add_argument("--examples", default=None,
                    help="directory of the demo_*.grc files (default: the source tree's or "
                    "the installed examples)")
    ap.add_argument("--keep", default=None,
                    help="write the generated Python flow graphs here instead of a "
                    "temporary directory")
    args = ap.parse_args(argv)
    args.detectors = [d.strip() for d in args.detectors.split(",") if d.strip()]
    for d in args.detectors:
        if d not in TRUTH_GRAPHS:
            ap.error("unknown detector %r (have %s)" % (d, ", ".join(TRUTH_GRAPHS)))
    if args.frb_samples < 4 * 8192:
        ap.error("--frb-samples must be at least %d" % (4 * 8192))
    if args.samples < 100_000:
        ap.error("--samples must be at least 100000")
    if args.kalman_samples < 20_000:
        ap.error("--kalman-samples must be at least 20000")
    if args.source == "file" and not args.file:
        ap.error("--source file needs --file")
    t_start = time.time()

    try:
        from gnuradio import gr  # noqa: F401
        from gnuradio import transient  # noqa: F401
        from gnuradio.transient import demo_signals as ds
        from gnuradio.transient import demo_score as score
    except ImportError as e:
        sys.stderr.write("transient_demo: %s\n(needs GNU Radio 3.10 and gr-transient "
                         "installed, or PYTHONPATH pointing at the build tree)\n" % e)
        return 2

    tmp = None
    try:
        src_dir = examples_dir(args.examples)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            out_dir = args.keep
        else:
            tmp = tempfile.TemporaryDirectory(prefix="transient_demo_")
            out_dir = tmp.name
        print("gr-transient demo: flow graphs %s/demo_*.grc, backend %s" %
              (src_dir, args.backend))

        if args.source == "sdr":
            try:
                import osmosdr  # noqa: F401
            except ImportError:
                raise SetupError("--source sdr needs gr-osmosdr (Debian: apt-get install "
                                 "gr-osmosdr), which is not installed")
            mods = compile_graphs(["sdr"], src_dir, out_dir)
            tb = make(mods["sdr"], "sdr", backend=args.backend, freq=args.freq, rate=args.rate,
                      gain=args.gain, args=args.device_args, samples=args.capture,
                      threshold=20.0 if args.threshold is None else args.threshold)
            label = "SDR %.6g MHz, %.6g MS/s, gain %g dB, %d samples" % (
                args.freq / 1e6, args.rate / 1e6, args.gain, args.capture)
        elif args.source == "file":
            if not os.path.isfile(args.file):
                raise SetupError("%s: no such file" % args.file)
            mods = compile_graphs(["file"], src_dir, out_dir)
            tb = make(mods["file"], "file", backend=args.backend, file=args.file,
                      fmt=args.format, offset=args.offset, count=args.count,
                      threshold=8.0 if args.threshold is None else args.threshold)
            label = "%s (%s)" % (os.path.basename(args.file), args.format)
        else:
            tb = None
            mods = compile_graphs(args.detectors, src_dir, out_dir)
        t_compiled = time.time()

        if tb is not None:
            t = time.time()
            tb.run()
            t_run = time.time() - t
            rows = score.detections(tb)
            print("source: %s (no truth: detections only)" % label)
            print()
            score.print_table(rows, truth=False)
            print()
            print("grcc %.2f s, flow graph %.2f s, total %.2f s" %
                  (t_compiled - t_start, t_run, time.time() - t_start))
            return 0

        rows, times = run_truth(args, mods, ds, score)
    except SetupError as e:
        sys.stderr.write("transient_demo: %s\n" % e)
        return 2
    finally:
        if tmp is not None:
            tmp.cleanup()

    print()
    for line in describe(args, ds):
        print("  " + line)
    print()
    score.print_table(rows)
    failures = [f for r in rows for f in r["failures"]]
    print()
    print("grcc %.2f s; signals + set-up / run per flow graph: %s; total %.2f s" %
          (t_compiled - t_start, ", ".join("%s %.2f / %.2f s" % (k, a, b)
                                           for k, (a, b) in times.items()),
           time.time() - t_start))
    for f in failures:
        print("FAIL: " + f)
    print("demo: %s" % ("FAIL" if failures else "PASS: every detector found the injected "
                        "events"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
