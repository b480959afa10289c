#!/usr/bin/env python3
"""transient-detect frb end to end (no GNU Radio needed):

  check_frb_cli.py TRANSIENT_DETECT_PY TRANSIENT_FRB 29.fil

29.fil gives one candidate near DM 475.3 at 2.029 s in every output (CSV,
JSON, .cand, SigMF, PNG with matplotlib); a numpy filterbank with injected
dispersed bursts gives each burst back (DM within one trial, time within the
width); errors are one line with exit status 2 and write nothing;
transient-detect boxcar on a filterbank points to frb. Exit 77 (skipped)
without numpy.
"""
import csv
import json
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("check_frb_cli: skipped (no numpy for %s)" % sys.executable)
    sys.exit(77)

KDM = 4.148808e3
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)


def detect(*args):
    env = dict(os.environ, TRANSIENT_FRB=PROGRAM)
    p = subprocess.run([sys.executable, DETECT] + list(args), capture_output=True, text=True,
                       env=env)
    return p.returncode, p.stdout, p.stderr


def write_fil(path, data, fch1, foff, tsamp):
    """An 8-bit SIGPROC filterbank of data (spectra x channels)."""
    def s(x):
        b = x.encode()
        return struct.pack("<i", len(b)) + b

    h = s("HEADER_START") + s("nchans") + struct.pack("<i", data.shape[1])
    h += s("nbits") + struct.pack("<i", 8) + s("nifs") + struct.pack("<i", 1)
    h += s("tsamp") + struct.pack("<d", tsamp) + s("fch1") + struct.pack("<d", fch1)
    h += s("foff") + struct.pack("<d", foff) + s("tstart") + struct.pack("<d", 60000.0)
    h += s("data_type") + struct.pack("<i", 1) + s("HEADER_END")
    with open(path, "wb") as f:
        f.write(h)
        f.write(data.astype(np.uint8).tobytes())


def real_file(tmp):
    out = os.path.join(tmp, "c.csv")
    rc, _, err = detect("frb", FIL, "-o", out)
    check(rc == 0, "29.fil CSV: exit %d: %s" % (rc, err))
    with open(out) as f:
        rows = list(csv.DictReader(f))
    check(list(rows[0].keys()) == ["dm", "time", "sample", "width", "snr", "members"],
          "CSV columns %s" % list(rows[0].keys()))
    check(len(rows) == 1, "29.fil: %d candidates, want 1" % len(rows))
    r = rows[0]
    check(abs(float(r["dm"]) - 475.3) < 10 and abs(float(r["time"]) - 2.029) < 0.005 and
          float(r["snr"]) > 12, "29.fil candidate %s" % r)
    check("1 candidates in 5120 spectra" in err, "summary line: %s" % err)

    out = os.path.join(tmp, "c.json")
    rc, _, err = detect("frb", FIL, "-o", out, "-q")
    with open(out) as f:
        doc = json.load(f)
    d = doc["detections"]
    check(rc == 0 and len(d) == 1 and d[0]["sample"] == int(r["sample"]) and
          doc["plan"]["dm_trials"] == 208 and err == "", "JSON: %s %s" % (rc, err))
    proc = doc["processed"]
    check(proc["devices"] == ([] if proc["backend"] == "cpu" else [0]),
          "JSON devices %s on %s" % (proc.get("devices"), proc["backend"]))

    out = os.path.join(tmp, "c.cand")
    rc, _, _ = detect("frb", FIL, "-o", out, "-q")
    with open(out) as f:
        cols = f.read().split()
    check(rc == 0 and len(cols) == 9 and int(cols[1]) == int(r["sample"]) and
          abs(float(cols[5]) - float(r["dm"])) < 1e-3, ".cand: %s" % cols)

    meta = os.path.join(tmp, "a.sigmf-meta")
    png = os.path.join(tmp, "a.png")
    have_mpl = subprocess.run([sys.executable, "-c", "import matplotlib"]).returncode == 0
    args = ["frb", FIL, "--sigmf-annotations", meta, "-q"] + (["--plot", png] if have_mpl
                                                              else [])
    rc, out, err = detect(*args)
    with open(meta) as f:
        anns = json.load(f)["annotations"]
    check(rc == 0 and out == "" and len(anns) == 1 and
          anns[0]["core:sample_start"] == int(r["sample"]) - (int(r["width"]) - 1) // 2 and
          anns[0]["transient:detector"] == "frb", "SigMF: %s %s" % (anns, err))
    if have_mpl:
        with open(png, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "--plot wrote no PNG")


