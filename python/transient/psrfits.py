"""PSRFITS search-mode reader (astropy.io.fits, Debian python3-astropy).

Format: the PSRFITS definition (W. van Straten, R. N. Manchester et al.,
www.atnf.csiro.au/research/pulsar/psrfits_definition/Psrfits.html): a primary
header (OBSFREQ, OBSBW, OBSNCHAN, STT_IMJD/SMJD/OFFS, SRC_NAME, OBS_MODE) and a
SUBINT binary table whose rows each hold NSBLK spectra of NPOL x NCHAN samples
(DATA, NBITS bits each, packed first sample in the most significant bits below
8 bits) with their channel frequencies (DAT_FREQ), weights (DAT_WTS), scales
(DAT_SCL) and offsets (DAT_OFFS, NPOL x NCHAN each). A sample's value is

    (raw - ZERO_OFF) * DAT_SCL[pol, chan] + DAT_OFFS[pol, chan]

and the total intensity of a channel, times its weight DAT_WTS[chan], is the
first polarisation (POL_TYPE AA+BB, INTEN, IQUV, or NPOL = 1) or the sum of the
first two (AABB, AABBCRCI).

astropy parses the headers and gives the layout of a row; the rows are read
one at a time through a memory map of the file, so a file larger than memory
streams. Every header value is checked against the file's size before anything
is allocated from it. ``to_sigproc`` writes the total intensity as a 32-bit
float SIGPROC filterbank (the input of transient-frb).
"""

import math
import os
import struct
import warnings

import numpy as np

# Most channels and spectra per row accepted: bounds the float buffer of one row
# whatever the header says (the row must also be in the file).
MAX_NCHAN = 1 << 24
MAX_ROW_SAMPLES = 1 << 28
# POL_TYPE -> the polarisations summed for the total intensity.
_TOTAL = {"AA+BB": 1, "INTEN": 1, "IQUV": 1, "AABB": 2, "AABBCRCI": 2}
# DATA column codes per NBITS (FITS TFORM letters).
_DATA_CODES = {1: "B", 2: "B", 4: "B", 8: "B", 16: "I", 32: "E"}
# FITS binary table codes -> their (big-endian) layout in the file; TZERO and
# TSCAL of DATA are applied on top, as the FITS standard defines them.
_DISK = {"B": np.dtype("u1"), "I": np.dtype(">i2"), "J": np.dtype(">i4"),
         "E": np.dtype(">f4"), "D": np.dtype(">f8")}
FITS_MAGIC = b"SIMPLE  ="
SUFFIXES = (".fits", ".sf", ".fit")


class PsrfitsError(ValueError):
    """A file that is not a readable PSRFITS search-mode file; the message names it."""


def _fits():
    try:
        from astropy.io import fits
    except ImportError:
        raise PsrfitsError("reading PSRFITS needs astropy (Debian: python3-astropy, "
                           "PyPI: astropy)")
    return fits


def looks_like_psrfits(path):
    """True when the name ends in .fits/.sf/.fit or the file starts as FITS does."""
    if path.lower().endswith(SUFFIXES):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(len(FITS_MAGIC)) == FITS_MAGIC
    except OSError:
        return False


def _card(hdr, key, path, where, kind=None, required=True):
    if key not in hdr or hdr[key] is None or (isinstance(hdr[key], str) and
                                              hdr[key].strip() in ("", "*")):
        if required:
            raise PsrfitsError("%s: %s header has no %s" % (path, where, key))
        return None
    v = hdr[key]
    if kind is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise PsrfitsError("%s: %s %s = %r is not a finite number" %
                               (path, where, key, v))
        return float(v)
    if kind is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise PsrfitsError("%s: %s %s = %r is not an integer" % (path, where, key, v))
        return int(v)
    return str(v).strip()


