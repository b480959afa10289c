#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Readers for the time series of pulsar and transient searches, and a period
check by folding.

Formats:

* SIGPROC ``.tim`` (and single-IF ``.fil`` filterbanks): a binary header of
  records between ``HEADER_START`` and ``HEADER_END``. Every string (keyword
  or string value) is a little-endian int32 length followed by that many
  bytes; a keyword is followed by its value, whose type the keyword fixes
  (int32, float64, a string, or one byte for ``signed``). The samples follow
  the header: ``nbits`` 32 (float32), 16 (uint16) or 8 (uint8, int8 when
  ``signed`` is 1), time-major with ``nchans`` channels per sample.
* PRESTO ``.dat`` + ``.inf``: the ``.dat`` file holds raw little-endian
  float32 samples; the ``.inf`` text file describes them in lines
  ``description = value`` (the description text is the key, e.g.
  ``Width of each time series bin (sec)``).

Both readers return a :class:`TimeSeries`: ``data`` (numpy float32, shape
``(nsamples,)`` for one channel, ``(nsamples, nchans)`` otherwise), ``tsamp``
(seconds), ``dm`` (pc cm^-3, NaN if unknown), ``source``, ``mjd`` (start, MJD
of the first sample, topocentric unless ``barycentric``), ``fch1`` (MHz, NaN
if unknown) and ``header`` (every keyword read). Malformed files raise
``ValueError`` naming the file and what is wrong; missing files raise
``OSError``.

Period helpers (numpy only):

* :func:`fold` folds a series at a trial period into a pulse profile;
* :func:`estimate_period` finds the strongest periodicity by an FFT with
  harmonic summing and refines it by folding;
* :func:`period_from_arrivals` fits a period to single-pulse arrival times
  (e.g. the candidates of a boxcar search) given an approximate period.

