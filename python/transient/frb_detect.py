"""``transient-detect frb FILE``: FRB search of a SIGPROC filterbank or of a
PSRFITS search-mode file (psrfits, which needs astropy; the total intensity is
written to a temporary 32-bit float filterbank beside the output, or in
$TMPDIR, and searched as a .fil).

The search itself is the C program ``transient-frb`` over libtransient's
``tr_frb`` (dedispersion -> boxcar search -> candidates; no GNU Radio needed),
run as a subprocess; this module gives it the options, shows its progress and
writes the candidates as CSV or JSON (columns dm, time, sample, width, snr,
members), Heimdall's .cand lines, SigMF annotations of the filterbank and, with
``--plot``, a PNG (frb_plot). See share/doc/gr-transient/frb.md.

Times are those of the pulse centre at the top of the band (the highest
channel centre frequency), in seconds from the first spectrum of the file.
"""

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading

try:  # gnuradio.transient.frb_detect, or the source tree's (transient-detect's fallback)
    from . import io_checks, tempfiles
except ImportError:
    import io_checks
    import tempfiles

PROGRAM = "transient-frb"
KDM = 4.148808e3  # MHz^2 pc^-1 cm^3 s, as tr_dedisp
CSV_COLUMNS = ("dm", "time", "sample", "width", "snr", "members")
SIGMF_DATATYPES = {8: "ru8", 16: "ru16_le", 32: "rf32_le"}


def _number(kind, positive=False):
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError("expected a number, got %r" % text)
        if not math.isfinite(v) or v < 0 or (positive and v == 0):
            raise argparse.ArgumentTypeError("must be %s, got %r" %
                                             ("> 0" if positive else ">= 0", text))
        return v

    return parse