def injected(tmp):
    """Bursts on a filterbank made here, 128 channels of 1 MHz, 0.5 ms."""
    nch, fch1, foff, tsamp, n = 128, 1400.0, -1.0, 5e-4, 24000
    rng = np.random.default_rng(2026)
    data = rng.normal(96.0, 8.0, size=(n, nch))
    freqs = fch1 + foff * np.arange(nch)
    bursts = [(120.0, 3000, 6, 25.0), (377.0, 9000, 2, 20.0), (540.0, 16000, 16, 30.0)]
    for dm, start, width, snr in bursts:
        amp = snr * 8.0 / np.sqrt(width * nch)
        delay = np.floor(KDM * dm * (freqs**-2.0 - freqs.max()**-2.0) / tsamp + 0.5)
        for c in range(nch):
            t0 = start + int(delay[c])
            data[t0:t0 + width, c] += amp
    path = os.path.join(tmp, "inj.fil")
    write_fil(path, np.clip(np.round(data), 0, 255), fch1, foff, tsamp)
    out = os.path.join(tmp, "inj.json")
    rc, _, err = detect("frb", path, "--dm-max", "700", "--no-zero-dm", "-o", out, "-q")
    check(rc == 0, "injected: exit %d: %s" % (rc, err))
    with open(out) as f:
        doc = json.load(f)
    dms = doc["plan"]["dms"]
    found = doc["detections"]
    check(len(found) == len(bursts), "injected: %d candidates for %d bursts: %s" %
          (len(found), len(bursts), found))
    for dm, start, width, snr in bursts:
        m = [c for c in found if abs(c["sample"] - start) < 500]
        check(len(m) == 1, "burst DM %g at %d: %d candidates" % (dm, start, len(m)))
        if m:
            c = m[0]
            trial = min(range(len(dms)), key=lambda i: abs(dms[i] - dm))
            check(abs(c["dm_index"] - trial) <= 1, "burst DM %g: trial %d (DM %g), nearest %d" %
                  (dm, c["dm_index"], c["dm"], trial))
            check(abs(c["sample"] - (start + (width - 1) // 2)) <= width,
                  "burst at %d width %d: sample %d" % (start, width, c["sample"]))
            check(abs(c["time"] - c["sample"] * tsamp) < 1e-9, "time %g" % c["time"])
    # Time scrunching at tolerance 1.9: factor 2 from DM 339 (the bursts at
    # 377 and 540), 4 from 714; the same bursts, the factors in the JSON.
    rc, _, err = detect("frb", path, "--dm-max", "700", "--no-zero-dm", "--scrunch",
                        "--scrunch-tol", "1.9", "-o", out, "-q")
    check(rc == 0, "scrunched: exit %d: %s" % (rc, err))
    with open(out) as f:
        doc = json.load(f)
    par = doc["parameters"]
    check(par["scrunch"] is True and par["scrunch_tol"] == 1.9 and
          par["full_rate_trials"] == 86.25 and par["scrunch_first_trials"] ==
          {"1": 0, "2": 70, "4": 102} and par["norm"] == "levels",
          "scrunched parameters %s" % par)
    found = doc["detections"]
    check(len(found) == len(bursts) and
          all(any(abs(c["sample"] - b[1]) < 500 for c in found) for b in bursts),
          "scrunched: %d candidates for %d bursts: %s" % (len(found), len(bursts), found))


def errors(tmp):
    rc, out, err = detect("boxcar", FIL)
    check(rc == 2 and "transient-detect frb" in err and err.count("\n") == 1,
          "boxcar on a .fil: %d %s" % (rc, err))
    other = os.path.join(tmp, "x.f32")
    np.zeros(100, np.float32).tofile(other)
    rc, out, err = detect("frb", other)
    check(rc == 2 and "SIGPROC" in err and err.count("\n") == 1, "not a filterbank: %s" % err)
    copy = os.path.join(tmp, "copy.fil")
    with open(FIL, "rb") as f:
        raw = f.read()
    with open(copy, "wb") as f:
        f.write(raw)
    rc, out, err = detect("frb", copy, "-o", copy)
    with open(copy, "rb") as f:
        check(rc == 2 and f.read() == raw, "-o the input: %d %s" % (rc, err))
    rc, out, err = detect("frb", FIL, "--window", "8000", "-o", os.path.join(tmp, "w.csv"))
    check(rc == 2 and "nothing to search" in err and not os.path.exists(
        os.path.join(tmp, "w.csv")), "window longer than the file: %d %s" % (rc, err))
    rc, out, err = detect("frb", FIL, "--devices", "0,1", "--backend", "cpu",
                          "-o", os.path.join(tmp, "d.csv"))
    check(rc == 2 and "29.fil" in err and "CUDA backend" in err and err.count("\n") == 1 and
          not os.path.exists(os.path.join(tmp, "d.csv")),
          "two devices on the CPU: %d %s" % (rc, err))
    rc, out, err = detect("frb", FIL, "--devices", "0,x")
    check(rc == 2 and "--devices" in err, "bad device list: %d %s" % (rc, err))
    rc, out, err = detect("frb", FIL, "--scrunch", "--norm", "white")
    check(rc == 2 and "LEVELS" in err and err.count("\n") == 1,
          "scrunch with white statistics: %d %s" % (rc, err))
    rc, out, err = detect("frb", FIL, "--mask-chans", "400")
    check(rc == 2 and "mask-chans" in err, "bad mask: %d %s" % (rc, err))
    with open(copy, "r+b") as f:
        f.truncate(len(raw) - 100)
    rc, out, err = detect("frb", copy)
    check(rc == 2 and "copy.fil" in err and err.count("\n") == 1, "truncated: %d %s" % (rc, err))


if __name__ == "__main__":
    DETECT, PROGRAM, FIL = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        real_file(tmp)
        injected(tmp)
        errors(tmp)
    print("check_frb_cli: %d failures" % len(failures))
    sys.exit(1 if failures else 0)
