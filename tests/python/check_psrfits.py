#!/usr/bin/env python3
"""PSRFITS search-mode input of transient-detect frb (no GNU Radio needed):

  check_psrfits.py TRANSIENT_DETECT TRANSIENT_FRB 29.fil

29.fil's spectra written as PSRFITS search mode by the writer below (following
the PSRFITS definition, www.atnf.csiro.au/research/pulsar/psrfits_definition/
Psrfits.html) in 8 bits (per-channel scales and offsets that decode to the
file's values exactly) and 4 bits (quantised to the channel's noise), each in
the file's channel order and reversed, give the candidate the .fil gives (DM
near 475, t = 2.029 s); the reader's values equal a direct numpy decoding for
every NBITS, two and four polarisations and zero weights; bad files give one
line naming the file and exit status 2, and no temporary file is left, nor
when the search is stopped by SIGTERM.
Exit 77 (skipped) without numpy or astropy.
"""
import csv
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    from astropy.io import fits
except ImportError as e:
    print("check_psrfits: skipped (%s for %s)" % (e, sys.executable))
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, "python", "transient"))
import psrfits  # noqa: E402  (the source tree's reader)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)


def detect(*args, env=None):
    e = dict(os.environ, TRANSIENT_FRB=PROGRAM)
    e.update(env or {})
    p = subprocess.run([DETECT] + list(args), capture_output=True, text=True, env=e)
    return p.returncode, p.stdout, p.stderr


def read_fil(path):
    """(spectra x channels uint8, fch1, foff, tsamp, tstart) of 29.fil."""
    raw = open(path, "rb").read()
    hdr = {}
    pos = 4 + len("HEADER_START")
    while True:
        (n, ) = struct.unpack_from("<i", raw, pos)
        key = raw[pos + 4:pos + 4 + n].decode()
        pos += 4 + n
        if key == "HEADER_END":
            break
        if key in ("source_name", "rawdatafile"):
            (m, ) = struct.unpack_from("<i", raw, pos)
            hdr[key] = raw[pos + 4:pos + 4 + m].decode()
            pos += 4 + m
        elif key in ("tsamp", "fch1", "foff", "tstart", "src_raj", "src_dej", "az_start",
                     "za_start"):
            (hdr[key], ) = struct.unpack_from("<d", raw, pos)
            pos += 8
        else:
            (hdr[key], ) = struct.unpack_from("<i", raw, pos)
            pos += 4
    data = np.frombuffer(raw[pos:], np.uint8).reshape(-1, hdr["nchans"])
    return data, hdr


def pack(raw, nbits):
    """Unsigned samples of nbits, first in the most significant bits of a byte."""
    if nbits >= 8:
        return raw
    per = 8 // nbits
    r = raw.astype(np.uint8).reshape(-1, per)
    out = np.zeros(r.shape[0], np.uint8)
    for i in range(per):
        out |= r[:, i] << (8 - nbits * (i + 1))
    return out


def write_psrfits(path, raw, nbits, freqs, scl, offs, wts, tbin, tstart, zero_off=0.0,
                  pol_type="AA+BB", src="src1", tzero=None, nbits_card=None):
    """A PSRFITS search-mode file: raw (rows, nsblk, npol, nchan) unsigned samples
    (or float for 32 bits), scl/offs (rows, npol * nchan), wts (rows, nchan)."""
    nrows, nsblk, npol, nchan = raw.shape
    imjd = int(tstart)
    sec = (tstart - imjd) * 86400.0
    ph = fits.Header()
    for k, v in (("FITSTYPE", "PSRFITS"), ("HDRVER", "6.1"), ("TELESCOP", "TEST"),
                 ("OBS_MODE", "SEARCH"), ("SRC_NAME", src),
                 ("OBSFREQ", float(freqs.mean())),
                 ("OBSBW", float((freqs[-1] - freqs[0]) * nchan / max(1, nchan - 1))),
                 ("OBSNCHAN", nchan), ("STT_IMJD", imjd), ("STT_SMJD", int(sec)),
                 ("STT_OFFS", sec - int(sec))):
        ph[k] = v
    code = {32: "E", 16: "I"}.get(nbits, "B")
    if nbits == 32:
        data = raw.astype(">f4").reshape(nrows, -1)
    elif nbits == 16:
        data = raw.astype(np.uint16).reshape(nrows, -1)  # stored less TZERO
    else:
        data = np.stack([pack(r.reshape(-1), nbits) for r in raw])
    tsub = nsblk * tbin
    cols = [fits.Column("TSUBINT", "D", array=np.full(nrows, tsub)),
            fits.Column("OFFS_SUB", "D", array=(np.arange(nrows) + 0.5) * tsub),
            fits.Column("DAT_FREQ", "%dD" % nchan, array=np.tile(freqs, (nrows, 1))),
            fits.Column("DAT_WTS", "%dE" % nchan, array=wts),
            fits.Column("DAT_OFFS", "%dE" % (nchan * npol), array=offs),
            fits.Column("DAT_SCL", "%dE" % (nchan * npol), array=scl),
            fits.Column("DATA", "%d%s" % (data.shape[1], code), array=data,
                        bzero=tzero)]
    sub = fits.BinTableHDU.from_columns(cols, name="SUBINT")
    for k, v in (("TBIN", tbin), ("NCHAN", nchan), ("NPOL", npol), ("POL_TYPE", pol_type),
                 ("NBITS", nbits if nbits_card is None else nbits_card), ("NSBLK", nsblk),
                 ("ZERO_OFF", zero_off), ("CHAN_BW", float(freqs[1] - freqs[0])),
                 ("NSUBOFFS", 0)):
        sub.header[k] = v
    fits.HDUList([fits.PrimaryHDU(header=ph), sub]).writeto(path, overwrite=True)