Command line: ``python3 -m gnuradio.transient.timeseries FILE [--period]
[--search]`` (or ``python3 timeseries.py FILE``) prints the metadata, with
``--period`` the folded period and with ``--search`` the single pulses found
by the boxcar search of libtransient (needs the gnuradio.transient bindings)
and their fit to the period. The readers and the period helpers need numpy
and nothing of GNU Radio; this module can be imported by file path.
"""

import math
import os
import struct
import sys

import numpy as np

__all__ = [
    "TimeSeries", "read_tim", "read_sigproc", "read_inf", "read_dat", "read_timeseries",
    "fold", "estimate_period", "period_from_arrivals"
]

# ---- SIGPROC ------------------------------------------------------------------

# Value type of every SIGPROC header keyword (sigproc's read_header.c).
_SIGPROC_STR = {"source_name", "rawdatafile"}
_SIGPROC_INT = {
    "telescope_id", "machine_id", "data_type", "barycentric", "pulsarcentric", "nchans",
    "nbits", "nifs", "nbeams", "ibeam", "nsamples", "nbins", "npuls"
}
_SIGPROC_DOUBLE = {
    "src_raj", "src_dej", "az_start", "za_start", "fch1", "foff", "tstart", "tsamp",
    "refdm", "period", "refrm", "fchannel"
}
_SIGPROC_BYTE = {"signed"}
_SIGPROC_MARKERS = {"FREQUENCY_START", "FREQUENCY_END"}
_MAX_KEY = 80  # longer "strings" mean a corrupt or non-SIGPROC file


class TimeSeries(object):
    """A time series with its metadata (see the module documentation)."""

    def __init__(self, path, fmt, data, tsamp, dm, source, mjd, fch1, header):
        self.path = path
        self.format = fmt
        self.data = data
        self.tsamp = float(tsamp)
        self.dm = float(dm)
        self.source = source
        self.mjd = float(mjd)
        self.fch1 = float(fch1)
        self.header = header

    @property
    def nsamples(self):
        return int(self.data.shape[0])

    @property
    def nchans(self):
        return 1 if self.data.ndim == 1 else int(self.data.shape[1])

    @property
    def duration(self):
        """Seconds covered by the samples."""
        return self.nsamples * self.tsamp

    def __repr__(self):
        return ("TimeSeries(%r, %s, %d samples x %d channel(s), tsamp %g s, DM %g, "
                "source %r, MJD %.9f)" % (self.path, self.format, self.nsamples, self.nchans,
                                         self.tsamp, self.dm, self.source, self.mjd))


def _bad(path, what):
    return ValueError("%s: %s" % (path, what))


class _Cursor(object):

    def __init__(self, path, raw):
        self.path, self.raw, self.pos = path, raw, 0

    def take(self, n, what):
        if n < 0 or self.pos + n > len(self.raw):
            raise _bad(self.path, "SIGPROC header truncated while reading %s at byte %d" %
                       (what, self.pos))
        b = self.raw[self.pos:self.pos + n]
        self.pos += n
        return b

    def string(self, what):
        (n, ) = struct.unpack("<i", self.take(4, what + " length"))
        if not 0 < n <= _MAX_KEY:
            raise _bad(self.path, "not a SIGPROC header: %s length %d at byte %d" %
                       (what, n, self.pos - 4))
        b = self.take(n, what)
        try:
            return b.decode("ascii")
        except UnicodeDecodeError:
            raise _bad(self.path, "not a SIGPROC header: %s is not ASCII at byte %d" %
                       (what, self.pos - n))


def read_sigproc(path):
    """Read a SIGPROC time series (.tim) or single-IF filterbank (.fil).

    Returns a TimeSeries. Raises ValueError on a malformed header (unknown
    keyword, truncated record, missing or invalid tsamp/nbits/nchans), on an
    unsupported sample size, or when the data size is not a whole number of
    samples (or disagrees with a ``nsamples`` keyword).
    """
    with open(path, "rb") as f:
        raw = f.read()
    c = _Cursor(path, raw)
    first = c.string("HEADER_START")
    if first != "HEADER_START":
        raise _bad(path, "not a SIGPROC file: starts with %r, not HEADER_START" % first)
    header = {}
    while True:
        key = c.string("keyword")
        if key == "HEADER_END":
            break
        if key in _SIGPROC_MARKERS:
            continue
        if key in _SIGPROC_STR:
            header[key] = c.string(key)
        elif key in _SIGPROC_INT:
            (header[key], ) = struct.unpack("<i", c.take(4, key))
        elif key in _SIGPROC_DOUBLE:
            (v, ) = struct.unpack("<d", c.take(8, key))
            if key == "fchannel":
                header.setdefault("fchannels", []).append(v)
            else:
                header[key] = v
        elif key in _SIGPROC_BYTE:
            header[key] = c.take(1, key)[0]
        else:
            raise _bad(path, "unknown SIGPROC header keyword %r at byte %d" %
                       (key, c.pos - len(key)))
    header_size = c.pos

    tsamp = header.get("tsamp")
    if tsamp is None:
        raise _bad(path, "SIGPROC header has no tsamp")
    if not (math.isfinite(tsamp) and tsamp > 0):
        raise _bad(path, "SIGPROC tsamp must be positive, got %r" % tsamp)
    nbits = header.get("nbits", 32)
    nchans = header.get("nchans", 1)
    nifs = header.get("nifs", 1)
    if nchans < 1:
        raise _bad(path, "SIGPROC nchans must be >= 1, got %d" % nchans)
    if nifs != 1:
        raise _bad(path, "SIGPROC nifs = %d: only one IF is supported" % nifs)
    if nbits == 32:
        dtype = np.dtype("<f4")
    elif nbits == 16:
        dtype = np.dtype("<u2")
    elif nbits == 8:
        dtype = np.dtype("i1" if header.get("signed", 0) else "u1")
    else:
        raise _bad(path, "SIGPROC nbits = %d is not supported (8, 16 or 32)" % nbits)

    payload = len(raw) - header_size
    frame = dtype.itemsize * nchans
    if payload % frame:
        raise _bad(path, "data size %d bytes is not a whole number of samples of %d "
                   "channel(s) x %d bits" % (payload, nchans, nbits))
    nsamples = payload // frame
    if "nsamples" in header and header["nsamples"] not in (0, nsamples):
        raise _bad(path, "header says nsamples = %d, the file holds %d" %
                   (header["nsamples"], nsamples))
    data = np.frombuffer(raw, dtype=dtype, offset=header_size).astype(np.float32)
    if nchans > 1:
        data = data.reshape(nsamples, nchans)

    ext = os.path.splitext(path)[1].lower()
    return TimeSeries(path, "sigproc-fil" if ext == ".fil" else "sigproc-tim", data,
                      tsamp, header.get("refdm", math.nan), header.get("source_name", ""),
                      header.get("tstart", math.nan), header.get("fch1", math.nan),
                      header)


def read_tim(path):
    """Read a SIGPROC .tim time series (see read_sigproc)."""
    return read_sigproc(path)


# ---- PRESTO -------------------------------------------------------------------

# .inf descriptions (the text left of '=') -> (key, type). The descriptions are
# matched without surrounding blanks; other lines are kept in header['lines'].
_INF_KEYS = {
    "Data file name without suffix": ("basename", str),
    "Telescope used": ("telescope", str),
    "Instrument used": ("instrument", str),
    "Object being observed": ("source", str),
    "J2000 Right Ascension (hh:mm:ss.ssss)": ("ra", str),
    "J2000 Declination     (dd:mm:ss.ssss)": ("dec", str),
    "Data observed by": ("observer", str),
    "Epoch of observation (MJD)": ("mjd", float),
    "Barycentered?           (1 yes, 0 no)": ("barycentered", int),
    "Number of bins in the time series": ("nsamples", int),
    "Width of each time series bin (sec)": ("tsamp", float),
    "Any breaks in the data? (1 yes, 0 no)": ("breaks", int),
    "Type of observation (EM band)": ("band", str),
    "Beam diameter (arcsec)": ("beam_diameter", float),
    "Dispersion measure (cm-3 pc)": ("dm", float),
    "Central freq of low channel (MHz)": ("freq_low", float),
    "Total bandwidth (MHz)": ("bandwidth", float),
    "Number of channels": ("nchans", int),
    "Channel bandwidth (MHz)": ("chan_bw", float),
    "Data analyzed by": ("analyzer", str),
}
_INF_BY_SQUEEZED = {" ".join(k.split()): v for k, v in _INF_KEYS.items()}


def read_inf(path):
    """Parse a PRESTO .inf file into a dict (keys of _INF_KEYS' second column,
    plus 'onoff': list of (on, off) bin pairs and 'notes': the free text).

    Raises ValueError when a value does not parse or when the number of bins or
    the bin width is missing or invalid.
    """
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise _bad(path, "a PRESTO .inf file is ASCII text")
    info = {"onoff": [], "notes": ""}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("Any additional notes"):
            info["notes"] = "\n".join(l.strip() for l in lines[i + 1:]).strip()
            break
        if "=" not in line:
            if line.strip():
                raise _bad(path, "line %d is not 'description = value': %r" %
                           (i + 1, line))
            continue
        desc, value = line.split("=", 1)
        desc, value = " ".join(desc.split()), value.strip()
        if desc.startswith("On/Off bin pair"):
            try:
                on, off = (int(v) for v in value.split(","))
            except ValueError:
                raise _bad(path, "line %d: bad On/Off bin pair %r" % (i + 1, value))
            info["onoff"].append((on, off))
            continue
        spec = _INF_BY_SQUEEZED.get(desc)
        if spec is None:
            info.setdefault("other", {})[desc] = value
            continue
        key, typ = spec
        try:
            info[key] = typ(value)
        except ValueError:
            raise _bad(path, "line %d: %s must be %s, got %r" %
                       (i + 1, desc, "a number" if typ is not str else "text", value))
    if "nsamples" not in info:
        raise _bad(path, "no 'Number of bins in the time series' line")
    if info["nsamples"] < 0:
        raise _bad(path, "number of bins must be >= 0, got %d" % info["nsamples"])
    if "tsamp" not in info:
        raise _bad(path, "no 'Width of each time series bin (sec)' line")
    if not (math.isfinite(info["tsamp"]) and info["tsamp"] > 0):
        raise _bad(path, "the bin width must be positive, got %r" % info["tsamp"])
    return info


def read_dat(path, inf_path=None):
    """Read a PRESTO .dat time series described by its .inf file (by default
    the same name with suffix .inf). Returns a TimeSeries (header = the .inf
    dict). Raises ValueError when the .dat size is not 4 bytes times the number
    of bins in the .inf file."""
    if inf_path is None:
        inf_path = os.path.splitext(path)[0] + ".inf"
    info = read_inf(inf_path)
    size = os.path.getsize(path)
    if size != 4 * info["nsamples"]:
        raise _bad(path, "holds %d bytes, but %s describes %d float32 samples (%d bytes)" %
                   (size, inf_path, info["nsamples"], 4 * info["nsamples"]))
    data = np.fromfile(path, dtype="<f4").astype(np.float32, copy=False)
    fch1 = info.get("freq_low", math.nan)
    return TimeSeries(path, "presto-dat", data, info["tsamp"], info.get("dm", math.nan),
                      info.get("source", ""), info.get("mjd", math.nan), fch1, info)


def read_timeseries(path):
    """Read a .tim/.fil (SIGPROC) or .dat/.inf (PRESTO) file by its suffix."""
    ext = os.path.splitext(path)[1].lower()
    if ext in (".tim", ".fil"):
        return read_sigproc(path)
    if ext in (".dat", ".inf"):
        return read_dat(os.path.splitext(path)[0] + ".dat")
    raise ValueError("%s: unknown time series suffix %r (.tim, .fil, .dat, .inf)" %
                     (path, ext))


# ---- periods ------------------------------------------------------------------


def _as_series(x):
    y = np.asarray(x, dtype=np.float64)
    if y.ndim != 1 or len(y) < 2:
        raise ValueError("x must be a one-dimensional series of at least 2 samples")
    if not np.all(np.isfinite(y)):
        raise ValueError("x must be finite")
    return y


def _detrend(y, window):
    """y minus a running mean of `window` samples (edges: shorter windows)."""
    if window <= 1 or window >= len(y):
        return y - y.mean()
    c = np.concatenate(([0.0], np.cumsum(y)))
    i = np.arange(len(y))
    lo = np.clip(i - window // 2, 0, len(y))
    hi = np.clip(i + (window - window // 2), 0, len(y))
    return y - (c[hi] - c[lo]) / (hi - lo)


def fold(x, tsamp, period, nbins=64):
    """Pulse profile of x folded at `period` seconds: (profile, counts), the
    mean and the number of samples per phase bin (phase 0 at sample 0)."""
    y = _as_series(x)
    if not (tsamp > 0 and period > 0 and int(nbins) >= 2):
        raise ValueError("tsamp and period must be positive and nbins >= 2")
    nbins = int(nbins)
    phase = np.mod(np.arange(len(y)) * (tsamp / period), 1.0)
    b = np.minimum((phase * nbins).astype(np.int64), nbins - 1)
    counts = np.bincount(b, minlength=nbins)
    sums = np.bincount(b, y, minlength=nbins)
    with np.errstate(invalid="ignore", divide="ignore"):
        profile = sums / counts
    return profile, counts


def _fold_chi2(y, tsamp, period, nbins):
    profile, counts = fold(y, tsamp, period, nbins)
    ok = counts > 0
    return float(np.sum(counts[ok] * (profile[ok] - y.mean())**2) / y.var())


def estimate_period(x, tsamp, pmin=1e-3, pmax=10.0, harmonics=8, nbins=64,
                    detrend=None):
    """Strongest periodicity of x between pmin and pmax seconds.

    Steps: remove a running mean (window `detrend` samples, default pmax / tsamp
    rounded, i.e. slower than any searched period), take the power spectrum,
    sum up to `harmonics` harmonics and take the fundamental with the largest
    normalised sum; then refine the period by folding (nbins phase bins) over
    +-1.5 Fourier bins around it and keep the largest profile chi-square.

    Returns a dict: period (s), frequency (Hz), chi2 (of the folded profile;
    about nbins - 1 for noise), sigma (the period's uncertainty: the step of
    the folding grid where chi2 stays above half its peak, half width), and
    harmonics_used.
    """
    y = _as_series(x)
    if not (tsamp > 0 and 0 < pmin < pmax):
        raise ValueError("need tsamp > 0 and 0 < pmin < pmax")
    n = len(y)
    if detrend is None:
        detrend = int(round(pmax / tsamp))
    y = _detrend(y, int(detrend))
    power = np.abs(np.fft.rfft(y))**2
    freq = np.fft.rfftfreq(n, tsamp)
    df = freq[1]
    power[0] = 0.0
    kmin = max(1, int(math.ceil(1.0 / pmax / df)))
    kmax = min(len(freq) - 1, int(math.floor(1.0 / pmin / df)))
    if kmax < kmin:
        raise ValueError("the series is too short for periods %g..%g s" % (pmin, pmax))
    # Normalise by a running median of the spectrum (red noise).
    med = np.median(power[kmin:kmax + 1])
    norm = power / (med if med > 0 else 1.0)
    best_k, best_s, best_h = kmin, -np.inf, 1
    k = np.arange(kmin, kmax + 1)
    total = np.zeros(len(k))
    for h in range(1, int(harmonics) + 1):
        idx = k * h
        valid = idx < len(norm)
        total[valid] += norm[idx[valid]]
        # Significance of an h-harmonic sum of exponential powers: compare sums
        # by their excess over the mean h, in units of sqrt(h).
        score = (total - h) / math.sqrt(h)
        j = int(np.argmax(score))
        if score[j] > best_s:
            best_k, best_s, best_h = int(k[j]), float(score[j]), h
    f0 = best_k * df
    # Refine by folding around f0 (a fine grid of 301 trial frequencies).
    trials = f0 + np.linspace(-1.5, 1.5, 301) * df
    trials = trials[trials > 0]
    chi = np.array([_fold_chi2(y, tsamp, 1.0 / f, nbins) for f in trials])
    j = int(np.argmax(chi))
    above = trials[chi >= chi[j] / 2]
    fbest = trials[j]
    half_width_f = (above.max() - above.min()) / 2 if len(above) > 1 else df
    period = 1.0 / fbest
    return {
        "period": period,
        "frequency": fbest,
        "chi2": float(chi[j]),
        "sigma": float(half_width_f / fbest**2),
        "harmonics_used": best_h,
    }


def period_from_arrivals(times, period_guess, max_phase=0.25):
    """Fit a period to pulse arrival times (seconds) given a rough period.

    Each time gets the pulse number round((t - ref) / period_guess), ref being
    the phase where most times fall (under the guess); times more than
    `max_phase` periods from their predicted arrival (by the guess) are
    ignored as off-pulse. A least-squares line
    t = t0 + k P through the rest gives P.

    Returns a dict: period, t0, n_used (pulses in the fit), n_off (times
    ignored), rms_phase (residual rms in periods), distinct_pulses (different
    pulse numbers among the times used). Raises ValueError with fewer than two
    distinct pulse numbers.
    """
    t = np.sort(np.asarray(times, dtype=np.float64).ravel())
    if len(t) == 0 or not period_guess > 0 or not np.all(np.isfinite(t)):
        raise ValueError("need finite arrival times and a positive period guess")
    # Reference phase: the centre of the densest phase interval of width
    # max_phase under the guess (circular histogram of 256 bins).
    nb = 256
    ph = np.mod((t - t[0]) / period_guess, 1.0)
    hist = np.bincount(np.minimum((ph * nb).astype(np.int64), nb - 1), minlength=nb)
    half = max(1, int(round(max_phase / 2 * nb)))
    ext = np.concatenate([hist[-half:], hist, hist[:half]])
    dens = np.convolve(ext, np.ones(2 * half + 1), mode="valid")
    ref = t[0] + (int(np.argmax(dens)) + 0.5) / nb * period_guess
    k = np.round((t - ref) / period_guess)
    resid = (t - ref) / period_guess - k
    use = np.abs(resid) <= max_phase
    if len(np.unique(k[use])) < 2:
        raise ValueError("fewer than two distinct pulses near the guessed period")
    A = np.vstack([np.ones(np.count_nonzero(use)), k[use]]).T
    (t0, period), *_ = np.linalg.lstsq(A, t[use], rcond=None)
    r = (t[use] - (t0 + k[use] * period)) / period
    return {
        "period": float(period),
        "t0": float(t0),
        "n_used": int(np.count_nonzero(use)),
        "n_off": int(np.count_nonzero(~use)),
        "rms_phase": float(np.sqrt(np.mean(r**2))),
        "distinct_pulses": int(len(np.unique(k[use]))),
    }


# ---- command line -------------------------------------------------------------


def search_pulses(x, threshold=8.0, max_width=256, algorithm="boxdit",
                  widths=(32, 16, 16, 16, 8), window=4096, baseline_window=2049,
                  backend="cpu"):
    """Single pulses of a 1-D series by the boxcar search of libtransient
    (gnuradio.transient.boxcar_search, white statistics over `window` samples
    after a running-median baseline of `baseline_window` samples) and its
    friends-of-friends candidates (boxcar_candidates) at `threshold`, events
    closed after 4 L_end samples like the block boxcar_search_ff (the first
    statistics window is normalised by its own statistics, so it gives
    candidates too). Returns the candidates' structured array (see
    boxcar_candidates), ordered by start."""
    from gnuradio import transient
    y = np.ascontiguousarray(x, dtype=np.float32)
    snr, width = transient.boxcar_search(y, algorithm, int(max_width), list(widths),
                                         norm_mode="white", window=int(window),
                                         baseline_window=int(baseline_window),
                                         backend=backend)
    # Events span at most 4 L_end samples, as in the block boxcar_search_ff.
    lend = transient.boxcar_plan(algorithm, int(max_width), list(widths))["lend"]
    c = transient.boxcar_candidates(snr, width, float(threshold), max_span=4 * lend)
    return c[np.argsort(c["start"], kind="stable")]


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(
        description="Print the metadata of a SIGPROC .tim/.fil or PRESTO .dat/.inf time "
        "series and, with --period, its folded period; with --search, its single "
        "pulses (boxcar search) and how they fit the period.")
    ap.add_argument("path")
    ap.add_argument("--period", action="store_true",
                    help="estimate the strongest period (FFT, then folding)")
    ap.add_argument("--pmin", type=float, default=0.01, help="shortest period (s)")
    ap.add_argument("--pmax", type=float, default=2.0, help="longest period (s)")
    ap.add_argument("--search", action="store_true",
                    help="boxcar single-pulse search (BoxDIT 32,16,16,16,8)")
    ap.add_argument("--threshold", type=float, default=8.0, help="search: S/N threshold")
    ap.add_argument("--max-width", type=int, default=256,
                    help="search: widest pulse in samples")
    ap.add_argument("--baseline", type=int, default=2049,
                    help="search: running-median baseline window (0 = none)")
    ap.add_argument("--window", type=int, default=4096,
                    help="search: statistics window in samples")
    ap.add_argument("--rows", type=int, default=10, help="search: pulses listed")
    args = ap.parse_args(argv)
    try:
        ts = read_timeseries(args.path)
    except (OSError, ValueError) as e:
        sys.stderr.write("timeseries: %s\n" % e)
        return 2
    print("file      %s (%s)" % (ts.path, ts.format))
    print("source    %s" % ts.source)
    print("samples   %d x %d channel(s), tsamp %.9g s, %.3f s" %
          (ts.nsamples, ts.nchans, ts.tsamp, ts.duration))
    print("DM        %.4f pc cm^-3" % ts.dm)
    print("start MJD %.12f" % ts.mjd)
    d = ts.data if ts.nchans == 1 else ts.data.mean(axis=1)
    print("values    mean %.6g, std %.6g, min %.6g, max %.6g" %
          (d.mean(), d.std(), d.min(), d.max()))
    p = None
    if args.period or args.search:
        p = estimate_period(d, ts.tsamp, args.pmin, args.pmax)
        print("period    %.6f s +- %.6f (folded chi2 %.0f, %d harmonics)" %
              (p["period"], p["sigma"], p["chi2"], p["harmonics_used"]))
    if args.search:
        try:
            c = search_pulses(d, args.threshold, args.max_width, window=args.window,
                              baseline_window=args.baseline)
        except ImportError as e:
            sys.stderr.write("timeseries: --search needs gnuradio.transient (%s)\n" % e)
            return 2
        except ValueError as e:
            sys.stderr.write("timeseries: %s\n" % e)
            return 2
        print("pulses    %d at S/N >= %g (statistics windows of %d samples)" %
              (len(c), args.threshold, args.window))
        for r in c[:args.rows]:
            print("          start %9d (%10.4f s)  width %5d  S/N %6.1f  members %d" %
                  (r["start"], r["start"] * ts.tsamp, r["width"], r["snr"], r["members"]))
        if len(c) >= 2:
            try:
                fit = period_from_arrivals(c["start"] * ts.tsamp, p["period"])
                print("          on the period: %d, off: %d; period from the pulses "
                      "%.6f s (phase rms %.3f)" %
                      (fit["n_used"], fit["n_off"], fit["period"], fit["rms_phase"]))
            except ValueError as e:
                print("          no period fit: %s" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
