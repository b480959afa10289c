#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Recordings on disk as sample streams, without loading them whole: the
format dispatch of ``transient-detect``.

:func:`open_recording` recognises a file by its suffix (or, when the suffix
says nothing, by its first bytes) and returns a :class:`Recording` that says
where the samples are (``data_path``, ``offset`` bytes of header, the SigMF
``datatype`` of the file, ``num_channels`` interleaved channels), how many
there are (``nsamples``), the sample rate and whether they are real or complex.
:meth:`Recording.read` gives any range as float32 or complex64 samples.

Formats (``fmt`` names; the suffixes that select them):

* ``f32``  raw little-endian float32 (``.f32 .fc32r .float .bin32``; ``rate`` given)
* ``c64``  raw little-endian complex64 (``.c64 .cf32 .fc32 .cfile .complex``)
* ``sigmf`` SigMF (``.sigmf-meta``, ``.sigmf-data``, ``.sigmf`` base): any
  datatype of gnuradio.transient.sigmf (rf32_le, cf32_le, ri16_le, ci16_le,
  ri8, ci8, ...); integers are converted to float without scaling; the
  captures' ``core:header_bytes`` are skipped
* ``sigrok`` sigrok session ``.sr`` (a zip archive): one analog channel (or a
  logic probe as 0.0/1.0), selected by ``channel``; the channel is extracted
  chunk by chunk into a temporary float32 file (removed by :meth:`close`)
* ``sigproc`` SIGPROC ``.tim`` / ``.fil`` (8, 16 or 32 bits, nchans channels)
* ``presto`` PRESTO ``.dat`` with its ``.inf`` (float32)