def from_fil(path, data, hdr, nbits, ascending, nsblk=512, unused=()):
    """29.fil's spectra as PSRFITS: 8 bits with per-row, per-channel power-of-two
    scales and offsets that decode to the samples exactly; 4 bits quantised to
    a third of the channel's standard deviation around its mean."""
    nchan = hdr["nchans"]
    freqs = hdr["fch1"] + hdr["foff"] * np.arange(nchan)
    x = data.astype(np.float64)
    if ascending:
        freqs, x = freqs[::-1], x[:, ::-1]
    rows = x.reshape(-1, nsblk, nchan)
    if nbits == 8:
        zero = 128.0
        lo = rows.min(axis=1)
        span = np.maximum(rows.max(axis=1) - lo, 1)
        k = 2.0**np.clip(np.floor(np.log2(255 / span)), 0, 2)
        scl = 1 / k
        offs = lo + zero * scl
        raw = (rows - lo[:, None, :]) * k[:, None, :]
    else:
        zero = 8.0
        offs = rows.mean(axis=1)
        scl = np.maximum(rows.std(axis=1), 1) / 3
        raw = np.clip(np.round((rows - offs[:, None, :]) / scl[:, None, :]) + zero, 0, 15)
    wts = np.ones((rows.shape[0], nchan))
    wts[:, list(unused)] = 0
    write_psrfits(path, raw.astype(np.uint8)[:, :, None, :], nbits, freqs, scl, offs, wts,
                  hdr["tsamp"], hdr["tstart"], zero)


def candidates(out):
    with open(out) as f:
        return list(csv.DictReader(f))


