#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Gravitational-wave strain files as the Gravitational Wave Open Science
Center (https://gwosc.org) distributes them: HDF5 with the strain in
strain/Strain (attribute Xspacing: the sample interval in s) and the GPS time
of the first sample in meta/GPSstart. Needs h5py (Debian: python3-h5py).
"""

import math

import numpy as np

__all__ = ["Strain", "is_hdf5", "read_gwosc", "MAX_SAMPLES"]

# Refuse strain longer than this (2^31 samples: 16 GiB in float64) before
# reading it: the size comes from the file's header.
MAX_SAMPLES = 1 << 31

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


class Strain(object):
    """data (float64), sample_rate (Hz), gps_start (s, None when the file does
    not say), path."""

    def __init__(self, data, sample_rate, gps_start, path):
        self.data = data
        self.sample_rate = float(sample_rate)
        self.gps_start = gps_start
        self.path = path

    def __len__(self):
        return len(self.data)


def is_hdf5(path):
    """True when the file starts with the HDF5 signature."""
    try:
        with open(path, "rb") as f:
            return f.read(8) == HDF5_SIGNATURE
    except OSError:
        return False


def read_gwosc(path):
    """Strain of a GWOSC HDF5 file; ValueError naming the file when it is not
    one (missing strain/Strain or Xspacing, a bad interval, non-finite values)."""
    try:
        import h5py
    except ImportError:
        raise ValueError("%s: reading HDF5 strain needs h5py (Debian: python3-h5py; "
                         "pip: h5py)" % path)
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise ValueError("%s: not a readable HDF5 file: %s" % (path, e))
    with f:
        if "strain/Strain" not in f:
            raise ValueError("%s: no strain/Strain dataset (not a GWOSC strain file)" % path)
        ds = f["strain/Strain"]
        if ds.ndim != 1 or ds.shape[0] == 0 or ds.shape[0] > MAX_SAMPLES:
            raise ValueError("%s: strain/Strain must be one-dimensional with 1 to %d "
                             "samples, has shape %s" % (path, MAX_SAMPLES, ds.shape))
        if "Xspacing" not in ds.attrs:
            raise ValueError("%s: strain/Strain has no Xspacing (sample interval)" % path)
        try:
            dt = float(ds.attrs["Xspacing"])
        except (TypeError, ValueError):
            raise ValueError("%s: Xspacing is not a number" % path)
        if not (math.isfinite(dt) and dt > 0):
            raise ValueError("%s: Xspacing must be > 0, got %r" % (path, dt))
        gps = None
        if "meta/GPSstart" in f:
            gps = float(f["meta/GPSstart"][()])
        elif "Xstart" in ds.attrs:
            gps = float(ds.attrs["Xstart"])
        data = np.asarray(ds[()], dtype=np.float64)
    if not np.all(np.isfinite(data)):
        bad = int(np.count_nonzero(~np.isfinite(data)))
        raise ValueError("%s: %d strain samples are not finite (gaps); cut them out first" %
                         (path, bad))
    return Strain(data, 1.0 / dt, gps, path)
