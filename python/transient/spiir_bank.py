#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""SPIIR filter banks in Python: the bank of <transient/spiir.h> and its
binary file format (share/doc/gr-transient/spiir.md), with numpy only.

A bank holds templates; each template is a structured array of FILTER_DTYPE
(one record per first-order filter: complex pole a1, complex gain b0, integer
delay in full-rate samples, multirate level), and the bank has one sampling
interval dt. The record layout is the 40-byte filter record of the file format,
so a bank is written and read with plain numpy views.

    bank = SpiirBank([filters_t0, filters_t1], dt=1 / 4096)
    bank.save("bank.spiir")
    same = SpiirBank.load("bank.spiir")

Validation follows tr_spiir_bank_create(): at least one template, no empty
template, dt finite and > 0, finite coefficients, |a1| < 1 (in double, with
hypot), 0 <= delay <= MAX_DELAY, 0 <= level <= MAX_LEVEL. Violations raise
ValueError with a message naming the template and filter.
"""

import math
import os

import numpy as np

__all__ = ["FILTER_DTYPE", "MAGIC", "MAX_DELAY", "MAX_LEVEL", "SpiirBank"]

MAGIC = b"TRSPIIR1"
MAX_DELAY = 1 << 24  # TR_SPIIR_MAX_DELAY
MAX_LEVEL = 16  # TR_SPIIR_MAX_LEVEL
MAX_TEMPLATES = 1 << 20  # TR_SPIIR_MAX_TEMPLATES

# One filter: a1 (re, im), b0 (re, im) as little-endian doubles, delay and
# level as little-endian int32: the 40-byte record of the bank file.
FILTER_DTYPE = np.dtype([("a1", "<c16"), ("b0", "<c16"), ("delay", "<i4"),
                         ("level", "<i4")])
_HEADER = np.dtype([("magic", "S8"), ("ntemplates", "<u4"), ("reserved", "<u4"),
                    ("dt", "<f8")])


def _as_filters(f, t):
    """Template t as a FILTER_DTYPE array (copy), from a structured array with
    fields a1, b0, delay and level (level optional, default 0)."""
    f = np.asarray(f)
    if f.dtype.names is None or not {"a1", "b0", "delay"} <= set(f.dtype.names):
        raise ValueError("template %d: expected a structured array with fields a1, b0, "
                         "delay (and level)" % t)
    if f.ndim != 1:
        raise ValueError("template %d: filters must be a one-dimensional array" % t)
    out = np.zeros(f.shape[0], dtype=FILTER_DTYPE)
    out["a1"] = f["a1"]
    out["b0"] = f["b0"]
    delay = np.asarray(f["delay"])
    level = np.asarray(f["level"]) if "level" in f.dtype.names else np.zeros(len(f))
    for name, v in (("delay", delay), ("level", level)):
        if len(v) and not np.all(np.isfinite(v) & (v == np.round(v))):
            raise ValueError("template %d: %s must be integers" % (t, name))
        if len(v) and (np.min(v) < -2**31 or np.max(v) >= 2**31):
            raise ValueError("template %d: %s out of the int32 range" % (t, name))
    out["delay"] = delay
    out["level"] = level
    return out


def _validate(templates, dt):
    if not templates:
        raise ValueError("spiir bank: a bank needs at least one template")
    if len(templates) > MAX_TEMPLATES:
        raise ValueError("spiir bank: %d templates, at most %d supported" %
                         (len(templates), MAX_TEMPLATES))
    if not (isinstance(dt, (int, float, np.floating, np.integer)) and math.isfinite(dt)
            and dt > 0):
        raise ValueError("spiir bank: sampling interval dt must be finite and > 0, got %r"
                         % (dt,))
    for t, f in enumerate(templates):
        if len(f) == 0:
            raise ValueError("spiir bank: template %d is empty (0 filters)" % t)
        a1, b0 = f["a1"], f["b0"]
        bad = ~(np.isfinite(a1.real) & np.isfinite(a1.imag) & np.isfinite(b0.real) &
                np.isfinite(b0.imag))
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError("spiir bank: template %d filter %d: non-finite coefficient "
                             "(a1 = %r, b0 = %r)" % (t, i, complex(a1[i]), complex(b0[i])))
        mag = np.hypot(a1.real, a1.imag)
        bad = ~(mag < 1.0)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError("spiir bank: template %d filter %d: unstable pole, |a1| = "
                             "%.17g >= 1" % (t, i, mag[i]))
        bad = (f["delay"] < 0) | (f["delay"] > MAX_DELAY)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError("spiir bank: template %d filter %d: delay %d outside [0, %d]"
                             % (t, i, f["delay"][i], MAX_DELAY))
        bad = (f["level"] < 0) | (f["level"] > MAX_LEVEL)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError("spiir bank: template %d filter %d: level %d outside [0, %d]"
                             % (t, i, f["level"][i], MAX_LEVEL))


class SpiirBank(object):
    """A validated SPIIR bank: `templates` (list of FILTER_DTYPE arrays) and `dt`.

    Raises ValueError on an invalid bank (see the module documentation).
    """

    def __init__(self, templates, dt):
        if isinstance(templates, np.ndarray) and templates.dtype.names is not None:
            templates = [templates]
        self.templates = [_as_filters(f, t) for t, f in enumerate(list(templates))]
        self.dt = float(dt) if isinstance(dt, (int, float, np.floating, np.integer)) else dt
        _validate(self.templates, self.dt)

    # ---- arrays -----------------------------------------------------------

    @classmethod
    def from_arrays(cls, a1, b0, delay, counts, dt, level=None):
        """Bank from flat arrays (template 0's filters, then template 1's, ...)
        and counts[t] filters per template, as tr_spiir_bank_create takes them."""
        a1 = np.asarray(a1, dtype=np.complex128).ravel()
        b0 = np.asarray(b0, dtype=np.complex128).ravel()
        delay = np.asarray(delay).ravel()
        level = np.zeros(len(a1), dtype=np.int64) if level is None else np.asarray(
            level).ravel()
        counts = np.asarray(counts).ravel()
        if not (len(a1) == len(b0) == len(delay) == len(level)):
            raise ValueError("spiir bank: a1, b0, delay and level must have the same "
                             "length (%d, %d, %d, %d)" %
                             (len(a1), len(b0), len(delay), len(level)))
        if len(counts) and (np.any(counts < 0) or np.any(counts != np.round(counts))):
            raise ValueError("spiir bank: counts must be non-negative integers")
        counts = counts.astype(np.int64)
        if int(counts.sum()) != len(a1):
            raise ValueError("spiir bank: counts add up to %d filters, the arrays hold %d"
                             % (int(counts.sum()), len(a1)))
        rec = np.zeros(len(a1), dtype=[("a1", "<c16"), ("b0", "<c16"), ("delay", "<f8"),
                                       ("level", "<f8")])
        rec["a1"], rec["b0"], rec["delay"], rec["level"] = a1, b0, delay, level
        edges = np.concatenate(([0], np.cumsum(counts)))
        return cls([rec[edges[t]:edges[t + 1]] for t in range(len(counts))], dt)

    @property
    def ntemplates(self):
        return len(self.templates)

    @property
    def counts(self):
        """Filters per template (uint32 array)."""
        return np.array([len(f) for f in self.templates], dtype=np.uint32)

    @property
    def filters(self):
        """Every filter, template after template (one FILTER_DTYPE array)."""
        return np.concatenate(self.templates)

    @property
    def sample_rate(self):
        return 1.0 / self.dt

    @property
    def max_delay(self):
        return int(max(int(f["delay"].max()) for f in self.templates))

    def arrays(self):
        """(a1, b0, delay, level, counts): the flat arrays of from_arrays() and of
        the block's array constructor."""
        f = self.filters
        return (f["a1"].copy(), f["b0"].copy(), f["delay"].astype(np.int32),
                f["level"].astype(np.int32), self.counts)

    def __len__(self):
        return self.ntemplates

    def __eq__(self, other):
        return (isinstance(other, SpiirBank) and self.dt == other.dt and
                self.ntemplates == other.ntemplates and
                all(np.array_equal(a, b) for a, b in zip(self.templates, other.templates)))

    def __repr__(self):
        return "SpiirBank(%d templates, %d filters, dt=%g)" % (
            self.ntemplates, int(self.counts.sum()), self.dt)

    # ---- files ------------------------------------------------------------

    def tobytes(self):
        """The bank file's bytes (little-endian, share/doc/gr-transient/spiir.md)."""
        head = np.zeros(1, dtype=_HEADER)
        head["magic"] = MAGIC
        head["ntemplates"] = self.ntemplates
        head["dt"] = self.dt
        return (head.tobytes() + self.counts.astype("<u4").tobytes() +
                self.filters.astype(FILTER_DTYPE).tobytes())

    def save(self, path):
        """Write the bank file (readable by tr_spiir_bank_load)."""
        data = self.tobytes()
        tmp = "%s.tmp%d" % (path, os.getpid())
        with open(tmp, "wb") as fp:
            fp.write(data)
        os.replace(tmp, path)

    @classmethod
    def frombytes(cls, data, name="bank"):
        """Parse a bank file's bytes. Malformed data raises ValueError."""
        data = bytes(data)
        if len(data) < _HEADER.itemsize:
            raise ValueError("%s: truncated header (%d bytes)" % (name, len(data)))
        head = np.frombuffer(data, dtype=_HEADER, count=1)[0]
        if bytes(head["magic"]) != MAGIC:
            raise ValueError("%s: not a bank file (bad magic)" % name)
        if int(head["reserved"]) != 0:
            raise ValueError("%s: reserved header field is %d, not 0" %
                             (name, int(head["reserved"])))
        nt = int(head["ntemplates"])
        rest = len(data) - _HEADER.itemsize
        if nt > rest // 4:
            raise ValueError("%s: truncated filter counts (%d templates announced)" %
                             (name, nt))
        counts = np.frombuffer(data, dtype="<u4", count=nt, offset=_HEADER.itemsize)
        total = int(counts.astype(np.int64).sum())
        off = _HEADER.itemsize + 4 * nt
        have = len(data) - off
        if have != total * FILTER_DTYPE.itemsize:
            what = "truncated" if have < total * FILTER_DTYPE.itemsize else "trailing data"
            raise ValueError("%s: %s: %d filters announced, %d bytes of filters" %
                             (name, what, total, have))
        filters = np.frombuffer(data, dtype=FILTER_DTYPE, count=total, offset=off)
        edges = np.concatenate(([0], np.cumsum(counts.astype(np.int64))))
        return cls([filters[edges[t]:edges[t + 1]] for t in range(nt)], float(head["dt"]))

    @classmethod
    def load(cls, path):
        """Read a bank file (as written by save() or tr_spiir_bank_save)."""
        with open(path, "rb") as fp:
            data = fp.read()
        return cls.frombytes(data, name=str(path))
