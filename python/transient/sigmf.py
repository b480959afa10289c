#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""SigMF recordings: reading a .sigmf-meta/.sigmf-data pair and writing
metadata with annotations (SigMF 1.x, https://sigmf.org).

A SigMF recording is a JSON metadata file (``NAME.sigmf-meta``) with the
objects ``global`` (``core:datatype``, ``core:sample_rate``, ``core:version``,
...), ``captures`` (segments of the data: ``core:sample_start``, optionally
``core:frequency``, ``core:datetime`` and ``core:header_bytes``) and
``annotations`` (``core:sample_start``, ``core:sample_count``, ``core:label``,
``core:freq_lower_edge``/``core:freq_upper_edge`` and any namespaced field),
beside a raw data file (``NAME.sigmf-data``, or the file named by the global
``core:dataset`` for a non-conforming dataset).

The datatype is ``[r|c]`` (real or complex), a sample type ``f32``, ``f64``,
``i32``, ``i16``, ``i8``, ``u32``, ``u16`` or ``u8``, and ``_le``/``_be``
(none for 8-bit types), e.g. ``cf32_le`` or ``ri16_le``. A complex sample is
the real part followed by the imaginary part; ``core:num_channels`` channels
are interleaved sample by sample.

    meta = read_meta("capture.sigmf-meta")
    meta.datatype.numpy          # dtype of one component, e.g. <f4
    meta.sample_rate, meta.nsamples, meta.data_path, meta.data_offset
    x = meta.read(0, 1000)       # float32 or complex64 samples (channel 0)

    m = new_meta("cf32_le", 1e6, dataset="capture.cf32")
    add_annotations(m, [{"core:sample_start": 10, "core:sample_count": 5,
                         "core:label": "pulse"}])
    write_meta("capture.sigmf-meta", m)   # atomic: temporary file + rename

Malformed metadata (not JSON, no ``global``, an unknown datatype, bad
captures or annotations) and data files that are not a whole number of
samples raise ValueError naming the file; missing files raise OSError. This
module needs numpy and nothing of GNU Radio.
"""

import copy
import json
import math
import os
import re

import numpy as np

try:  # inside the package
    from . import tempfiles
except ImportError:  # imported by file path
    import tempfiles

__all__ = [
    "SIGMF_VERSION", "Datatype", "SigMFMeta", "parse_datatype", "read_meta", "load_json",
    "new_meta", "add_annotations", "annotations", "write_meta", "meta_paths",
    "atomic_write"
]

SIGMF_VERSION = "1.0.0"
META_EXT = ".sigmf-meta"
DATA_EXT = ".sigmf-data"

_DT_RE = re.compile(r"^(r|c)(f32|f64|i32|i16|i8|u32|u16|u8)(_le|_be)?$")


class Datatype(object):
    """A parsed SigMF datatype: ``complex`` (bool), ``kind`` ('f', 'i' or
    'u'), ``bits``, ``endian`` ('<', '>' or '|'), ``numpy`` (the dtype of one
    component), ``sample_bytes`` (one sample of one channel)."""

    def __init__(self, text):
        m = _DT_RE.match(text) if isinstance(text, str) else None
        if not m:
            raise ValueError("unknown SigMF datatype %r (e.g. rf32_le, cf32_le, ri16_le, ci8)" %
                             (text, ))
        self.text = text
        self.complex = m.group(1) == "c"
        self.kind = m.group(2)[0]
        self.bits = int(m.group(2)[1:])
        if self.bits == 8:
            if m.group(3):
                raise ValueError("SigMF datatype %r: 8-bit types have no byte order" % text)
            self.endian = "|"
        else:
            if not m.group(3):
                raise ValueError("SigMF datatype %r needs _le or _be" % text)
            self.endian = "<" if m.group(3) == "_le" else ">"
        self.numpy = np.dtype("%s%s%d" % (self.endian, self.kind, self.bits // 8))
        self.sample_bytes = self.numpy.itemsize * (2 if self.complex else 1)

    @property
    def native_float(self):
        """True for rf32_le / cf32_le: the bytes are float32 / complex64 as
        GNU Radio streams them (on a little-endian host)."""
        return self.kind == "f" and self.bits == 32 and self.endian == "<"

    def __repr__(self):
        return "Datatype(%r)" % self.text


def parse_datatype(text):
    """Datatype of a SigMF ``core:datatype`` string (ValueError if unknown)."""
    return Datatype(text)


def meta_paths(path):
    """(meta path, data path) of a recording given by either file or the base name."""
    base = path
    for ext in (META_EXT, DATA_EXT, ".sigmf"):
        if path.endswith(ext):
            base = path[:-len(ext)]
            break
    return base + META_EXT, base + DATA_EXT


def load_json(path):
    """The metadata dict of a .sigmf-meta file, checked for the SigMF layout
    (ValueError otherwise)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError("%s: not SigMF metadata (invalid JSON: %s)" % (path, e))
    except RecursionError:
        raise ValueError("%s: not SigMF metadata (JSON nested too deeply)" % path)
    if not isinstance(doc, dict) or not isinstance(doc.get("global"), dict):
        raise ValueError("%s: not SigMF metadata (no 'global' object)" % path)
    for key in ("captures", "annotations"):
        if key in doc and not (isinstance(doc[key], list) and
                               all(isinstance(o, dict) for o in doc[key])):
            raise ValueError("%s: SigMF '%s' must be a list of objects" % (path, key))
    doc.setdefault("captures", [])
    doc.setdefault("annotations", [])
    for key in ("captures", "annotations"):
        for i, o in enumerate(doc[key]):
            s = o.get("core:sample_start", 0 if key == "captures" else None)
            if not (isinstance(s, int) and not isinstance(s, bool) and s >= 0):
                raise ValueError("%s: %s[%d] core:sample_start must be an integer >= 0, got %r"
                                 % (path, key, i, s))
            n = o.get("core:sample_count", 0)
            if not (isinstance(n, int) and not isinstance(n, bool) and n >= 0):
                raise ValueError("%s: %s[%d] core:sample_count must be an integer >= 0, got %r"
                                 % (path, key, i, n))
    return doc


class SigMFMeta(object):
    """A SigMF recording (see the module documentation).

    Attributes: meta_path, data_path, doc (the whole metadata dict),
    datatype (Datatype), sample_rate (Hz, None if not given), num_channels,
    data_offset (bytes before the first sample: the first capture's
    ``core:header_bytes``; later captures may not have any), nsamples (samples per channel in the data file),
    frequency (``core:frequency`` of the first capture, None if not given).
    """

    def __init__(self, meta_path, data_path, doc, check_data=True):
        self.meta_path = meta_path
        self.data_path = data_path
        self.doc = doc
        g = doc["global"]
        if "core:datatype" not in g:
            raise ValueError("%s: SigMF global has no core:datatype" % meta_path)
        try:
            self.datatype = Datatype(g["core:datatype"])
        except ValueError as e:
            raise ValueError("%s: %s" % (meta_path, e))
        rate = g.get("core:sample_rate")
        if rate is not None:
            if (isinstance(rate, bool) or not isinstance(rate, (int, float)) or
                    not math.isfinite(rate) or rate <= 0):
                raise ValueError("%s: core:sample_rate must be a positive number, got %r" %
                                 (meta_path, rate))
            rate = float(rate)
        self.sample_rate = rate
        nch = g.get("core:num_channels", 1)
        if not (isinstance(nch, int) and not isinstance(nch, bool) and nch >= 1):
            raise ValueError("%s: core:num_channels must be an integer >= 1, got %r" %
                             (meta_path, nch))
        self.num_channels = nch
        hb = 0
        for i, c in enumerate(doc["captures"]):
            h = c.get("core:header_bytes", 0)
            if not (isinstance(h, int) and not isinstance(h, bool) and h >= 0):
                raise ValueError("%s: captures[%d] core:header_bytes must be an integer >= 0" %
                                 (meta_path, i))
            if i == 0:
                hb = h
            elif h:
                raise ValueError("%s: captures[%d] has core:header_bytes: headers inside the "
                                 "data are not supported (only before the first sample)" %
                                 (meta_path, i))
        self.data_offset = hb
        caps = doc["captures"]
        f = caps[0].get("core:frequency") if caps else None
        self.frequency = float(f) if isinstance(f, (int, float)) and \
            not isinstance(f, bool) else None
        self.nsamples = None
        if check_data:
            self.measure()

    def measure(self):
        """Set nsamples from the data file's size (OSError if it is missing,
        ValueError if it does not hold whole samples)."""
        size = os.path.getsize(self.data_path)
        frame = self.frame_bytes
        payload = size - self.data_offset
        if payload < 0:
            raise ValueError("%s: %d bytes, shorter than its %d header bytes" %
                             (self.data_path, size, self.data_offset))
        if payload % frame:
            raise ValueError("%s: %d data bytes are not a whole number of %s samples "
                             "(%d bytes each; truncated?)" %
                             (self.data_path, payload, self.datatype.text, frame))
        self.nsamples = payload // frame

    @property
    def frame_bytes(self):
        """Bytes of one sample of all channels."""
        return self.datatype.sample_bytes * self.num_channels

    def frequency_at(self, sample):
        """core:frequency of the capture that holds `sample` (the last capture
        whose core:sample_start is <= sample), None if that capture has none."""
        return frequency_at(self.doc["captures"], sample)

    @property
    def annotations(self):
        return self.doc["annotations"]

    @property
    def captures(self):
        return self.doc["captures"]

    def read(self, start=0, count=None, channel=0):
        """Samples start .. start+count-1 of one channel as float32 (real
        datatypes) or complex64 (complex ones); integers are converted to
        floats without scaling."""
        if count is None:
            count = self.nsamples - start
        count = max(0, min(count, self.nsamples - start))
        dt = self.datatype
        with open(self.data_path, "rb") as f:
            f.seek(self.data_offset + start * self.frame_bytes)
            raw = np.fromfile(f, dtype=dt.numpy,
                              count=count * self.num_channels * (2 if dt.complex else 1))
        return convert(raw, dt, self.num_channels, channel)


def frequency_at(captures, sample):
    """core:frequency of the capture of `sample` in a captures list (None if none)."""
    f = None
    for c in sorted(captures, key=lambda c: c.get("core:sample_start", 0)):
        if c.get("core:sample_start", 0) > sample:
            break
        f = c.get("core:frequency")
    return float(f) if isinstance(f, (int, float)) and not isinstance(f, bool) else None


def convert(raw, dt, num_channels=1, channel=0):
    """Components `raw` (numpy array of dt.numpy) of whole samples of
    num_channels interleaved channels -> float32/complex64 samples of `channel`."""
    ncomp = 2 if dt.complex else 1
    raw = raw.reshape(-1, num_channels, ncomp)[:, channel, :]
    if dt.complex:
        out = np.empty(raw.shape[0], dtype=np.complex64)
        out.real = raw[:, 0]
        out.imag = raw[:, 1]
        return out
    return raw[:, 0].astype(np.float32)


def dataset_inside(name):
    """True when a core:dataset name stays inside the metadata's folder: a
    relative path without '..' (a recording must not reach outside it)."""
    norm = os.path.normpath(name)
    return not (os.path.isabs(name) or norm == os.pardir or
                norm.startswith(os.pardir + os.sep))


def read_meta(path, check_data=True):
    """Read a SigMF recording given by its .sigmf-meta, .sigmf-data or base
    name. The data file is NAME.sigmf-data unless the global
    ``core:dataset`` names another (relative to the metadata's folder).
    With check_data, the data file must exist and hold whole samples."""
    meta_path, data_path = meta_paths(path)
    doc = load_json(meta_path)
    ds = doc["global"].get("core:dataset")
    if ds is not None:
        if not isinstance(ds, str) or not ds:
            raise ValueError("%s: core:dataset must be a file name" % meta_path)
        if not dataset_inside(ds):
            raise ValueError("%s: core:dataset %r must name a file in the metadata's folder "
                             "(not an absolute path, no '..')" % (meta_path, ds))
        data_path = os.path.join(os.path.dirname(meta_path), ds)
    return SigMFMeta(meta_path, data_path, doc, check_data=check_data)


def new_meta(datatype, sample_rate=None, dataset=None, description=None, header_bytes=0,
             num_channels=1, frequency=None, extra_global=None):
    """A new metadata dict (global, one capture at sample 0, no annotations).
    dataset: the data file's name for a non-conforming dataset (any file
    name; relative to the metadata's folder), None for NAME.sigmf-data."""
    parse_datatype(datatype)
    g = {"core:datatype": datatype, "core:version": SIGMF_VERSION}
    if sample_rate is not None:
        g["core:sample_rate"] = float(sample_rate)
    if num_channels != 1:
        g["core:num_channels"] = int(num_channels)
    if dataset is not None:
        g["core:dataset"] = dataset
    if description:
        g["core:description"] = description
    if extra_global:
        g.update(extra_global)
    cap = {"core:sample_start": 0}
    if header_bytes:
        cap["core:header_bytes"] = int(header_bytes)
    if frequency is not None:
        cap["core:frequency"] = float(frequency)
    return {"global": g, "captures": [cap], "annotations": []}


def add_annotations(doc, items, extension=None):
    """Append annotation dicts to doc (in place; kept sorted by
    core:sample_start as SigMF asks, stable for equal starts). extension: an
    optional {"name": ..., "version": ..., "optional": True} entry for
    global core:extensions (added once)."""
    for a in items:
        if "core:sample_start" not in a:
            raise ValueError("an annotation needs core:sample_start")
    doc = doc if doc is not None else {}
    anns = list(doc.get("annotations", [])) + [dict(a) for a in items]
    anns.sort(key=lambda a: a["core:sample_start"])
    doc["annotations"] = anns
    if extension:
        exts = doc["global"].setdefault("core:extensions", [])
        if not any(e.get("name") == extension["name"] for e in exts if isinstance(e, dict)):
            exts.append(dict(extension))
    return doc


def annotations(path, label=None):
    """Annotations of a .sigmf-meta file (only those whose core:label starts
    with `label` when given)."""
    doc = load_json(meta_paths(path)[0])
    out = doc["annotations"]
    if label is not None:
        out = [a for a in out if str(a.get("core:label", "")).startswith(label)]
    return out


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    raise TypeError("cannot write %r to JSON" % (o, ))


def _clean(o):
    """JSON has no NaN or infinity: write them as null."""
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, (float, np.floating)) and not math.isfinite(o):
        return None
    return o


def atomic_write(path, data, mode=0o644):
    """Write bytes to path through a temporary file in the same folder and a
    rename: readers see the old file or the whole new one, never half."""
    folder = os.path.dirname(os.path.abspath(path))
    with tempfiles.temporary(folder, "." + os.path.basename(path) + ".", ".tmp") as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)


def serialize(doc):
    """Metadata dict -> the bytes of a .sigmf-meta file."""
    return (json.dumps(_clean(copy.deepcopy(doc)), indent=2, default=_json_default,
                       allow_nan=False) + "\n").encode("utf-8")


def write_meta(path, doc):
    """Write a metadata dict to path atomically (NaN/inf become null)."""
    atomic_write(path, serialize(doc))