Malformed input (truncated data, garbled headers, a format that cannot be
recognised, a channel that does not exist) raises :class:`RecordingError`
(a ValueError) with a one-line message naming the file; missing files raise
OSError. Needs numpy, not GNU Radio.
"""

import configparser
import math
import os
import re
import struct
import zipfile
import zlib

import numpy as np

try:  # inside the package
    from . import io_checks
    from . import sigmf
    from . import sigrok as _sr
    from . import tempfiles
    from . import timeseries as _ts
except ImportError:  # imported by file path
    import io_checks
    import sigmf  # noqa: F401
    import sigrok as _sr
    import tempfiles
    import timeseries as _ts

__all__ = ["FORMATS", "Recording", "RecordingError", "open_recording", "detect_format"]

FORMATS = ("f32", "c64", "sigmf", "sigrok", "sigproc", "presto")

_SUFFIXES = {
    ".f32": "f32", ".float": "f32", ".fc32r": "f32", ".bin32": "f32", ".rf32": "f32",
    ".c64": "c64", ".cf32": "c64", ".fc32": "c64", ".cfile": "c64", ".complex": "c64",
    ".sigmf-meta": "sigmf", ".sigmf-data": "sigmf", ".sigmf": "sigmf",
    ".sr": "sigrok",
    ".tim": "sigproc", ".fil": "sigproc",
    ".dat": "presto", ".inf": "presto",
}


class RecordingError(io_checks.InputError):
    """A recording that cannot be read as asked (the message names the file)."""


class Recording(object):
    """A recording as a stream of samples (see the module documentation).

    Attributes:
      path         the file given
      format       one of FORMATS
      data_path    the file holding the samples (a temporary file for sigrok)
      offset       bytes before the first sample in data_path
      datatype     sigmf.Datatype of the samples in data_path
      num_channels channels interleaved in data_path
      channel      the channel streamed (index), or None for all (vectors)
      channel_name name of that channel when the format names them
      nsamples     samples per channel
      rate         sample rate in Hz, or None when unknown
      is_complex   True when the stream is complex64, else float32
      frequency    centre frequency in Hz (SigMF core:frequency), or None
      info         dict of format-specific metadata (SigMF: "doc", the whole
                   metadata; SIGPROC: "header"; PRESTO: "inf"; sigrok: "metadata")
    """

    def __init__(self, path, fmt, data_path, offset, datatype, nsamples, rate,
                 num_channels=1, channel=0, channel_name=None, frequency=None,
                 info=None, temp_files=()):
        self.path = path
        self.format = fmt
        self.data_path = data_path
        self.offset = int(offset)
        self.datatype = datatype if isinstance(datatype, sigmf.Datatype) \
            else sigmf.Datatype(datatype)
        self.nsamples = int(nsamples)
        self.rate = None if rate is None else float(rate)
        self.num_channels = int(num_channels)
        self.channel = channel
        self.channel_name = channel_name
        self.frequency = frequency
        self.info = info or {}
        self.temp_files = list(temp_files)

    @property
    def is_complex(self):
        return self.datatype.complex

    @property
    def vlen(self):
        """Items per stream sample: num_channels when all are streamed, else 1."""
        return self.num_channels if self.channel is None else 1

    @property
    def frame_bytes(self):
        return self.datatype.sample_bytes * self.num_channels

    @property
    def native(self):
        """True when the bytes of data_path can be streamed as they are (one
        channel of float32/complex64, header a multiple of the item size)."""
        return (self.datatype.native_float and self.num_channels == 1 and
                self.offset % self.datatype.sample_bytes == 0)

    @property
    def duration(self):
        return None if self.rate is None else self.nsamples / self.rate

    def read(self, start=0, count=None, f=None):
        """Samples start .. start+count-1 (clipped to the recording) as float32
        or complex64; shape (n,) for one channel, (n, num_channels) for all.
        f: an open binary file of data_path to read from (faster for many reads)."""
        if count is None:
            count = self.nsamples - start
        count = max(0, min(int(count), self.nsamples - int(start)))
        dt = self.datatype
        ncomp = 2 if dt.complex else 1
        close = f is None
        if f is None:
            f = open(self.data_path, "rb")
        try:
            f.seek(self.offset + int(start) * self.frame_bytes)
            raw = np.fromfile(f, dtype=dt.numpy, count=count * self.num_channels * ncomp)
        finally:
            if close:
                f.close()
        if raw.size != count * self.num_channels * ncomp:
            raise RecordingError("%s: ends early (changed while being read?)" %
                                 self.data_path)
        if self.channel is not None:
            return sigmf.convert(raw, dt, self.num_channels, self.channel)
        cols = [sigmf.convert(raw, dt, self.num_channels, c) for c in range(self.num_channels)]
        return np.stack(cols, axis=1)

    def close(self):
        """Remove the temporary files (sigrok extraction)."""
        for p in self.temp_files:
            try:
                os.unlink(p)
            except OSError:
                pass
        self.temp_files = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return ("Recording(%r, %s, %d samples, rate %s, %s, channel %r)" %
                (self.path, self.format, self.nsamples, self.rate, self.datatype.text,
                 self.channel_name if self.channel_name is not None else self.channel))


def _err(path, what):
    return RecordingError("%s: %s" % (path, what))


def detect_format(path):
    """Format name of path by its suffix, else by its first bytes (SIGPROC
    header, zip archive = sigrok, SigMF JSON). RecordingError if unknown."""
    low = path.lower()
    for suf in sorted(_SUFFIXES, key=len, reverse=True):
        if low.endswith(suf):
            return _SUFFIXES[suf]
    with open(path, "rb") as f:
        head = f.read(64)
    if head[:4] == struct.pack("<i", 12) and head[4:16] == b"HEADER_START":
        return "sigproc"
    if head[:4] == b"PK\x03\x04":
        return "sigrok"
    if head.lstrip()[:1] == b"{" and b'"global"' in head:
        return "sigmf"
    raise _err(path, "unknown recording format (suffix %r); give --format (%s)" %
               (os.path.splitext(path)[1], "|".join(FORMATS)))


def _check_rate(path, rate):
    if rate is None:
        return None
    try:
        rate = float(rate)
    except (TypeError, ValueError):
        raise _err(path, "sample rate %r is not a number" % (rate, ))
    if not (math.isfinite(rate) and rate > 0):
        raise _err(path, "sample rate must be positive, got %r" % rate)
    return rate


def _pick_channel(path, channel, num_channels, names=None, allow_all=False):
    """Index of the channel asked for (None = all when allowed)."""
    if channel is None:
        if num_channels == 1:
            return 0
        if allow_all:
            return None
        raise _err(path, "has %d channels; choose one with --channel (0..%d)" %
                   (num_channels, num_channels - 1))
    if names and str(channel) in names:
        return names.index(str(channel))
    try:
        c = int(channel)
    except (TypeError, ValueError):
        raise _err(path, "no channel %r (have %s)" %
                   (channel, ", ".join(names) if names else "0..%d" % (num_channels - 1)))
    if not 0 <= c < num_channels:
        raise _err(path, "channel %d out of range (0..%d)" % (c, num_channels - 1))
    return c


def _raw(path, fmt, rate, channel):
    dt = sigmf.Datatype("rf32_le" if fmt == "f32" else "cf32_le")
    size = io_checks.input_file(path)
    if size % dt.sample_bytes:
        raise _err(path, "%d bytes are not a whole number of %s samples (%d bytes each; "
                   "truncated?)" % (size, "float32" if fmt == "f32" else "complex64",
                                     dt.sample_bytes))
    _pick_channel(path, channel, 1)
    return Recording(path, fmt, path, 0, dt, size // dt.sample_bytes, _check_rate(path, rate))


def _sigmf(path, rate, channel, allow_all):
    io_checks.input_file(sigmf.meta_paths(path)[0], "SigMF metadata")
    meta = sigmf.read_meta(path, check_data=False)
    size = io_checks.input_file(meta.data_path, "SigMF data")
    io_checks.channels(meta.data_path, meta.num_channels, meta.frame_bytes,
                       size - meta.data_offset)
    meta.measure()
    if meta.sample_rate is None and rate is None:
        r = None
    else:
        r = _check_rate(path, rate if rate is not None else meta.sample_rate)
    ch = _pick_channel(meta.meta_path, channel, meta.num_channels, allow_all=allow_all)
    return Recording(meta.meta_path, "sigmf", meta.data_path, meta.data_offset,
                     meta.datatype, meta.nsamples, r, num_channels=meta.num_channels,
                     channel=ch, frequency=meta.frequency, info={"doc": meta.doc,
                                                                   "meta": meta})


def sigproc_header(path, limit=1 << 20):
    """(header dict, header bytes) of a SIGPROC file, reading only the header."""
    size = io_checks.input_file(path)
    with open(path, "rb") as f:
        raw = f.read(min(size, limit))
    c = _ts._Cursor(path, raw)
    try:
        first = c.string("HEADER_START")
    except ValueError:
        raise _err(path, "not a SIGPROC file (no HEADER_START)")
    if first != "HEADER_START":
        raise _err(path, "not a SIGPROC file: starts with %r, not HEADER_START" % first)
    header = {}
    while True:
        key = c.string("keyword")
        if key == "HEADER_END":
            break
        if key in _ts._SIGPROC_MARKERS:
            continue
        if key in _ts._SIGPROC_STR:
            header[key] = c.string(key)
        elif key in _ts._SIGPROC_INT:
            (header[key], ) = struct.unpack("<i", c.take(4, key))
        elif key in _ts._SIGPROC_DOUBLE:
            (v, ) = struct.unpack("<d", c.take(8, key))
            if key == "fchannel":
                header.setdefault("fchannels", []).append(v)
            else:
                header[key] = v
        elif key in _ts._SIGPROC_BYTE:
            header[key] = c.take(1, key)[0]
        else:
            raise _err(path, "unknown SIGPROC header keyword %r at byte %d" %
                       (key, c.pos - len(key)))
    return header, c.pos


def _sigproc(path, rate, channel, allow_all):
    try:
        header, hbytes = sigproc_header(path)
    except RecordingError:
        raise
    except ValueError as e:
        raise RecordingError(str(e))
    tsamp = header.get("tsamp")
    if tsamp is None or not (math.isfinite(tsamp) and tsamp > 0):
        raise _err(path, "SIGPROC header has no valid tsamp (%r)" % (tsamp, ))
    nbits = header.get("nbits", 32)
    nchans = header.get("nchans", 1)
    if nchans < 1:
        raise _err(path, "SIGPROC nchans must be >= 1, got %d" % nchans)
    if header.get("nifs", 1) != 1:
        raise _err(path, "SIGPROC nifs = %d: only one IF is supported" % header["nifs"])
    dt = {32: "rf32_le", 16: "ru16_le", 8: "ri8" if header.get("signed", 0) else "ru8"}
    if nbits not in dt:
        raise _err(path, "SIGPROC nbits = %d is not supported (8, 16 or 32)" % nbits)
    dt = sigmf.Datatype(dt[nbits])
    payload = os.path.getsize(path) - hbytes
    frame = dt.sample_bytes * nchans
    io_checks.channels(path, nchans, frame, payload)
    if payload % frame:
        raise _err(path, "data size %d bytes is not a whole number of samples of %d "
                   "channel(s) x %d bits (truncated?)" % (payload, nchans, nbits))
    n = payload // frame
    if header.get("nsamples", 0) not in (0, n):
        raise _err(path, "header says nsamples = %d, the file holds %d (truncated?)" %
                   (header["nsamples"], n))
    r = _check_rate(path, rate) if rate is not None else 1.0 / tsamp
    ch = _pick_channel(path, channel, nchans, allow_all=allow_all)
    return Recording(path, "sigproc", path, hbytes, dt, n, r, num_channels=nchans,
                     channel=ch, info={"header": header})


def _presto(path, rate, channel):
    base = os.path.splitext(path)[0]
    dat, inf = base + ".dat", base + ".inf"
    if not os.path.exists(inf):
        raise _err(dat, "PRESTO .dat needs its .inf (%s not found; or give --format f32 "
                   "--rate R)" % inf)
    io_checks.input_file(inf, "PRESTO .inf")
    try:
        info = _ts.read_inf(inf)
    except ValueError as e:
        raise RecordingError(str(e))
    size = io_checks.input_file(dat)
    if size != 4 * info["nsamples"]:
        raise _err(dat, "holds %d bytes, but %s describes %d float32 samples (%d bytes; "
                   "truncated?)" % (size, inf, info["nsamples"], 4 * info["nsamples"]))
    _pick_channel(dat, channel, 1)
    r = _check_rate(dat, rate) if rate is not None else 1.0 / info["tsamp"]
    return Recording(dat, "presto", dat, 0, "rf32_le", info["nsamples"], r, info={"inf": info})


def _sigrok(path, rate, channel, tmpdir=None):
    """Extract one analog channel (or logic probe) to a temporary float32 file."""
    io_checks.input_file(path, "sigrok session")
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as e:
        raise _err(path, "not a sigrok session file (not a zip archive: %s)" % e)
    tmp = None
    try:
        with zf:
            members = set(zf.namelist())
            if "metadata" not in members:
                raise _err(path, "not a sigrok session file (no 'metadata' member)")
            try:
                text = zf.read("metadata").decode("utf-8", "replace")
                if "version" in members:
                    v = zf.read("version").decode("ascii", "replace").strip()
                    if v not in ("1", "2"):
                        raise _err(path, "unsupported sigrok session version %r" % v)
            except (zipfile.BadZipFile, EOFError, OSError) as e:
                raise _err(path, "damaged sigrok session file: %s" % e)
            cp = configparser.ConfigParser(interpolation=None, strict=False)
            cp.optionxform = str
            try:
                cp.read_string(text)
            except configparser.Error as e:
                raise _err(path, "unparsable sigrok metadata: %s" %
                           str(e).splitlines()[0])
            sections = sorted((s for s in cp.sections() if re.fullmatch(r"device [0-9]+", s)),
                              key=lambda s: int(s.split()[1]))
            if not sections:
                raise _err(path, "sigrok metadata has no [device N] section")
            dev = dict(cp.items(sections[0]))
            devno = int(sections[0].split()[1])
            if "samplerate" not in dev:
                raise _err(path, "sigrok metadata gives no samplerate")
            try:
                srate = _sr.parse_samplerate(dev["samplerate"])
            except ValueError as e:
                raise _err(path, str(e))
            analog = {}
            for key, value in dev.items():
                m = re.fullmatch(r"analog([0-9]+)", key)
                if m:
                    analog[value] = "analog-%d-%s" % (devno, m.group(1))
            probes = {}
            for key, value in dev.items():
                m = re.fullmatch(r"probe([0-9]+)", key)
                if m:
                    probes[value] = int(m.group(1)) - 1
            if channel is None:
                if len(analog) != 1:
                    raise _err(path, "choose a channel with --channel (analog: %s; logic: %s)" %
                               (", ".join(sorted(analog)) or "none",
                                ", ".join(sorted(probes)) or "none"))
                name = next(iter(analog))
            elif str(channel) in analog or str(channel) in probes:
                name = str(channel)
            else:
                try:
                    name = sorted(analog)[int(channel)]
                except (ValueError, IndexError):
                    raise _err(path, "no channel %r (analog: %s; logic: %s)" %
                               (channel, ", ".join(sorted(analog)) or "none",
                                ", ".join(sorted(probes)) or "none"))
            n = 0  # the file is kept for the Recording; removed below if this fails
            with tempfiles.temporary(tmpdir, "transient-detect-", ".f32", keep=True) as tmp, \
                    open(tmp, "wb") as out:
                if name in analog:
                    prefix = analog[name]
                    try:
                        chunks = _sr._chunk_names(members, prefix, path)
                    except ValueError as e:
                        raise RecordingError(str(e))
                    if not chunks:
                        raise _err(path, "analog channel %r has no %s-N chunks" %
                                   (name, prefix))
                    io_checks.extract_budget(path, sum(zf.getinfo(c).file_size
                                                       for c in chunks), tmpdir)
                    for c in chunks:
                        n += _copy_member(zf, c, path, out, 4, None)
                else:
                    try:
                        unitsize = int(dev.get("unitsize", 1))
                    except ValueError:
                        raise _err(path, "sigrok unitsize %r is not a number" %
                                   dev.get("unitsize"))
                    bit = probes[name]
                    if unitsize < 1 or bit >= 8 * unitsize:
                        raise _err(path, "unitsize %d cannot hold probe %s" %
                                   (unitsize, name))
                    prefix = dev.get("capturefile", "logic-1")
                    try:
                        chunks = _sr._chunk_names(members, prefix, path)
                    except ValueError as e:
                        raise RecordingError(str(e))
                    if not chunks and prefix in members:
                        chunks = [prefix]
                    if not chunks:
                        raise _err(path, "logic probes listed but no %s chunks" % prefix)
                    io_checks.extract_budget(path, 4 * sum(zf.getinfo(c).file_size // unitsize
                                                           for c in chunks), tmpdir)
                    for c in chunks:
                        n += _copy_member(zf, c, path, out, unitsize, bit)
        r = _check_rate(path, rate) if rate is not None else srate
        rec = Recording(path, "sigrok", tmp, 0, "rf32_le", n, r, channel_name=name,
                        info={"metadata": dev}, temp_files=[tmp])
        tmp = None
        return rec
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _copy_member(zf, member, path, out, unitsize, bit, piece=1 << 22):
    """Stream zip member to out as float32: analog (bit None, float32 as they
    are) or bit `bit` of `unitsize`-byte logic samples. Returns the samples."""
    n = 0
    tail = b""
    try:
        with zf.open(member) as f:
            while True:
                data = f.read(piece)
                if not data:
                    break
                data = tail + data
                cut = len(data) - len(data) % unitsize
                data, tail = data[:cut], data[cut:]
                if bit is None:
                    x = np.frombuffer(data, dtype="<f4")
                else:
                    byte, shift = divmod(bit, 8)
                    col = np.frombuffer(data, dtype=np.uint8)[byte::unitsize]
                    x = ((col >> shift) & 1).astype("<f4")
                out.write(x.tobytes())
                n += len(x)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error) as e:
        raise _err(path, "cannot read member %r: %s" % (member, e))
    if tail:
        raise _err(path, "%s is not a whole number of %d-byte samples (truncated?)" %
                   (member, unitsize))
    return n


def open_recording(path, fmt=None, rate=None, channel=None, allow_all_channels=False,
                   tmpdir=None):
    """Open a recording for streaming (see the module documentation).

    fmt: one of FORMATS, or None/"auto" to recognise it. rate: sample rate in
    Hz (needed for raw files to give times in seconds; overrides the file's).
    channel: channel index or name (multi-channel formats, sigrok). With
    allow_all_channels, a multi-channel recording without a channel streams
    vectors of all channels (Recording.channel None).
    """
    if fmt in (None, "auto"):
        if not os.path.exists(path) and not path.endswith((".sigmf-meta", ".sigmf")) \
                and not os.path.exists(sigmf.meta_paths(path)[0]):
            raise FileNotFoundError("%s: no such file" % path)
        fmt = detect_format(path) if os.path.exists(path) else "sigmf"
    if fmt not in FORMATS:
        raise RecordingError("%s: unknown format %r (%s)" % (path, fmt, "|".join(FORMATS)))
    if fmt in ("f32", "c64"):
        return _raw(path, fmt, rate, channel)
    if fmt == "sigmf":
        return _sigmf(path, rate, channel, allow_all_channels)
    if fmt == "sigproc":
        return _sigproc(path, rate, channel, allow_all_channels)
    if fmt == "presto":
        return _presto(path, rate, channel)
    return _sigrok(path, rate, channel, tmpdir)
