#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Test data of the FRB block tests: SIGPROC filterbank files written from
numpy arrays, and dispersed bursts injected into spectra with the delays of
the dedispersion definition (transient/dedisp.h)."""

import math
import struct

import numpy as np

KDM = 4.148808e3  # MHz^2 pc^-1 cm^3 s


def _string(s):
    b = s.encode("ascii")
    return struct.pack("<i", len(b)) + b


def header_bytes(nchans, nbits, fch1, foff, tsamp, tstart=60000.0, source="test"):
    """A SIGPROC filterbank header."""
    h = _string("HEADER_START")
    h += _string("source_name") + _string(source)
    for key, fmt, value in (("telescope_id", "<i", 0), ("machine_id", "<i", 0),
                            ("data_type", "<i", 1), ("nchans", "<i", nchans),
                            ("nbits", "<i", nbits), ("nifs", "<i", 1),
                            ("fch1", "<d", fch1), ("foff", "<d", foff),
                            ("tsamp", "<d", tsamp), ("tstart", "<d", tstart)):
        h += _string(key) + struct.pack(fmt, value)
    return h + _string("HEADER_END")


def pack(x, nbits):
    """Spectra x (nsamples x nchans, values in the range of nbits) as the file
    stores them: nbits < 8 packed with the first channel in the most
    significant bits."""
    x = np.asarray(x)
    if nbits == 32:
        return x.astype("<f4").tobytes()
    if nbits == 16:
        return x.astype("<u2").tobytes()
    if nbits == 8:
        return x.astype("u1").tobytes()
    per = 8 // nbits
    v = x.astype(np.uint8).reshape(-1, per)
    out = np.zeros(v.shape[0], dtype=np.uint8)
    for i in range(per):
        out |= (v[:, i] << (8 - nbits * (i + 1))).astype(np.uint8)
    return out.tobytes()


def write_fil(path, x, fch1, foff, tsamp, nbits=32, **kw):
    """Writes spectra x (nsamples x nchans) as a filterbank file."""
    x = np.asarray(x)
    with open(path, "wb") as f:
        f.write(header_bytes(x.shape[1], nbits, fch1, foff, tsamp, **kw))
        f.write(pack(x, nbits))


def delays(dm, nchan, fch1, foff, tsamp):
    """delay_c(dm) in samples for every channel (round half up, reference the
    highest channel centre)."""
    f = fch1 + foff * np.arange(nchan)
    fref = f.max()
    return np.floor(KDM * dm * (f**-2.0 - fref**-2.0) / tsamp + 0.5).astype(np.int64)


def inject(x, dm, start, width, amp, fch1, foff, tsamp):
    """Adds a burst of `width` samples and amplitude `amp` per channel that
    reaches the top of the band at sample `start`, dispersed at dm."""
    y = x.copy()
    for c, d in enumerate(delays(dm, x.shape[1], fch1, foff, tsamp)):
        y[start + d:start + d + width, c] += amp
    return y


def dedisperse(x, dly, mask=None, zero_dm=False, mean=False):
    """The dedispersion definition in float32, channels summed in order:
    Y[p][d] = sum_c x[p + dly[d][c]][c] (0 past the end). dly: ndm x nchan."""
    x = np.asarray(x, dtype=np.float32)
    n, nchan = x.shape
    used = np.ones(nchan, bool) if mask is None else np.asarray(mask, bool)
    if zero_dm:
        m = np.zeros(n, np.float32)
        for c in range(nchan):
            if used[c]:
                m += x[:, c]
        m /= np.float32(used.sum())
        x = x - m[:, None] * used[None, :]
        x = x.astype(np.float32)
    y = np.zeros((n, len(dly)), np.float32)
    for d, row in enumerate(dly):
        for c in range(nchan):
            if not used[c]:
                continue
            k = int(row[c])
            if k < n:
                y[:n - k, d] += x[k:, c]
        if mean:
            y[:, d] /= np.float32(used.sum())
    return y


def burst_snr(amp, width, nused, sigma=1.0):
    """Matched boxcar S/N of an injected burst in white noise of sigma."""
    return amp * width * nused / (sigma * math.sqrt(width * nused))