class SearchFile:
    """An open PSRFITS search-mode file: header values as attributes, rows as
    total-intensity spectra (``row(i)``). Use as a context manager or close()."""

    def __init__(self, path):
        self.path = path
        fits = _fits()
        try:
            size = os.stat(path).st_size
        except OSError as e:
            raise PsrfitsError("%s: %s" % (path, e.strerror))
        try:
            with open(path, "rb") as f:
                magic = f.read(len(FITS_MAGIC))
        except OSError as e:
            raise PsrfitsError("%s: %s" % (path, e.strerror))
        if magic != FITS_MAGIC:
            raise PsrfitsError("%s: not a FITS file (does not start with SIMPLE =)" % path)
        try:
            # astropy warns of a short file; the size check below says it in one line.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._hdul = fits.open(path, memmap=True, lazy_load_hdus=True)
                primary = self._hdul[0].header
                try:
                    subint = self._hdul["SUBINT"]
                except KeyError:
                    raise PsrfitsError("%s: no SUBINT table (not PSRFITS search-mode data)" %
                                       path)
                info = self._hdul.fileinfo(self._hdul.index_of("SUBINT"))
                sh = subint.header
                columns = subint.columns
        except PsrfitsError:
            self.close()
            raise
        except Exception as e:  # astropy's many errors for a malformed FITS file
            self.close()
            raise PsrfitsError("%s: not a readable FITS file (%s)" %
                               (path, str(e).splitlines()[0] if str(e) else type(e).__name__))
        try:
            self._parse(primary, sh, columns, info["datLoc"], size)
        except Exception:
            self.close()
            raise

    def _parse(self, primary, sh, columns, data_loc, size):
        path = self.path
        mode = _card(primary, "OBS_MODE", path, "primary", required=False)
        if mode is not None and mode.upper() not in ("SEARCH", "SRCH"):
            raise PsrfitsError("%s: OBS_MODE = %s: only search-mode data can be searched" %
                               (path, mode))
        self.source_name = _card(primary, "SRC_NAME", path, "primary", required=False) or ""
        self.obsfreq = _card(primary, "OBSFREQ", path, "primary", float, False)
        self.obsbw = _card(primary, "OBSBW", path, "primary", float, False)
        self.obsnchan = _card(primary, "OBSNCHAN", path, "primary", int, False)
        imjd = _card(primary, "STT_IMJD", path, "primary", int)
        smjd = _card(primary, "STT_SMJD", path, "primary", float)
        offs = _card(primary, "STT_OFFS", path, "primary", float, False) or 0.0
        if sh.get("XTENSION") != "BINTABLE":
            raise PsrfitsError("%s: SUBINT is not a binary table" % path)
        self.tbin = _card(sh, "TBIN", path, "SUBINT", float)
        self.nchan = _card(sh, "NCHAN", path, "SUBINT", int)
        self.npol = _card(sh, "NPOL", path, "SUBINT", int)
        self.nbits = _card(sh, "NBITS", path, "SUBINT", int)
        self.nsblk = _card(sh, "NSBLK", path, "SUBINT", int)
        self.zero_off = _card(sh, "ZERO_OFF", path, "SUBINT", float, False) or 0.0
        self.data_zero, self.data_scale = 0.0, 1.0
        self.pol_type = (_card(sh, "POL_TYPE", path, "SUBINT", required=False) or "").upper()
        nsuboffs = _card(sh, "NSUBOFFS", path, "SUBINT", int, False) or 0
        if not self.tbin > 0:
            raise PsrfitsError("%s: TBIN = %g: must be > 0" % (path, self.tbin))
        if not 1 <= self.nchan <= MAX_NCHAN:
            raise PsrfitsError("%s: NCHAN = %d: must be in 1..%d" % (path, self.nchan,
                                                                     MAX_NCHAN))
        if self.npol not in (1, 2, 4):
            raise PsrfitsError("%s: NPOL = %d: must be 1, 2 or 4" % (path, self.npol))
        if self.nbits not in _DATA_CODES:
            raise PsrfitsError("%s: NBITS = %d: must be 1, 2, 4, 8, 16 or 32" %
                               (path, self.nbits))
        if self.nsblk < 1:
            raise PsrfitsError("%s: NSBLK = %d: must be >= 1" % (path, self.nsblk))
        samples = self.nsblk * self.npol * self.nchan
        if samples > MAX_ROW_SAMPLES:
            raise PsrfitsError("%s: NSBLK x NPOL x NCHAN = %d samples per row: at most %d" %
                               (path, samples, MAX_ROW_SAMPLES))
        if (samples * self.nbits) % 8:
            raise PsrfitsError("%s: NSBLK x NPOL x NCHAN x NBITS does not fill whole bytes" %
                               path)
        if self.npol == 1:
            self.pols_summed = 1
        elif self.pol_type in _TOTAL:
            self.pols_summed = _TOTAL[self.pol_type]
            if self.pols_summed > self.npol:
                raise PsrfitsError("%s: POL_TYPE = %s needs 2 polarisations, NPOL = %d" %
                                   (path, self.pol_type, self.npol))
        else:
            raise PsrfitsError("%s: POL_TYPE = %r with NPOL = %d: total intensity unknown "
                               "(AA+BB, INTEN, IQUV, AABB or AABBCRCI)" %
                               (path, self.pol_type, self.npol))
        self.nrows = _card(sh, "NAXIS2", path, "SUBINT", int)
        row_bytes = _card(sh, "NAXIS1", path, "SUBINT", int)
        if self.nrows < 1:
            raise PsrfitsError("%s: the SUBINT table has no rows" % path)
        if data_loc + row_bytes * self.nrows > size:
            whole = max(0, (size - data_loc) // row_bytes) if row_bytes else 0
            raise PsrfitsError("%s: truncated: the SUBINT table has %d rows of %d bytes but "
                               "the file holds %d whole rows" %
                               (path, self.nrows, row_bytes, whole))
        self._row_dtype = self._layout(columns, row_bytes)
        self._rows = np.memmap(path, dtype=self._row_dtype, mode="r", offset=data_loc,
                               shape=(self.nrows, ))
        first = self._rows[0]
        self.freqs = np.array(first["DAT_FREQ"], dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(self.freqs)):
            raise PsrfitsError("%s: DAT_FREQ of row 1 is not finite" % path)
        if self.nchan > 1:
            steps = np.diff(self.freqs)
            self.foff = float(self.freqs[-1] - self.freqs[0]) / (self.nchan - 1)
            if self.foff == 0 or np.any(np.abs(steps - self.foff) > 1e-3 * abs(self.foff)):
                raise PsrfitsError("%s: DAT_FREQ is not evenly spaced (a filterbank needs "
                                   "channels of equal width)" % path)
        else:
            bw = _card(sh, "CHAN_BW", path, "SUBINT", float, False) or self.obsbw
            if not bw:
                raise PsrfitsError("%s: one channel and no CHAN_BW or OBSBW" % path)
            self.foff = float(bw)
        self.fch1 = float(self.freqs[0])
        self.nspectra = self.nrows * self.nsblk
        start = smjd + offs
        if "OFFS_SUB" in self._row_dtype.names:
            # The first row may not start the observation (NSUBOFFS > 0):
            # OFFS_SUB is the centre of the row from the start time.
            centre = float(np.asarray(first["OFFS_SUB"]).reshape(-1)[0])
            if math.isfinite(centre) and (centre != 0 or nsuboffs):
                start += centre - 0.5 * self.nsblk * self.tbin
        self.tstart = imjd + start / 86400.0

    def _layout(self, columns, row_bytes):
        """The on-disk (big-endian) structured dtype of the columns read."""
        path = self.path
        names = [n.upper() for n in columns.names]
        native = columns.dtype
        need = {"DATA": self.nsblk * self.npol * self.nchan * self.nbits // 8,
                "DAT_FREQ": self.nchan, "DAT_WTS": self.nchan,
                "DAT_SCL": self.nchan * self.npol, "DAT_OFFS": self.nchan * self.npol}
        fields = {}
        for key in list(need) + ["OFFS_SUB"]:
            if key not in names:
                if key == "OFFS_SUB":
                    continue
                raise PsrfitsError("%s: the SUBINT table has no %s column" % (path, key))
            i = names.index(key)
            col = columns[i]
            fmt = str(col.format).upper()
            code = fmt.lstrip("0123456789")[:1]
            repeat = int(fmt[:len(fmt) - len(fmt.lstrip("0123456789"))] or 1)
            if code in ("P", "Q"):
                raise PsrfitsError("%s: column %s is a variable-length array: not supported"
                                   % (path, key))
            if code not in _DISK:
                raise PsrfitsError("%s: column %s has format %s: not a number column" %
                                   (path, key, fmt))
            offset = native.fields[columns.names[i]][1]
            disk = _DISK[code]
            nbytes = repeat * disk.itemsize
            if key == "DATA":
                if code != _DATA_CODES[self.nbits]:
                    raise PsrfitsError("%s: DATA column format %s does not match NBITS = %d "
                                       "(%s expected)" % (path, fmt, self.nbits,
                                                          _DATA_CODES[self.nbits]))
                if nbytes * 8 != self.nsblk * self.npol * self.nchan * self.nbits:
                    raise PsrfitsError("%s: DATA holds %d bytes per row; NSBLK x NPOL x NCHAN "
                                       "x NBITS / 8 = %d" % (path, nbytes, need[key]))
                if col.bzero not in (None, 0) or col.bscale not in (None, 1):
                    self.data_zero = float(col.bzero or 0)
                    self.data_scale = float(1 if col.bscale is None else col.bscale)
            else:
                if code not in ("E", "D"):
                    raise PsrfitsError("%s: column %s has format %s: a float (E or D) "
                                       "expected" % (path, key, fmt))
                if key != "OFFS_SUB" and repeat != need[key]:
                    raise PsrfitsError("%s: column %s holds %d values per row; %d expected" %
                                       (path, key, repeat, need[key]))
            if offset + nbytes > row_bytes:
                raise PsrfitsError("%s: column %s lies outside the %d-byte row" %
                                   (path, key, row_bytes))
            fields[key] = (np.dtype((disk, (repeat, ))) if repeat > 1 else disk, offset)
        return np.dtype({"names": list(fields), "formats": [f[0] for f in fields.values()],
                         "offsets": [f[1] for f in fields.values()], "itemsize": row_bytes})

    def close(self):
        hdul = getattr(self, "_hdul", None)
        if hdul is not None:
            hdul.close()
            self._hdul = None
        self._rows = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _raw(self, data):
        """DATA bytes of one row -> (NSBLK, NPOL, NCHAN) float32 raw values."""
        n = self.nsblk * self.npol * self.nchan
        b = np.asarray(data).reshape(-1)
        if self.nbits < 8:  # first sample in the most significant bits
            mask = (1 << self.nbits) - 1
            v = np.empty((b.size, 8 // self.nbits), np.float32)
            for i in range(8 // self.nbits):
                v[:, i] = (b >> (8 - self.nbits * (i + 1))) & mask
            v = v.reshape(-1)[:n]
        else:
            v = b.astype(np.float32)
            if (self.data_scale, self.data_zero) != (1.0, 0.0):  # TSCAL, TZERO of DATA
                v = v * np.float32(self.data_scale) + np.float32(self.data_zero)
        return v.reshape(self.nsblk, self.npol, self.nchan)

    def weights(self, i):
        """DAT_WTS of row i (NCHAN floats)."""
        return np.asarray(self._rows[i]["DAT_WTS"], dtype=np.float32).reshape(self.nchan)

    def row(self, i):
        """Total intensity of row i: (NSBLK, NCHAN) float32, in DAT_FREQ's order,
        scales, offsets and weights applied."""
        r = self._rows[i]
        freqs = np.asarray(r["DAT_FREQ"], dtype=np.float64).reshape(-1)
        if not np.allclose(freqs, self.freqs, rtol=0, atol=1e-6 * abs(self.foff)):
            raise PsrfitsError("%s: DAT_FREQ of row %d differs from row 1's" %
                               (self.path, i + 1))
        scl = np.asarray(r["DAT_SCL"], dtype=np.float32).reshape(self.npol, self.nchan)
        offs = np.asarray(r["DAT_OFFS"], dtype=np.float32).reshape(self.npol, self.nchan)
        wts = self.weights(i)
        for name, v in (("DAT_SCL", scl), ("DAT_OFFS", offs), ("DAT_WTS", wts)):
            if not np.all(np.isfinite(v)):
                raise PsrfitsError("%s: %s of row %d is not finite" % (self.path, name, i + 1))
        raw = self._raw(r["DATA"])[:, :self.pols_summed, :]
        v = (raw - np.float32(self.zero_off)) * scl[:self.pols_summed] + offs[:self.pols_summed]
        return (v.sum(axis=1) if self.pols_summed > 1 else v[:, 0, :]) * wts


    def sigproc_header(self):
        """The SIGPROC header (32-bit float samples) of the total intensity."""
        def s(x):
            b = x.encode("ascii", "replace")
            return struct.pack("<i", len(b)) + b

        h = s("HEADER_START") + s("telescope_id") + struct.pack("<i", 0)
        if self.source_name:
            h += s("source_name") + s(self.source_name[:80])
        h += s("data_type") + struct.pack("<i", 1)
        h += s("nchans") + struct.pack("<i", self.nchan)
        h += s("nbits") + struct.pack("<i", 32) + s("nifs") + struct.pack("<i", 1)
        h += s("tsamp") + struct.pack("<d", self.tbin)
        h += s("fch1") + struct.pack("<d", self.fch1) + s("foff") + struct.pack("<d", self.foff)
        h += s("tstart") + struct.pack("<d", self.tstart) + s("HEADER_END")
        return h

    def to_sigproc(self, out):
        """Writes the SIGPROC filterbank to the open binary file out, row by row;
        returns the channels whose weight is 0 in every row (all their samples
        are 0: to be masked in a search)."""
        out.write(self.sigproc_header())
        unused = np.ones(self.nchan, bool)
        for i in range(self.nrows):
            out.write(np.ascontiguousarray(self.row(i), dtype="<f4").tobytes())
            unused &= self.weights(i) == 0
        return np.flatnonzero(unused)