def _devices(text):
    """--devices: CUDA device indices, comma-separated (a device may repeat)."""
    try:
        v = [int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("expected device indices like 0,1, got %r" % text)
    if not 1 <= len(v) <= 16 or min(v) < 0:
        raise argparse.ArgumentTypeError("1 to 16 device indices >= 0, got %r" % text)
    return v


def add_parser(sub):
    """The ``frb`` subcommand of transient-detect's parser."""
    p = sub.add_parser("frb", help="FRB search of a SIGPROC filterbank (.fil) or PSRFITS "
                       "search-mode file (.fits, .sf): dedispersion, boxcar search, "
                       "candidates with DM")
    p.add_argument("input", help="the SIGPROC filterbank (.fil; 1 to 32 bits) or PSRFITS "
                   "search-mode file (.fits, .sf; needs astropy)")
    g = p.add_argument_group("output")
    g.add_argument("-o", "--output",
                   help="candidates: .csv, .json or .cand (Heimdall); '-' = CSV on stdout "
                   "(the default without -o, --sigmf-annotations and --plot)")
    g.add_argument("--output-format", choices=("csv", "json", "cand"),
                   help="format of -o (default: from its suffix)")
    g.add_argument("--sigmf-annotations", nargs="?", const="", metavar="META",
                   help="write SigMF metadata of the filterbank with one annotation per "
                   "candidate (default META: beside the input)")
    g.add_argument("--plot", metavar="PNG",
                   help="S/N against DM and time, and the dedispersed waterfall and "
                   "profile of the best candidates (needs matplotlib)")
    g.add_argument("--progress", action="store_true", help="progress on stderr")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress or summary")
    g = p.add_argument_group("DM trials")
    g.add_argument("--dm-min", type=_number(float), default=0.0, help="lowest DM (0)")
    g.add_argument("--dm-max", type=_number(float), default=1000.0,
                   help="highest DM (1000): trials up to the first >= it")
    g.add_argument("--dm-tol", type=_number(float, True), default=1.25,
                   help="DM plan tolerance, dedisp's dm_tol (1.25)")
    g.add_argument("--pulse-width", type=_number(float), default=40.0,
                   help="intrinsic pulse width of the DM plan, us (40)")
    g.add_argument("--dm-list", help="explicit DM trials a,b,c instead of the plan")
    g.add_argument("--scrunch", action="store_true",
                   help="time-scrunch the high-DM trials (dedisp's adaptive dt, as "
                   "Heimdall): less work, outputs still one per spectrum")
    g.add_argument("--scrunch-tol", type=_number(float, True), default=1.15,
                   help="its tolerance, dedisp's scrunch_tol (1.15)")
    g.add_argument("--no-zero-dm", action="store_true",
                   help="keep each spectrum's channel mean (default: subtract it, as "
                   "Heimdall: broadband RFI and slow drifts)")
    g.add_argument("--mask-chans", help="channels left out: 3,7,100-120")
    g = p.add_argument_group("search")
    g.add_argument("--threshold", type=float, default=8.0, help="S/N threshold (8)")
    g.add_argument("--max-width", type=_number(int, True), default=1024,
                   help="widest boxcar in samples (1024)")
    g.add_argument("--algorithm", choices=("boxdit", "igrid", "ideal"), default="boxdit")
    g.add_argument("--norm", choices=("white", "levels"),
                   help="noise statistics of each DM trial (white; levels with --scrunch)")
    g.add_argument("--window", type=_number(int, True), default=1024,
                   help="samples per statistics window; the first is not searched (1024)")
    g.add_argument("--history", type=_number(int, True), default=8,
                   help="statistics windows merged (8)")
    g.add_argument("--baseline", type=_number(int), default=0,
                   help="running-median baseline removal, samples (0: none)")
    g.add_argument("--link-time", type=_number(int), default=0,
                   help="friends-of-friends gap in samples (0)")
    g.add_argument("--link-dm", type=_number(int), default=200,
                   help="friends-of-friends DM-trial distance (200)")
    g = p.add_argument_group("data and backend")
    g.add_argument("--start", type=_number(int), default=0, help="first spectrum (0)")
    g.add_argument("--samples", type=_number(int), default=0,
                   help="spectra to search (0: to the end)")
    g.add_argument("--block", type=_number(int, True), default=16384,
                   help="spectra per block: memory ~ block x DM trials x 12 bytes (16384)")
    g.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto")
    g.add_argument("--device", type=_number(int), default=0, help="CUDA device index")
    g.add_argument("--devices", type=_devices,
                   help="CUDA devices sharing the DM trials, e.g. 0,1 (a device may repeat)")
    g.add_argument("--program", help="the transient-frb program (default: beside "
                   "transient-detect, in ../build/apps, then on PATH; or $TRANSIENT_FRB)")
    return p


class FrbError(Exception):
    """A usage or input problem (exit status 2) or a failed search (status 1)."""

    def __init__(self, message, status=2):
        Exception.__init__(self, message)
        self.status = status


def find_program(explicit, app_dir):
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise FrbError("--program %s is not an executable file" % explicit)
        return explicit
    env = os.environ.get("TRANSIENT_FRB")
    if env:
        if not os.access(env, os.X_OK):
            raise FrbError("TRANSIENT_FRB=%s is not an executable file" % env)
        return env
    for d in (app_dir, os.path.join(app_dir, os.pardir, "build", "apps")):
        p = os.path.join(d, PROGRAM)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return os.path.abspath(p)
    p = shutil.which(PROGRAM)
    if p:
        return p
    raise FrbError("cannot find the %s program (built with libtransient: "
                   "build/apps/%s); give --program or TRANSIENT_FRB" % (PROGRAM, PROGRAM))


def program_args(args, fil):
    a = [fil, "--dm-min", repr(args.dm_min), "--dm-max", repr(args.dm_max),
         "--dm-tol", repr(args.dm_tol), "--pulse-width", repr(args.pulse_width),
         "--threshold", repr(args.threshold), "--max-width", str(args.max_width),
         "--algorithm", args.algorithm, "--window", str(args.window),
         "--history", str(args.history), "--baseline", str(args.baseline),
         "--link-time", str(args.link_time), "--link-dm", str(args.link_dm),
         "--start", str(args.start), "--samples", str(args.samples),
         "--block", str(args.block), "--backend", args.backend,
         "--device", str(args.device)]
    if args.devices:
        a += ["--devices", ",".join(str(d) for d in args.devices)]
    if args.dm_list:
        a += ["--dm-list", args.dm_list]
    if args.mask_chans:
        a += ["--mask-chans", args.mask_chans]
    if args.no_zero_dm:
        a.append("--no-zero-dm")
    if args.norm:
        a += ["--norm", args.norm]
    if args.scrunch:
        a += ["--scrunch", "--scrunch-tol", repr(args.scrunch_tol)]
    return a


def run_program(cmd, show, stderr):
    """Runs the search; its progress goes to stderr when show. Returns
    (exit status, its error lines, its notes)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    kept = []

    def pump():
        for chunk in iter(lambda: proc.stderr.read1(4096), b""):
            text = chunk.decode("utf-8", "replace")
            kept.append(text)
            if show:
                stderr.write(text)
                stderr.flush()

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        raise
    t.join()
    lines = "".join(kept).replace("\r", "\n").splitlines()
    errors = [line.split(": error: ", 1)[1] for line in lines if ": error: " in line]
    notes = [line.split(": note: ", 1)[1] for line in lines if ": note: " in line]
    return rc, errors, notes


def _delay_span(dm, hdr):
    """Samples between the top and the bottom of the band at this DM."""
    f1 = hdr["fch1"]
    f2 = hdr["fch1"] + (hdr["nchans"] - 1) * hdr["foff"]
    lo, hi = min(f1, f2), max(f1, f2)
    return int(round(KDM * dm * (lo**-2 - hi**-2) / hdr["tsamp"]))


def csv_bytes(cands):
    lines = [",".join(CSV_COLUMNS)]
    for c in cands:
        lines.append(",".join(repr(c[k]) if isinstance(c[k], float) else str(c[k])
                              for k in CSV_COLUMNS))
    return ("\n".join(lines) + "\n").encode("utf-8")


def cand_bytes(cands):
    """Heimdall's .cand columns: snr sample time filter dm_index dm members
    first last (filter = round(log2(width)), the boxcar 2**filter)."""
    out = []
    for c in cands:
        out.append("%.6g\t%d\t%.9g\t%d\t%d\t%.6g\t%d\t%d\t%d" %
                   (c["snr"], c["sample"], c["time"], int(round(math.log2(max(1, c["width"])))),
                    c["dm_index"], c["dm"], c["members"], c["first"], c["end"] - 1))
    return ("\n".join(out) + ("\n" if out else "")).encode("utf-8")


def json_bytes(doc, prog):
    out = {"generator": "gr-transient " + prog, "detector": "frb",
           "recording": dict(doc["header"], path=doc["file"]), "plan": doc["plan"],
           "processed": doc["processed"], "parameters": doc["parameters"],
           "detections": doc["candidates"]}
    return (json.dumps(out, indent=1, allow_nan=False) + "\n").encode("utf-8")


def annotations(cands, hdr, prog, extension_name):
    """One SigMF annotation per candidate: the samples of the file the dispersed
    pulse crosses (from the top of the band to the bottom) and the band."""
    f1 = hdr["fch1"]
    f2 = hdr["fch1"] + (hdr["nchans"] - 1) * hdr["foff"]
    half = abs(hdr["foff"]) / 2
    out = []
    for c in cands:
        a = {"core:sample_start": int(c["start"]),
             "core:sample_count": int(c["width"]) + _delay_span(c["dm"], hdr),
             "core:label": "FRB DM %.1f S/N %.1f" % (c["dm"], c["snr"]),
             "core:generator": "gr-transient " + prog,
             "core:freq_lower_edge": (min(f1, f2) - half) * 1e6,
             "core:freq_upper_edge": (max(f1, f2) + half) * 1e6,
             extension_name + ":detector": "frb"}
        for k in CSV_COLUMNS + ("dm_index", ):
            a[extension_name + ":" + k] = c[k]
        out.append(a)
    return out


def sigmf_meta_path(args, hdr_bytes):
    meta = args.sigmf_annotations or os.path.splitext(args.input)[0] + ".sigmf-meta"
    if not meta.endswith(".sigmf-meta"):
        raise FrbError("--sigmf-annotations: %r must end in .sigmf-meta" % meta)
    if not os.path.isdir(os.path.dirname(os.path.abspath(meta))):
        raise FrbError("--sigmf-annotations: folder of %s does not exist" % meta)
    if os.path.exists(meta) and os.path.samefile(meta, args.input):
        raise FrbError("%s is the input; choose another --sigmf-annotations file" % meta)
    return meta


def check_output(path, what, suffixes, input_path):
    if path in (None, "-"):
        return
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise FrbError("%s: folder of %s does not exist" % (what, path))
    if os.path.exists(path) and os.path.samefile(path, input_path):
        raise FrbError("%s %s is the input" % (what, path))
    if suffixes and os.path.splitext(path)[1].lower() not in suffixes:
        raise FrbError("%s %s: give a %s file" % (what, path, " or ".join(suffixes)))


def psrfits_to_fil(path, tmp, show, stderr, prog):
    """Writes the total intensity of a PSRFITS search-mode file to tmp as a
    SIGPROC filterbank (32-bit float); returns the channels weighted 0 in
    every row."""
    psrfits = _import_psrfits()
    try:
        with psrfits.SearchFile(path) as sf:
            need = len(sf.sigproc_header()) + sf.nspectra * sf.nchan * 4
            free = shutil.disk_usage(os.path.dirname(tmp)).free
            if need > free:
                raise FrbError("%s: its %d-byte float copy does not fit in %s (%d bytes "
                               "free): set TMPDIR or -o to a larger disk" %
                               (path, need, os.path.dirname(tmp), free))
            if show:
                stderr.write("%s: frb: %s: PSRFITS, %d rows of %d spectra, %d channels: "
                             "writing their total intensity to %s\n" %
                             (prog, path, sf.nrows, sf.nsblk, sf.nchan, tmp))
            with open(tmp, "wb") as out:
                return sf.to_sigproc(out)
    except psrfits.PsrfitsError as e:
        raise FrbError(str(e))
    except OSError as e:
        raise FrbError("%s: %s" % (path, e))


def run(args, stdout, stderr, prog, sigmf, recordings, app_dir):
    """The frb subcommand; returns the exit status."""
    try:
        return _run(args, stdout, stderr, prog, sigmf, recordings, app_dir)
    except FrbError as e:
        stderr.write("%s: error: %s\n" % (prog, e))
        return e.status
    except KeyboardInterrupt:
        stderr.write("%s: interrupted; nothing written\n" % prog)
        return 130


def _run(args, stdout, stderr, prog, sigmf, recordings, app_dir):
    if not os.path.isfile(args.input):
        raise FrbError("%s: no such file" % args.input)
    try:
        with open(args.input, "rb") as f:
            sigproc = f.read(16)[4:16] == b"HEADER_START"
    except OSError as e:
        raise FrbError("%s: %s" % (args.input, e.strerror))
    folder = os.path.dirname(os.path.abspath(args.output)) if args.output not in (
        None, "-") else None
    psrfits = _import_psrfits()
    if sigproc or not psrfits.looks_like_psrfits(args.input):
        return _search(args, args.input, stdout, stderr, prog, sigmf, recordings, app_dir,
                       folder)
    if args.sigmf_annotations is not None:
        raise FrbError("%s: --sigmf-annotations describes a SIGPROC filterbank; a PSRFITS "
                       "file has none" % args.input)
    check_output(args.output, "-o", None, args.input)
    check_output(args.plot, "--plot", (".png", ), args.input)
    show = not args.quiet and (args.progress or stderr.isatty())
    # SIGTERM as an interrupt, so that the temporary copy goes on that exit too.
    term = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGTERM, _interrupt) if term else None
    try:
        return _search_psrfits(args, folder, show, stdout, stderr, prog, sigmf, recordings,
                               app_dir)
    finally:
        if term:
            signal.signal(signal.SIGTERM, old)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _search_psrfits(args, folder, show, stdout, stderr, prog, sigmf, recordings, app_dir):
    with tempfiles.temporary(folder, ".transient-frb-", ".fil") as fil:
        return _search_copy(args, fil, folder, show, stdout, stderr, prog, sigmf, recordings,
                            app_dir)


def _search_copy(args, fil, folder, show, stdout, stderr, prog, sigmf, recordings, app_dir):
    unused = psrfits_to_fil(args.input, fil, show, stderr, prog)
    if len(unused):  # no data in them: masked, as a user would
        if not args.quiet:
            stderr.write("%s: note: %s: %d channels weighted 0 in every row are masked\n" %
                         (prog, args.input, len(unused)))
        runs = []  # as ranges a-b
        for c in unused:
            if runs and runs[-1][1] == c - 1:
                runs[-1][1] = c
            else:
                runs.append([c, c])
        args = argparse.Namespace(**vars(args))
        args.mask_chans = ",".join(([args.mask_chans] if args.mask_chans else []) +
                                   ["%d-%d" % (a, b) for a, b in runs])
    return _search(args, fil, stdout, stderr, prog, sigmf, recordings, app_dir, folder)


def _import_psrfits():
    try:
        from . import psrfits
    except ImportError:  # loaded by file path (transient-detect from the source tree)
        import psrfits
    return psrfits


def _search(args, fil, stdout, stderr, prog, sigmf, recordings, app_dir, folder):
    """The search of the SIGPROC filterbank fil (args.input, or its PSRFITS copy)."""
    try:
        hdr, hdr_bytes = recordings.sigproc_header(fil)
    except ValueError as e:
        raise FrbError("%s (frb needs a SIGPROC filterbank)" % e)
    fmt = args.output_format
    if fmt is None and args.output not in (None, "-"):
        fmt = os.path.splitext(args.output)[1].lower().lstrip(".")
        if fmt not in ("csv", "json", "cand"):
            raise FrbError("-o %s: give a .csv, .json or .cand file or --output-format" %
                           args.output)
    check_output(args.output, "-o", None, args.input)
    check_output(args.plot, "--plot", (".png", ), args.input)
    meta = None
    if args.sigmf_annotations is not None:
        meta = sigmf_meta_path(args, hdr_bytes)
        if hdr.get("nbits", 32) not in SIGMF_DATATYPES:
            raise FrbError("%s: SigMF has no datatype for %d-bit samples; leave out "
                           "--sigmf-annotations" % (args.input, hdr["nbits"]))
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise FrbError("--plot needs matplotlib (Debian: python3-matplotlib)")
    program = find_program(args.program, app_dir)

    with tempfiles.temporary(folder, ".transient-frb-", ".json") as tmp:
        show = not args.quiet and (args.progress or stderr.isatty())
        cmd = [program] + program_args(args, fil) + ["--format", "json", "-o", tmp, "-q"]
        if show:
            cmd.append("--progress")
        rc, errors, notes = run_program(cmd, show, stderr)
        if fil != args.input:  # the messages name the file given
            errors = [e.replace(fil, args.input) for e in errors]
            notes = [n.replace(fil, args.input) for n in notes]
        if not args.quiet and not show:
            for n in notes:
                stderr.write("%s: note: %s\n" % (prog, n))
        if rc != 0:
            raise FrbError("; ".join(errors) or "%s failed with exit status %d" %
                           (program, rc), status=2 if rc == 2 else 1)
        with open(tmp) as f:
            doc = json.load(f)
    doc["file"] = args.input

    cands = doc["candidates"]
    proc = doc["processed"]
    if args.output is not None or (meta is None and not args.plot):
        data = {"csv": csv_bytes, "cand": cand_bytes}.get(fmt or "csv")
        data = data(cands) if data else json_bytes(doc, prog)
        io_checks.emit(args.output, data, stdout, sigmf.atomic_write)
    if meta is not None:
        h = doc["header"]
        folder = os.path.dirname(os.path.abspath(meta))
        m = sigmf.new_meta(SIGMF_DATATYPES[h["nbits"]], 1.0 / h["tsamp"],
                           dataset=os.path.relpath(os.path.abspath(args.input), folder),
                           description="%s (SIGPROC filterbank, %d channels from %g MHz, "
                           "step %g MHz)" % (os.path.basename(args.input), h["nchans"],
                                             h["fch1"], h["foff"]),
                           header_bytes=hdr_bytes, num_channels=h["nchans"])
        ext = {"name": "transient", "version": "1.0.0", "optional": True}
        sigmf.add_annotations(m, annotations(cands, h, prog, ext["name"]), extension=ext)
        sigmf.write_meta(meta, m)
    if args.plot:
        try:
            from . import frb_plot
        except ImportError:  # loaded by file path (transient-detect from the source tree)
            import frb_plot
        frb_plot.plot(args.plot, fil, hdr_bytes, doc)
    if not args.quiet:
        plan = doc["plan"]
        stderr.write("%s: frb: %d candidates in %d spectra (%.6g s) of %s, %d DM trials "
                     "%.6g..%.6g, backend %s, %.2f s%s%s\n" %
                     (prog, len(cands), proc["spectra"], proc["spectra"] * hdr["tsamp"],
                      args.input, plan["dm_trials"], plan["dms"][0], plan["dms"][-1],
                      proc["backend"], proc["seconds"],
                      ", SigMF annotations in %s" % meta if meta else "",
                      ", plot in %s" % args.plot if args.plot else ""))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run it as: transient-detect frb FILE")
