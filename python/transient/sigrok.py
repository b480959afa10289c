#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Reader for sigrok session files (.sr).

A sigrok session file is a zip archive holding

* ``version``: the format version ("2" for current files, "1" for old ones);
* ``metadata``: an INI file with one ``[device N]`` section per device, giving
  ``samplerate`` (e.g. ``8 MHz``), ``total probes``, ``probeK`` names of the
  logic probes (K = 1..total probes, probe K is bit K-1 of a sample),
  ``unitsize`` (bytes per logic sample), ``capturefile`` (prefix of the logic
  chunks, usually ``logic-1``) and ``analogK`` names of the analog channels;
* ``logic-1-1``, ``logic-1-2``, ...: logic samples, ``unitsize`` bytes each,
  least significant byte first (version 1 files use one ``logic-1`` file);
* ``analog-1-K-1``, ``analog-1-K-2``, ...: samples of analog channel K as
  little-endian float32.

This module needs only the Python standard library; with numpy installed the
channels come back as numpy arrays (float32 for analog channels, uint8 0/1 for
logic probes), otherwise as ``array.array('f')`` and ``array.array('B')``.
It does not depend on GNU Radio and can be imported by file path.

Example::

    rec = read_sr("/usr/local/share/gr-transient/examples/data/i2c_sda_analog_8MHz.sr")
    rec.samplerate          # 8000000.0
    rec.analog["SDA analog"]  # float32 samples
    rec.logic["SDA"]          # 0/1 per sample
"""

import array
import configparser
import math
import re
import sys
import zipfile

__all__ = ["SigrokSession", "read_sr", "parse_samplerate"]

try:  # optional
    import numpy as _np
except ImportError:  # pragma: no cover - exercised on machines without numpy
    _np = None

_RATE_UNITS = {"": 1.0, "hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}


def parse_samplerate(text):
    """Parse a sigrok samplerate such as '8 MHz', '500 kHz' or '1000000' (Hz)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*",
                     str(text))
    if not m or m.group(2).lower() not in _RATE_UNITS:
        raise ValueError("unrecognized samplerate %r" % (text,))
    rate = float(m.group(1)) * _RATE_UNITS[m.group(2).lower()]
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError("samplerate must be a positive finite number, got %r" % (text,))
    return rate


class SigrokSession(object):
    """Contents of one device of a sigrok session file.

    Attributes:
      path        the file read
      version     format version (int)
      samplerate  samples per second (float)
      num_samples samples per channel (int)
      analog      dict: analog channel name -> float32 samples
      logic       dict: logic probe name -> 0/1 per sample (uint8)
      unitsize    bytes per logic sample (0 when there are no logic probes)
      metadata    dict of the device section of the metadata file
    """

    def __init__(self, path, version, samplerate, analog, logic, unitsize, metadata):
        self.path = path
        self.version = version
        self.samplerate = samplerate
        self.analog = analog
        self.logic = logic
        self.unitsize = unitsize
        self.metadata = metadata
        lengths = [len(v) for v in analog.values()] + [len(v) for v in logic.values()]
        self.num_samples = lengths[0] if lengths else 0

    @property
    def duration(self):
        """Length of the record in seconds."""
        return self.num_samples / self.samplerate

    def analog_channel(self, name):
        """Samples of the analog channel `name` (KeyError lists the names)."""
        try:
            return self.analog[name]
        except KeyError:
            raise KeyError("no analog channel %r in %s (have: %s)" %
                           (name, self.path, ", ".join(sorted(self.analog)) or "none"))

    def logic_channel(self, name):
        """0/1 samples of the logic probe `name` (KeyError lists the names)."""
        try:
            return self.logic[name]
        except KeyError:
            raise KeyError("no logic probe %r in %s (have: %s)" %
                           (name, self.path, ", ".join(sorted(self.logic)) or "none"))

    def __repr__(self):
        return ("SigrokSession(%r, samplerate=%g, num_samples=%d, analog=%r, logic=%r)" %
                (self.path, self.samplerate, self.num_samples, sorted(self.analog),
                 sorted(self.logic)))


