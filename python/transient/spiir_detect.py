#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""``transient-detect spiir STRAIN --template FILE`` (or ``--approximant NAME
--m1 M1 --m2 M2``; the options are transient-detect's): a SPIIR search of gravitational-wave strain without a bank
file. The strain (GWOSC HDF5, or any raw format of transient-detect with
--rate) is whitened with a PSD (estimated from it by default, a noise-curve
file, or the Advanced LIGO design fit), a bank is designed from the template
whitened the same way, and the triggers are written with SNR, time, template,
phase, the autocorrelation chi-square and the merger time (spiir_search).

Times: a trigger's `time` is the peak of the filter output, where the last
sample of the whitened template lies; `merger_time` is the template's merger
(time 0 of a waveform file's time column, else the peak of |h|) at that
alignment. Both are GPS seconds when the strain file gives its start (GWOSC
meta/GPSstart), else seconds from the first sample.
"""

import argparse
import math
import os
import time

import numpy as np

from . import gw_strain, spiir_search, spiir_templates

__all__ = ["run"]


class _StrainRecording(object):
    """What json_bytes reads of a recording, for the strain searched."""

    def __init__(self, path, fmt, datatype, nsamples, rate):
        self.path, self.format, self.nsamples, self.rate = path, fmt, nsamples, rate
        self.datatype = argparse.Namespace(text=datatype)
        self.channel_name, self.channel = None, None


def _read_strain(args, recordings, usage_error):
    """(data float64, rate, gps start or None, recording description)."""
    if gw_strain.is_hdf5(args.input):
        try:
            s = gw_strain.read_gwosc(args.input)
        except ValueError as e:
            raise usage_error(str(e))
        if args.rate is not None and args.rate != s.sample_rate:
            raise usage_error("%s gives its rate (%g Hz); drop --rate %g" %
                              (args.input, s.sample_rate, args.rate))
        data, rate, gps = s.data, s.sample_rate, s.gps_start
        rec = _StrainRecording(args.input, "gwosc-hdf5", "f64", len(data), rate)
    else:
        try:
            r = recordings.open_recording(args.input, args.format, rate=args.rate,
                                          channel=args.channel)
        except (ValueError, OSError) as e:
            raise usage_error(str(e) if isinstance(e, ValueError) else "%s: %s" %
                              (args.input, e))
        try:
            if r.is_complex or r.vlen > 1:
                raise usage_error("%s: strain must be one real channel" % args.input)
            if r.rate is None:
                raise usage_error("%s: no sample rate; give --rate" % args.input)
            data = np.asarray(r.read(0, r.nsamples), dtype=np.float64).reshape(-1)
            rate, gps = r.rate, None
            rec = _StrainRecording(r.path, r.format, r.datatype.text, r.nsamples, rate)
        finally:
            r.close()
    start = args.start
    if start >= len(data):
        raise usage_error("--start %d is beyond the %d samples of %s" %
                          (start, len(data), args.input))
    count = len(data) - start
    if args.samples:
        count = min(count, args.samples)
    data = data[start:start + count]
    if gps is not None:
        gps += start / rate
    return data, rate, gps, rec


def _check_template_args(args, usage_error):
    if (args.template is None) == (args.approximant is None):
        raise usage_error("spiir needs --bank FILE, or --template FILE or --approximant NAME "
                          "to design a bank")
    if args.template is not None and (args.m1 is not None or args.m2 is not None):
        raise usage_error("--m1/--m2 go with --approximant")
    if args.approximant is not None and (args.m1 is None or args.m2 is None):
        raise usage_error("--approximant needs --m1 and --m2")


def _template(args, rate, usage_error):
    try:
        if args.template is not None:
            return spiir_templates.load_template(args.template, rate, args.template_rate)
        return spiir_templates.approximant(args.approximant, args.m1, args.m2, rate,
                                           f_low=args.f_low)
    except (ValueError, OSError) as e:
        raise usage_error(str(e))


def run(args, stdout, stderr, tool):
    """The search; returns the exit status like transient-detect's run. tool:
    the transient-detect module (its recordings reader, UsageError, which the
    caller reports, CSV/JSON writers, parameters and output)."""
    usage_error, recordings = tool.UsageError, tool.recordings
    _check_template_args(args, usage_error)
    if args.sigmf_annotations is not None or args.in_place:
        raise usage_error("--sigmf-annotations: the strain search writes CSV or JSON (-o)")
    if not 0 < args.target_match < 1:
        raise usage_error("--target-match must be in (0, 1), got %g" % args.target_match)
    if args.max_latency < 0:
        raise usage_error("--max-latency must be >= 0")
    if args.output not in (None, "-") and tool._same_file(args.output, args.input):
        raise usage_error("-o %s is the input" % args.output)
    data, rate, gps, rec = _read_strain(args, recordings, usage_error)
    template = _template(args, rate, usage_error)
    t0 = time.time()
    try:
        psd = spiir_search.psd(data, rate, args.psd, args.psd_seconds,
                               asd=not args.psd_is_psd)
        r = spiir_search.search(data, rate, template, psd, f_low=args.f_low,
                                target_match=args.target_match, max_latency=args.max_latency,
                                threshold=args.threshold,
                                window=args.window,
                                half=args.chisq_half, multirate=args.multirate,
                                backend=args.backend, gps_start=gps or 0.0,
                                taper=args.taper)
    except ValueError as e:
        raise usage_error(str(e))
    elapsed = time.time() - t0
    # Noise the PSD describes comes out with unit variance (in the band above
    # f_low: 1 - 2 f_low / rate); far from it, SNRs and thresholds mean little.
    m = int(round(args.taper * rate)) + r.whitener_half_len
    inner = r.whitened[m:len(r.whitened) - m]
    if len(inner) > 0:
        var = float(np.var(inner)) / (1.0 - 2.0 * args.f_low / rate)
        if not 0.5 <= var <= 2.0:
            stderr.write("%s: warning: spiir: the whitened strain has variance %.3g, not 1: "
                         "the PSD (%s) does not describe this strain; SNRs are off by about "
                         "a factor %.2g\n" % (tool.PROG, var, args.psd, math.sqrt(var)))
    rows = []
    for t in r.triggers:
        s = int(t["sample"]) + args.start
        rows.append({"sample": s, "time": float(t["time"]), "count": 1,
                     "template": int(t["template"]), "snr": float(t["snr"]),
                     "phase": float(t["phase"]), "chisq": float(t["chisq"]),
                     "merger_time": float(t["merger_time"])})
    d = r.design
    stats = {"start": args.start, "samples": len(data), "seconds": len(data) / rate,
             "backend": args.backend, "detections": len(rows), "gps_start": gps,
             "template": template.name, "template_samples": len(r.template.h),
             "filters": int(len(d.filters)), "match": d.match, "epsilon": d.epsilon,
             "latency": r.latency, "end_to_merger": r.template.end_to_merger}
    data_out = tool.csv_bytes("spiir", rows) if tool._output_format(args) == "csv" else \
        tool.json_bytes("spiir", rows, rec, tool._params(args), stats)
    tool.emit(args.output, data_out, stdout)
    if not args.quiet:
        prog = tool.PROG
        stderr.write("%s: spiir: %s whitened (%d samples) -> %d filters, match %.4f "
                     "(epsilon %.3g), latency %d samples; merger %.4f s before a trigger's "
                     "time\n" % (prog, template.name, len(r.template.h), len(d.filters),
                                 d.match, d.epsilon, r.latency, r.template.end_to_merger))
        stderr.write("%s: spiir: %d detections in %d samples (%.6g s at %.6g Hz) of %s, "
                     "%.2f s\n" % (prog, len(rows), len(data), len(data) / rate, rate,
                                   os.path.basename(args.input), elapsed))
    return 0