def search_29(tmp, data, hdr):
    ref_csv = os.path.join(tmp, "fil.csv")
    rc, _, err = detect("frb", FIL, "-o", ref_csv, "-q")
    check(rc == 0, "29.fil: exit %d: %s" % (rc, err))
    ref = candidates(ref_csv)
    check(len(ref) == 1, "29.fil: %d candidates" % len(ref))
    for nbits in (8, 4):
        for ascending in (False, True):
            name = "29_%dbit_%s.fits" % (nbits, "up" if ascending else "down")
            path = os.path.join(tmp, name)
            from_fil(path, data, hdr, nbits, ascending)
            out = os.path.join(tmp, name + ".json")
            rc, _, err = detect("frb", path, "-o", out)
            check(rc == 0 and "1 candidates in 5120 spectra" in err,
                  "%s: exit %d: %s" % (name, rc, err))
            if rc:
                continue
            doc = json.load(open(out))
            c = doc["detections"]
            check(len(c) == 1 and abs(c[0]["dm"] - 475) < 10 and
                  abs(c[0]["time"] - 2.029) < 0.005 and c[0]["snr"] > 12,
                  "%s: candidates %s" % (name, c))
            rec = doc["recording"]
            check(rec["path"] == path and abs(rec["tstart"] - hdr["tstart"]) < 1e-9 and
                  rec["source_name"] == "src1" and rec["nchans"] == 336 and
                  rec["foff"] == (1.0 if ascending else -1.0),
                  "%s: recording %s" % (name, rec))
            if nbits == 8 and c:
                # The decoded samples are 29.fil's: the same candidate.
                r = ref[0]
                check(c[0]["sample"] == int(r["sample"]) and c[0]["width"] == int(r["width"])
                      and abs(c[0]["dm"] - float(r["dm"])) < 1e-9 and
                      abs(c[0]["snr"] - float(r["snr"])) < 1e-3,
                      "%s: %s, 29.fil %s" % (name, c[0], r))
    # Channels weighted 0 in every row are masked: the search equals 29.fil's
    # with those channels masked.
    path = os.path.join(tmp, "29_weights.fits")
    from_fil(path, data, hdr, 8, False, unused=[0, 1, 2, 100, 335])
    rc, out, err = detect("frb", path, "--mask-chans", "7")
    rc2, out2, err2 = detect("frb", FIL, "--mask-chans", "0-2,7,100,335", "-q")
    check(rc == 0 and "5 channels weighted 0 in every row are masked" in err and
          rc2 == 0 and out == out2 and len(out.splitlines()) == 2,
          "zero weights: %s %s / %s %s" % (out, err, out2, err2))
    # The default output (CSV on stdout) and a temporary copy in $TMPDIR.
    tmpdir = os.path.join(tmp, "t")
    os.mkdir(tmpdir)
    rc, out, err = detect("frb", os.path.join(tmp, "29_8bit_down.fits"), "-q",
                          env={"TMPDIR": tmpdir})
    check(rc == 0 and out.splitlines()[1] == ",".join(ref[0][k] for k in ref[0]),
          "PSRFITS to stdout: %d %s %s" % (rc, out, err))
    check(os.listdir(tmpdir) == [], "temporary files left: %s" % os.listdir(tmpdir))


def decode(raw, scl, offs, wts, zero, npol_sum):
    """Direct numpy decoding: (raw - ZERO_OFF) * DAT_SCL + DAT_OFFS, pols summed,
    times DAT_WTS; raw (rows, nsblk, npol, nchan)."""
    nrows, nsblk, npol, nchan = raw.shape
    v = (raw.astype(np.float64) - zero) * scl.reshape(nrows, 1, npol, nchan) + \
        offs.reshape(nrows, 1, npol, nchan)
    return (v[:, :, :npol_sum].sum(axis=2) * wts[:, None, :]).reshape(-1, nchan)


def reader_values(tmp):
    rng = np.random.default_rng(13)
    nrows, nsblk, nchan = 3, 16, 8
    freqs = 1400.0 - 0.5 * np.arange(nchan)
    cases = [(1, 1, "AA+BB", 1), (2, 1, "INTEN", 1), (4, 2, "AABB", 2), (8, 4, "IQUV", 1),
             (8, 4, "AABBCRCI", 2), (16, 1, "AA+BB", 1), (32, 2, "AABB", 2)]
    for nbits, npol, pol_type, nsum in cases:
        shape = (nrows, nsblk, npol, nchan)
        if nbits == 32:
            raw = rng.normal(size=shape)
        else:
            raw = rng.integers(0, 1 << nbits, size=shape)
        scl = rng.uniform(0.1, 3, size=(nrows, npol * nchan))
        offs = rng.uniform(-5, 5, size=(nrows, npol * nchan))
        wts = rng.uniform(0, 1, size=(nrows, nchan))
        wts[:, 2] = 0
        zero = {1: 0.5, 2: 1.5, 4: 7.5, 8: 128, 16: 0, 32: 0}[nbits]
        tzero = 32768 if nbits == 16 else None
        path = os.path.join(tmp, "r%d_%d.fits" % (nbits, npol))
        write_psrfits(path, raw, nbits, freqs, scl, offs, wts, 1e-4, 60000.25, zero,
                      pol_type, tzero=tzero)
        want = decode(raw, scl.astype(np.float32), offs.astype(np.float32),
                      wts.astype(np.float32), zero, nsum)
        with psrfits.SearchFile(path) as sf:
            got = np.concatenate([sf.row(i) for i in range(sf.nrows)])
            check(sf.nspectra == nrows * nsblk and sf.fch1 == 1400.0 and sf.foff == -0.5 and
                  abs(sf.tstart - 60000.25) < 1e-9 and sf.tbin == 1e-4,
                  "%d-bit header: %s" % (nbits, vars(sf)))
        err = np.max(np.abs(got - want) / (1 + np.abs(want)))
        check(got.shape == want.shape and err < 1e-5,
              "%d-bit %s reader against numpy: relative error %g" % (nbits, pol_type, err))