def _chunk_names(names, prefix, path):
    """Names prefix-1, prefix-2, ... in order; ValueError when numbering has gaps."""
    pat = re.compile(re.escape(prefix) + r"-([0-9]+)$")
    nums = sorted(int(m.group(1)) for m in (pat.match(n) for n in names) if m)
    if nums and nums != list(range(1, len(nums) + 1)):
        raise ValueError("%s: chunks of %s are not numbered 1..%d (found %s; missing?)" %
                         (path, prefix, len(nums), nums))
    return ["%s-%d" % (prefix, k) for k in nums]


def _read_member(zf, name, path):
    try:
        return zf.read(name)
    except Exception as e:  # BadZipFile (CRC), EOFError, zlib.error on damaged data
        raise ValueError("%s: cannot read member %r: %s" % (path, name, e))


def _floats(data, use_numpy):
    if use_numpy:
        return _np.frombuffer(data, dtype="<f4").astype(_np.float32)
    a = array.array("f")
    if a.itemsize != 4:  # pragma: no cover - exotic platforms
        raise ValueError("platform float is not 32 bits")
    a.frombytes(data)
    if sys.byteorder != "little":  # pragma: no cover
        a.byteswap()
    return a


def _bits(data, unitsize, bit, use_numpy):
    """0/1 values of bit `bit` of each `unitsize`-byte little-endian sample."""
    byte, shift = divmod(bit, 8)
    column = data[byte::unitsize] if unitsize > 1 else data
    if use_numpy:
        return (_np.frombuffer(column, dtype=_np.uint8) >> shift) & 1
    table = bytes(((v >> shift) & 1) for v in range(256))
    return array.array("B", bytes(column).translate(table))


def read_sr(path, device=None, use_numpy=None):
    """Read a sigrok session file.

    Args:
      path: file name (or file object) of the .sr zip archive.
      device: number of the ``[device N]`` section to read (default: the first).
      use_numpy: True/False to force the array type; None uses numpy if present.

    Returns a SigrokSession. Raises ValueError when the file is not a sigrok
    session, is damaged or truncated (unreadable zip members, a chunk that is
    not a whole number of samples, channels of different lengths, missing
    chunks), and FileNotFoundError/OSError when it cannot be opened.
    """
    if use_numpy is None:
        use_numpy = _np is not None
    elif use_numpy and _np is None:
        raise ValueError("use_numpy=True but numpy is not installed")
    name = getattr(path, "name", path)
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as e:
        raise ValueError("%s: not a sigrok session file (not a zip archive: %s)" %
                         (name, e))
    with zf:
        members = set(zf.namelist())
        if "metadata" not in members:
            raise ValueError("%s: not a sigrok session file (no 'metadata' member)" % name)
        version = 2
        if "version" in members:
            vtext = _read_member(zf, "version", name).decode("ascii", "replace").strip()
            if not vtext.isdigit():
                raise ValueError("%s: bad version %r" % (name, vtext))
            version = int(vtext)
            if version not in (1, 2):
                raise ValueError("%s: unsupported sigrok session version %d" %
                                 (name, version))
        meta_text = _read_member(zf, "metadata", name).decode("utf-8", "replace")
        cp = configparser.ConfigParser(interpolation=None, strict=False)
        cp.optionxform = str  # keep key case
        try:
            cp.read_string(meta_text)
        except configparser.Error as e:
            raise ValueError("%s: unparsable metadata: %s" % (name, e))
        sections = sorted((s for s in cp.sections() if re.fullmatch(r"device [0-9]+", s)),
                          key=lambda s: int(s.split()[1]))
        if not sections:
            raise ValueError("%s: metadata has no [device N] section" % name)
        if device is None:
            section = sections[0]
        else:
            section = "device %d" % device
            if section not in sections:
                raise ValueError("%s: no [%s] in metadata (have %s)" %
                                 (name, section, ", ".join(sections)))
        dev = dict(cp.items(section))
        devno = int(section.split()[1])
        if "samplerate" not in dev:
            raise ValueError("%s: [%s] gives no samplerate" % (name, section))
        samplerate = parse_samplerate(dev["samplerate"])

        def number(key, default):
            try:
                return int(dev.get(key, default))
            except ValueError:
                raise ValueError("%s: [%s] %s=%r is not a number" %
                                 (name, section, key, dev.get(key)))

        # ---- logic probes
        logic = {}
        total_probes = number("total probes", 0)
        unitsize = number("unitsize", 1 if total_probes else 0)
        probes = {}
        for key, value in dev.items():
            m = re.fullmatch(r"probe([0-9]+)", key)
            if m:
                k = int(m.group(1))
                if k < 1:
                    raise ValueError("%s: bad probe index in %r" % (name, key))
                probes[k] = value
        if probes:
            if unitsize < 1 or max(probes) > 8 * unitsize:
                raise ValueError("%s: unitsize %d cannot hold probe %d" %
                                 (name, unitsize, max(probes)))
            prefix = dev.get("capturefile", "logic-1")
            chunks = _chunk_names(members, prefix, name)
            if not chunks and prefix in members:  # version 1: one file
                chunks = [prefix]
            if not chunks:
                raise ValueError("%s: logic probes listed but no %s chunks" %
                                 (name, prefix))
            raw = b"".join(_read_member(zf, c, name) for c in chunks)
            if len(raw) % unitsize:
                raise ValueError("%s: logic data (%d bytes) is not a whole number of "
                                 "%d-byte samples (truncated?)" %
                                 (name, len(raw), unitsize))
            for k in sorted(probes):
                if probes[k] in logic:
                    raise ValueError("%s: duplicate probe name %r" % (name, probes[k]))
                logic[probes[k]] = _bits(raw, unitsize, k - 1, use_numpy)
            del raw

        # ---- analog channels
        analog = {}
        for key, value in dev.items():
            m = re.fullmatch(r"analog([0-9]+)", key)
            if not m:
                continue
            prefix = "analog-%d-%s" % (devno, m.group(1))
            chunks = _chunk_names(members, prefix, name)
            if not chunks:
                raise ValueError("%s: analog channel %r has no %s-N chunks" %
                                 (name, value, prefix))
            parts = []
            for c in chunks:
                data = _read_member(zf, c, name)
                if len(data) % 4:
                    raise ValueError("%s: %s is %d bytes, not a whole number of float32 "
                                     "samples (truncated?)" % (name, c, len(data)))
                parts.append(data)
            if value in analog:
                raise ValueError("%s: duplicate analog channel name %r" % (name, value))
            analog[value] = _floats(b"".join(parts), use_numpy)

    lengths = {n: len(v) for n, v in list(analog.items()) + list(logic.items())}
    if not lengths:
        raise ValueError("%s: [%s] has neither logic probes nor analog channels" %
                         (name, section))
    if len(set(lengths.values())) > 1:
        raise ValueError("%s: channels have different lengths (truncated?): %s" %
                         (name, ", ".join("%s=%d" % kv for kv in sorted(lengths.items()))))
    return SigrokSession(name, version, samplerate, analog, logic, unitsize, dev)


def _main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: %s FILE.sr\n" % argv[0])
        return 2
    try:
        s = read_sr(argv[1])
    except (ValueError, OSError) as e:
        sys.stderr.write("error: %s\n" % e)
        return 1
    print("%s: %d samples at %g Hz (%.6f s)" % (s.path, s.num_samples, s.samplerate,
                                                 s.duration))
    for n, v in sorted(s.analog.items()):
        print("  analog %-16r min %g max %g" % (n, min(v), max(v)))
    for n, v in sorted(s.logic.items()):
        ones = sum(v) if _np is None or not hasattr(v, "sum") else int(v.sum())
        print("  logic  %-16r ones %d" % (n, ones))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