def bad_files(tmp):
    good = os.path.join(tmp, "29_8bit_down.fits")
    cases = []
    p = os.path.join(tmp, "text.fits")
    with open(p, "w") as f:
        f.write("this is not FITS\n" * 200)
    cases.append((p, "not a FITS file"))
    p = os.path.join(tmp, "primary.fits")
    fits.PrimaryHDU(data=np.zeros(4, np.float32)).writeto(p)
    cases.append((p, "no SUBINT table"))
    p = os.path.join(tmp, "nbits3.sf")
    raw = np.zeros((1, 64, 1, 8), np.uint8)
    write_psrfits(p, raw, 8, 1400.0 - np.arange(8.0), np.ones((1, 8)), np.zeros((1, 8)),
                  np.ones((1, 8)), 1e-3, 60000.0, nbits_card=3)
    cases.append((p, "NBITS = 3"))
    p = os.path.join(tmp, "nan.fits")
    scl = np.ones((2, 8))
    scl[1, 3] = np.nan
    write_psrfits(p, np.zeros((2, 1024, 1, 8), np.uint8), 8, 1400.0 - np.arange(8.0), scl,
                  np.zeros((2, 8)), np.ones((2, 8)), 1e-3, 60000.0)
    cases.append((p, "DAT_SCL of row 2 is not finite"))
    p = os.path.join(tmp, "truncated.fits")
    blob = open(good, "rb").read()
    with open(p, "wb") as f:
        f.write(blob[:len(blob) - 2880 - 100000])
    cases.append((p, "truncated"))
    for path, what in cases:
        before = sorted(os.listdir(tmp))
        rc, out, err = detect("frb", path, "-o", os.path.join(tmp, "bad.csv"))
        lines = err.strip().splitlines()
        check(rc == 2 and len(lines) == 1 and path in lines[0] and what in lines[0] and
              "Traceback" not in err, "%s: exit %d, %r (want %r)" % (path, rc, err, what))
        check(sorted(os.listdir(tmp)) == before, "%s: files left: %s" %
              (path, set(os.listdir(tmp)) - set(before)))
    # Without astropy: a one-line error naming the package.
    fake = os.path.join(tmp, "noastropy", "astropy")
    os.makedirs(fake)
    with open(os.path.join(fake, "__init__.py"), "w") as f:
        f.write("raise ImportError('no astropy here')\n")
    path = os.environ.get("PYTHONPATH", "")
    rc, _, err = detect("frb", good, env={"PYTHONPATH": os.path.dirname(fake) + os.pathsep +
                                          path})
    check(rc == 2 and "python3-astropy" in err and len(err.strip().splitlines()) == 1,
          "without astropy: %d %r" % (rc, err))


def terminated(tmp):
    """SIGTERM while the temporary copy exists: it is removed, exit status 130."""
    rng = np.random.default_rng(5)
    nrows, nsblk, nchan = 64, 4096, 256
    path = os.path.join(tmp, "long.fits")
    write_psrfits(path, rng.integers(0, 256, size=(nrows, nsblk, 1, nchan), dtype=np.uint8), 8,
                  1500 - np.arange(nchan, dtype=float), np.ones((nrows, nchan)),
                  np.zeros((nrows, nchan)), np.ones((nrows, nchan)), 64e-6, 60000.0)
    out = os.path.join(tmp, "term")
    os.mkdir(out)
    p = subprocess.Popen([DETECT, "frb", path, "-o", os.path.join(out, "c.csv")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=dict(os.environ, TRANSIENT_FRB=PROGRAM))
    deadline = time.time() + 120
    while p.poll() is None and time.time() < deadline and not any(
            f.endswith(".fil") for f in os.listdir(out)):
        time.sleep(0.01)
    seen = [f for f in os.listdir(out) if f.endswith(".fil")]
    p.terminate()
    _, err = p.communicate()
    check(seen and p.returncode == 130 and os.listdir(out) == [],
          "SIGTERM: copy seen %s, exit %d, left %s, %s" % (seen, p.returncode, os.listdir(out),
                                                           err))


def main():
    global DETECT, PROGRAM, FIL
    DETECT, PROGRAM, FIL = sys.argv[1:4]
    data, hdr = read_fil(FIL)
    with tempfile.TemporaryDirectory() as tmp:
        reader_values(tmp)
        search_29(tmp, data, hdr)
        bad_files(tmp)
        terminated(tmp)
    print("check_psrfits: %s" % ("%d failures" % len(failures) if failures else "all passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
