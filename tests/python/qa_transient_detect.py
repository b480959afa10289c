#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Tests of transient-detect (apps/transient_detect.py) and of the readers it
uses (gnuradio.transient.recordings, gnuradio.transient.sigmf): small
recordings of every supported format with known events, the detections
against the truth, broken inputs (a one-line error, exit status 2, nothing
written) and a SigMF round trip."""

import configparser
import importlib.util
import io
import json
import os
import pty
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
from gnuradio import gr_unittest
from gnuradio.transient import kalman_signals as ks
from gnuradio.transient import recordings
from gnuradio.transient import sigmf
from gnuradio.transient import spiir_design as sd

APP = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "apps",
                 "transient_detect.py"))


def _load_tool():
    spec = importlib.util.spec_from_file_location("transient_detect_app", APP)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tool = _load_tool()

# ---- test signals -------------------------------------------------------------


def pulse_train(n=20000, seed=1):
    """0/1 pulses with a little noise: (x, [(sample, polarity)]); the sample is
    the first one in the new state (levels 0.1/0.5/0.9)."""
    rng = np.random.default_rng(seed)
    x = (0.02 * rng.standard_normal(n)).astype(np.float32)
    truth = []
    pos = 500
    while pos + 400 < n:
        on = pos
        off = on + int(rng.integers(40, 200))
        x[on:off] += 1.0
        truth += [(on, 1), (off, -1)]
        pos = off + int(rng.integers(60, 300))
    return x, truth


def injected_pulses(n=40000, seed=2, first=9000):
    """White noise with boxcar pulses of S/N 25: (x, [(start, width)])."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    truth = []
    pos = first
    for w in (1, 4, 16, 50, 8, 120, 2, 33):
        x[pos:pos + w] += 25.0 / np.sqrt(w)
        truth.append((pos, w))
        pos += 2500 + 37 * w
    return x, truth


# ---- writers for the formats --------------------------------------------------


def write_sigmf(base, components, datatype, rate, extra_global=None, captures=None,
                annotations=None, header=b""):
    """base.sigmf-meta and base.sigmf-data with the given components."""
    dt = sigmf.parse_datatype(datatype)
    with open(base + ".sigmf-data", "wb") as f:
        f.write(header)
        f.write(np.asarray(components).astype(dt.numpy).tobytes())
    g = {"core:datatype": datatype, "core:version": "1.0.0"}
    if rate is not None:
        g["core:sample_rate"] = rate
    g.update(extra_global or {})
    doc = {"global": g, "captures": captures or [{"core:sample_start": 0}],
           "annotations": annotations or []}
    with open(base + ".sigmf-meta", "w") as f:
        json.dump(doc, f, indent=1)
    return base + ".sigmf-meta"


def write_sr(path, samplerate, analog, logic=None, chunk=7000):
    """A sigrok session: analog {name: float32 array}, logic {probe name: 0/1}."""
    cp = configparser.ConfigParser()
    cp.optionxform = str
    dev = {"samplerate": samplerate, "capturefile": "logic-1", "unitsize": "1"}
    logic = logic or {}
    dev["total probes"] = str(len(logic))
    for i, name in enumerate(logic):
        dev["probe%d" % (i + 1)] = name
    for i, name in enumerate(analog):
        dev["analog%d" % (9 + i)] = name
    cp["global"] = {"sigrok version": "0.5.2"}
    cp["device 1"] = dev
    meta = io.StringIO()
    cp.write(meta)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("version", "2")
        z.writestr("metadata", meta.getvalue())
        for i, (name, x) in enumerate(analog.items()):
            x = np.asarray(x, "<f4")
            for k in range(0, len(x), chunk):
                z.writestr("analog-1-%d-%d" % (9 + i, k // chunk + 1), x[k:k + chunk].tobytes())
        if logic:
            bits = np.zeros(len(next(iter(logic.values()))), np.uint8)
            for i, v in enumerate(logic.values()):
                bits |= (np.asarray(v, np.uint8) & 1) << i
            for k in range(0, len(bits), chunk):
                z.writestr("logic-1-%d" % (k // chunk + 1), bits[k:k + chunk].tobytes())


def _sp_str(s):
    return struct.pack("<i", len(s)) + s.encode()


def sigproc_header(tsamp, nbits=32, nchans=1, source="TEST PULSAR", extra=b""):
    h = _sp_str("HEADER_START") + _sp_str("source_name") + _sp_str(source)
    h += _sp_str("tsamp") + struct.pack("<d", tsamp)
    h += _sp_str("tstart") + struct.pack("<d", 60000.5)
    h += _sp_str("nbits") + struct.pack("<i", nbits)
    h += _sp_str("nchans") + struct.pack("<i", nchans)
    h += _sp_str("nifs") + struct.pack("<i", 1)
    return h + extra + _sp_str("HEADER_END")


def write_tim(path, x, tsamp, nbits=32, nchans=1, dtype="<f4"):
    with open(path, "wb") as f:
        f.write(sigproc_header(tsamp, nbits, nchans))
        f.write(np.asarray(x).astype(dtype).tobytes())


INF = """ Data file name without suffix          =  {name}
 Telescope used                         =  Test
 Epoch of observation (MJD)             =  60000.5
 Number of bins in the time series      =  {n}
 Width of each time series bin (sec)    =  {tsamp}
 Dispersion measure (cm-3 pc)           =  10.0
 Any additional notes:
    made by qa_transient_detect
"""


def write_presto(base, x, tsamp, n=None):
    np.asarray(x, "<f4").tofile(base + ".dat")
    with open(base + ".inf", "w") as f:
        f.write(INF.format(name=os.path.basename(base), n=len(x) if n is None else n,
                           tsamp=tsamp))


# ---- the tests ----------------------------------------------------------------


class qa_transient_detect(gr_unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="qa_transient_detect_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def p(self, name):
        return os.path.join(self.dir, name)

    def tool(self, *argv):
        """Run the tool in this process: (status, stdout text, stderr text)."""
        out, err = io.StringIO(), io.StringIO()
        rc = tool.run([str(a) for a in argv], stdout=out, stderr=err)
        return rc, out.getvalue(), err.getvalue()

    def tool_json(self, *argv):
        out = self.p("out.json")
        rc, _, err = self.tool(*(argv + ("-o", out, "--backend", "cpu")))
        self.assertEqual(rc, 0, err)
        with open(out) as f:
            doc = json.load(f)
        os.unlink(out)
        return doc

    def check_edges(self, dets, truth, offset=0, tol=1.0):
        self.assertEqual([(d["sample"], d["polarity"]) for d in dets],
                         [(s + offset, p) for s, p in truth])
        for d in dets:
            # The mid crossing lies between the last old-state sample and the first new one.
            self.assertTrue(d["sample"] - tol <= d["crossing"] < d["sample"], d)

    def check_pulses(self, dets, truth, offset=0):
        """Every injected pulse found once, near its start and width; no others."""
        self.assertEqual(len(dets), len(truth), dets)
        for d, (s, w) in zip(dets, truth):
            self.assertLessEqual(abs(d["sample"] - (s + offset)), max(2, w // 2), (d, s, w))
            self.assertTrue(w / 2.5 <= d["width"] <= 2.5 * w + 2, (d, w))
            self.assertGreater(d["snr"], 12.0)

    # ---- formats ----------------------------------------------------------

    def test_001_raw_f32_edges(self):
        x, truth = pulse_train()
        x.astype("<f4").tofile(self.p("train.f32"))
        doc = self.tool_json("edges", self.p("train.f32"), "--rate", 1000)
        self.assertEqual(doc["recording"]["format"], "f32")
        self.assertEqual(doc["recording"]["samples"], len(x))
        dets = doc["detections"]
        self.check_edges(dets, truth)
        for d in dets:
            self.assertAlmostEqual(d["time"], d["crossing"] / 1000.0, places=9)
        # CSV has the same rows.
        rc, out, err = self.tool("edges", self.p("train.f32"), "--rate", 1000, "--backend",
                                 "cpu", "-q")
        self.assertEqual((rc, err), (0, ""))
        lines = out.splitlines()
        self.assertEqual(lines[0], "sample,time,polarity,crossing")
        self.assertEqual(len(lines) - 1, len(truth))
        self.assertEqual([int(l.split(",")[0]) for l in lines[1:]], [s for s, _ in truth])

    def test_002_start_and_samples_keep_absolute_numbers(self):
        x, truth = pulse_train()
        x.astype("<f4").tofile(self.p("train.f32"))
        a, b = 5000, 9000
        doc = self.tool_json("edges", self.p("train.f32"), "--start", a, "--samples", b - a)
        inside = [(s, p) for s, p in truth if a < s < b]
        self.check_edges(doc["detections"], inside)
        self.assertEqual(doc["processed"]["samples"], b - a)
        self.assertIsNone(doc["detections"][0]["time"])  # no rate: no times

    def test_003_raw_c64_boxcar_power(self):
        rng = np.random.default_rng(3)
        n = 40000
        z = ((rng.standard_normal(n) + 1j * rng.standard_normal(n)) / np.sqrt(2)).astype(
            np.complex64)
        truth = []
        for k, (s, w) in enumerate(((9000, 16), (15000, 40), (23000, 8), (31000, 64))):
            z[s:s + w] += 3.0 * np.exp(1j * 0.3 * k)
            truth.append((s, w))
        z.tofile(self.p("iq.cfile"))
        doc = self.tool_json("boxcar", self.p("iq.cfile"), "--rate", 2e6, "--window", 4096,
                             "--threshold", 20)
        self.assertEqual(doc["recording"]["datatype"], "cf32_le")
        self.check_pulses(doc["detections"], truth)

    def test_004_sigmf_rf32_boxcar_with_header_bytes(self):
        x, truth = injected_pulses()
        header = b"\x01HDR" * 5  # 20 header bytes, skipped through core:header_bytes
        meta = write_sigmf(self.p("rec"), x, "rf32_le", 48000.0,
                           captures=[{"core:sample_start": 0, "core:header_bytes": 20}],
                           header=header)
        doc = self.tool_json("boxcar", meta, "--window", 4096, "--threshold", 9)
        self.check_pulses(doc["detections"], truth)
        for d in doc["detections"]:
            self.assertAlmostEqual(d["time"], d["sample"] / 48000.0)

    def test_005_sigmf_integer_datatypes(self):
        # ri16_le pulse train (levels scaled by 1000) through the chunked source;
        # the data file also given instead of the metadata.
        x, truth = pulse_train(seed=5)
        write_sigmf(self.p("i16"), np.round(1000 * x), "ri16_le", 1e6)
        doc = self.tool_json("edges", self.p("i16.sigmf-data"), "--low", 100, "--mid", 500,
                             "--high", 900)
        self.check_edges(doc["detections"], truth)
        # ci8 and ci16_le boxcar: the same pulses in both.
        rng = np.random.default_rng(6)
        n = 30000
        iq = np.round(8 * rng.standard_normal((n, 2)))
        truth = [(9000, 20), (17000, 50), (25000, 10)]
        for s, w in truth:
            iq[s:s + w, 0] += 30
        for dt in ("ci8", "ci16_le"):
            write_sigmf(self.p(dt), np.clip(iq, -127, 127), dt, 1e6)
            doc = self.tool_json("boxcar", self.p(dt + ".sigmf-meta"), "--window", 4096,
                                 "--threshold", 20)
            self.assertEqual(doc["recording"]["datatype"], dt)
            self.check_pulses(doc["detections"], truth)
        # Reading through the reader gives the same numbers.
        rec = recordings.open_recording(self.p("ci8.sigmf-meta"))
        got = rec.read(100, 5)
        ref = np.clip(iq[100:105], -127, 127)
        np.testing.assert_array_equal(got, (ref[:, 0] + 1j * ref[:, 1]).astype(np.complex64))

    def test_006_sigrok_analog_and_logic(self):
        x, truth = pulse_train(n=30000, seed=7)
        bits = np.zeros(len(x), np.uint8)
        for s, p in truth:
            bits[s:] = 1 if p > 0 else 0
        write_sr(self.p("cap.sr"), "2 MHz", {"CH1 analog": 3.3 * x, "CH2": 0 * x},
                 {"D0": 1 - bits, "SDA": bits})
        doc = self.tool_json("edges", self.p("cap.sr"), "--channel", "CH1 analog", "--low",
                             0.33, "--mid", 1.65, "--high", 2.97)
        self.assertEqual(doc["recording"]["sample_rate"], 2e6)
        self.assertEqual(doc["recording"]["channel"], "CH1 analog")
        self.check_edges(doc["detections"], truth)
        # The logic probe as 0.0/1.0: the same transitions at the same samples.
        doc = self.tool_json("edges", self.p("cap.sr"), "--channel", "SDA")
        self.check_edges(doc["detections"], truth)
        # Two analog channels and no --channel: a clear error.
        rc, _, err = self.tool("edges", self.p("cap.sr"), "-o", self.p("x.csv"))
        self.assertEqual(rc, 2)
        self.assertIn("--channel", err)
        self.assertFalse(os.path.exists(self.p("x.csv")))

    def test_007_sigproc_tim_32_and_8_bit(self):
        x, truth = injected_pulses(seed=8)
        write_tim(self.p("ts.tim"), x, 64e-6)
        # The header is not a multiple of 4 bytes long: the chunked source.
        self.assertNotEqual(len(sigproc_header(64e-6)) % 4, 0)
        doc = self.tool_json("boxcar", self.p("ts.tim"), "--window", 4096, "--threshold", 9)
        self.assertEqual(doc["recording"]["format"], "sigproc")
        self.assertAlmostEqual(doc["recording"]["sample_rate"], 1 / 64e-6)
        self.check_pulses(doc["detections"], truth)
        q = np.clip(np.round(100 + 10 * x), 0, 255)
        write_tim(self.p("ts8"), q, 64e-6, nbits=8, dtype="u1")  # no suffix: by content
        doc = self.tool_json("boxcar", self.p("ts8"), "--window", 4096, "--threshold", 9)
        self.assertEqual(doc["recording"]["datatype"], "ru8")
        self.check_pulses(doc["detections"], truth)

    def test_008_sigproc_two_channels(self):
        x0, truth0 = injected_pulses(seed=9)
        x1 = np.random.default_rng(10).standard_normal(len(x0)).astype(np.float32)
        x1[20000:20010] += 12.0
        write_tim(self.p("two.fil"), np.stack([x0, x1], axis=1), 1e-3, nchans=2)
        # all frequency channels of a filterbank: refused, pointing to frb
        rc, _, err = self.tool("boxcar", self.p("two.fil"), "--window", 4096)
        self.assertEqual(rc, 2)
        self.assertIn("transient-detect frb", err)
        doc = self.tool_json("boxcar", self.p("two.fil"), "--channel", 0, "--window", 4096,
                             "--threshold", 9)
        self.check_pulses(doc["detections"], truth0)
        doc = self.tool_json("boxcar", self.p("two.fil"), "--channel", 1, "--window", 4096,
                             "--threshold", 9)
        self.assertEqual([abs(d["sample"] - 20000) <= 5 for d in doc["detections"]], [True])
        rc, _, err = self.tool("edges", self.p("two.fil"))
        self.assertEqual(rc, 2)
        self.assertIn("--channel", err)

    def test_009_presto_dat_inf(self):
        x, truth = injected_pulses(seed=11)
        write_presto(self.p("psr"), x, 1e-4)
        for given in ("psr.dat", "psr.inf"):
            doc = self.tool_json("boxcar", self.p(given), "--window", 4096, "--threshold", 9)
            self.assertEqual(doc["recording"]["format"], "presto")
            self.assertAlmostEqual(doc["recording"]["sample_rate"], 1e4)
            self.check_pulses(doc["detections"], truth)

    def test_010_kalman_bursts(self):
        M = 92
        onsets = np.arange(1500, 30000, 3000)
        x, _ = ks.gaussian_bursts(30000, onsets, M=M, target_var=2.0, seed=11)
        x.astype("<f4").tofile(self.p("bursts.f32"))
        doc = self.tool_json("kalman", self.p("bursts.f32"), "--rate", 1e3, "--threshold=-5",
                             "--target-var", 2.0)
        dets = doc["detections"]
        self.assertEqual(doc["parameters"]["M"], M)
        hit = set()
        for d in dets:
            owner = [o for o in onsets if o <= d["sample"] < o + M]
            self.assertEqual(len(owner), 1, "false alarm %r" % d)
            hit.add(int(owner[0]))
            self.assertTrue(d["sample"] <= d["peak"] < d["end"])
            self.assertEqual(d["duration"], d["end"] - d["sample"])
            self.assertLessEqual(abs(d["onset"] - owner[0]), 30)
        self.assertGreaterEqual(len(hit), int(0.8 * len(onsets)))

    def test_011_spiir_chirp(self):
        fs = 1024.0
        chirp = sd.newtonian_chirp(fs, 20.0, 200.0, duration=4.0)
        design = sd.design_bank([chirp.h], fs)
        design.bank.save(self.p("bank.spiir"))
        x = np.random.default_rng(12).standard_normal(12000).astype(np.float32)
        end = 9000
        sd.inject(x, chirp.h, end, 25.0)
        write_sigmf(self.p("gw"), x, "rf32_le", fs)
        doc = self.tool_json("spiir", self.p("gw.sigmf-meta"), "--bank", self.p("bank.spiir"),
                             "--threshold", 10, "--window", 512)
        dets = doc["detections"]
        self.assertEqual(len(dets), 1, dets)
        self.assertEqual(dets[0]["template"], 0)
        self.assertLessEqual(abs(dets[0]["sample"] - end), 1)
        self.assertLess(abs(dets[0]["time"] - end / fs), 1.5 / fs)
        self.assertAlmostEqual(dets[0]["snr"] / (25.0 * design.results[0].match), 1.0,
                               delta=0.15)
        # A recording at another rate than the bank's is refused.
        write_sigmf(self.p("gw2"), x, "rf32_le", 2 * fs)
        rc, _, err = self.tool("spiir", self.p("gw2.sigmf-meta"), "--bank",
                               self.p("bank.spiir"), "-o", self.p("no.csv"))
        self.assertEqual(rc, 2, err)
        self.assertFalse(os.path.exists(self.p("no.csv")))

    def test_012_boxcar_short_recording(self):
        # A burst in the first 1,000 samples of a 4,000-sample series, with the
        # default settings (window 16,384, max width 256): found, with one
        # warning line on stderr that says what was done (also with -q), exit 0.
        rng = np.random.default_rng(13)
        x = (3.0 + 2.0 * rng.standard_normal(4000)).astype(np.float32)
        x[600:616] += 2.0 * 15.0 / 4.0  # S/N 15 over 16 samples
        x.astype("<f4").tofile(self.p("short.f32"))
        rc, _, err = self.tool("boxcar", self.p("short.f32"), "--backend", "cpu", "-o",
                               self.p("s.json"))
        self.assertEqual(rc, 0, err)
        warn = [l for l in err.splitlines() if "warning" in l]
        self.assertEqual(len(warn), 1, err)
        self.assertTrue(warn[0].startswith("transient-detect: warning: boxcar: the stream "
                                           "ended after 4000 samples"), err)
        self.assertIn("16384", warn[0])
        with open(self.p("s.json")) as f:
            dets = json.load(f)["detections"]
        self.assertEqual(len(dets), 1, dets)
        d = dets[0]
        self.assertLessEqual(abs(d["sample"] - 600), 4)
        self.assertAlmostEqual(d["snr"], 15.0, delta=3.0)
        # centre = start + (width - 1) / 2 with its fraction
        self.assertEqual(d["centre"], d["sample"] + (d["width"] - 1) / 2.0)
        rc, out, err = self.tool("boxcar", self.p("short.f32"), "--backend", "cpu", "-q")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("warning", err)
        row = out.splitlines()[1].split(",")
        self.assertEqual(float(row[5]), int(row[0]) + (int(row[2]) - 1) / 2.0)
        # Shorter than the widest boxcar too: both in the one line.
        x[:200].astype("<f4").tofile(self.p("tiny.f32"))
        rc, _, err = self.tool("boxcar", self.p("tiny.f32"), "--backend", "cpu", "-q")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("ended after 200 samples", err)
        self.assertIn("fewer than the widest boxcar (256)", err)
        # A long enough input with --window 1024: no warning.
        big = np.tile(x, 2)
        big.astype("<f4").tofile(self.p("long.f32"))
        rc, _, err = self.tool("boxcar", self.p("long.f32"), "--backend", "cpu", "-q",
                               "--window", 1024)
        self.assertEqual((rc, err), (0, ""))

    def test_013_frb_recording_default_settings(self):
        # A real FRB de-dispersed series of 4,626 samples (examples/data/README.md):
        # the defaults find the burst at samples 1601-1602 and nothing else.
        path = os.path.join(os.path.dirname(APP), os.pardir, "examples", "data",
                            "FRB_29_DM475.f32")
        rc, out, err = self.tool("boxcar", path, "--backend", "cpu", "-q")
        self.assertEqual(rc, 0, err)
        self.assertIn("warning: boxcar: the stream ended after 4626 samples", err)
        rows = out.splitlines()[1:]
        self.assertEqual(len(rows), 1, out)
        sample, _, width, snr = rows[0].split(",")[:4]
        self.assertTrue(1600 <= int(sample) <= 1602 and int(width) <= 4, rows[0])
        self.assertTrue(15.0 < float(snr) < 23.0, rows[0])

    # ---- SigMF output -----------------------------------------------------

    def test_020_sigmf_round_trip(self):
        x, truth = injected_pulses(seed=13)
        own = {"core:sample_start": 100, "core:sample_count": 10, "core:label": "mine",
               "core:comment": "kept"}
        g = {"core:description": "test capture", "core:author": "qa", "core:hw": "none",
             "acme:gain": 42}
        cap = [{"core:sample_start": 0, "core:frequency": 1.42e9,
                "core:datetime": "2026-01-02T03:04:05Z"}]
        meta = write_sigmf(self.p("in"), x, "rf32_le", 1e5, extra_global=g, captures=cap,
                           annotations=[own])
        with open(meta, "rb") as f:
            original = f.read()
        # Metadata elsewhere would name a dataset outside its folder: refused.
        os.mkdir(self.p("sub"))
        rc, _, err = self.tool("boxcar", meta, "--sigmf-annotations",
                               self.p("sub/annotated.sigmf-meta"))
        self.assertEqual(rc, 2)
        self.assertIn("must lie in the folder of its data", err)
        out_meta = self.p("annotated.sigmf-meta")
        rc, _, err = self.tool("boxcar", meta, "--window", 4096, "--threshold", 9, "-o",
                               self.p("det.json"), "--sigmf-annotations", out_meta,
                               "--backend", "cpu")
        self.assertEqual(rc, 0, err)
        self.assertIn("SigMF annotations in", err)
        with open(meta, "rb") as f:
            self.assertEqual(f.read(), original)  # the input is untouched
        with open(self.p("det.json")) as f:
            dets = json.load(f)["detections"]
        self.check_pulses(dets, truth)

        back = sigmf.read_meta(out_meta)
        src = sigmf.read_meta(meta)
        # The input's metadata is preserved; the copy names the input's dataset.
        self.assertEqual(os.path.realpath(back.data_path), os.path.realpath(src.data_path))
        self.assertEqual(back.doc["global"]["core:dataset"], "in.sigmf-data")
        for k, v in src.doc["global"].items():
            self.assertEqual(back.doc["global"][k], v)
        self.assertEqual(back.captures, src.captures)
        self.assertIn(own, back.annotations)
        self.assertEqual(back.nsamples, len(x))
        np.testing.assert_array_equal(back.read(0, 50), x[:50])
        exts = back.doc["global"]["core:extensions"]
        self.assertEqual([e["name"] for e in exts], ["transient"])
        # The annotations are the detections.
        mine = [a for a in back.annotations if a.get("transient:detector") == "boxcar"]
        self.assertEqual(len(mine), len(dets))
        starts = [a["core:sample_start"] for a in back.annotations]
        self.assertEqual(starts, sorted(starts))
        for a, d in zip(mine, dets):
            self.assertEqual(a["core:sample_start"], d["sample"])
            self.assertEqual(a["core:sample_count"], d["width"])
            self.assertTrue(a["core:label"].startswith("pulse"))
            self.assertEqual(a["transient:snr"], d["snr"])
            self.assertEqual(a["transient:width"], d["width"])
            self.assertNotIn("core:freq_lower_edge", a)  # real samples: no band
        self.assertEqual(tool.detections_from_annotations(back.annotations),
                         [dict(d, count=d["width"]) for d in dets])

        # The input's metadata is only written with --in-place; twice = once.
        rc, _, err = self.tool("boxcar", meta, "--sigmf-annotations", meta)
        self.assertEqual(rc, 2)
        for _ in range(2):
            rc, _, err = self.tool("boxcar", meta, "--window", 4096, "--threshold", 9,
                                   "--in-place", "-q")
            self.assertEqual((rc, err), (0, ""))
            doc = sigmf.load_json(meta)
            self.assertEqual(len(doc["annotations"]), len(dets) + 1)
            self.assertNotIn("core:dataset", doc["global"])
            self.assertEqual(doc["global"]["acme:gain"], 42)

    def test_021_sigmf_complex_band_edges(self):
        rng = np.random.default_rng(14)
        iq = rng.standard_normal((20000, 2))
        iq[12000:12030, 0] += 4
        iq[17000:17030, 0] += 4
        # Two captures (a retune at sample 15000): each pulse gets its capture's band.
        caps = [{"core:sample_start": 0, "core:frequency": 100e6},
                {"core:sample_start": 15000, "core:frequency": 200e6}]
        meta = write_sigmf(self.p("iq"), iq, "cf32_le", 2e6, captures=caps)
        rc, _, err = self.tool("boxcar", meta, "--window", 4096, "--threshold", 20,
                               "--sigmf-annotations", "-q")
        self.assertEqual(rc, 0, err)
        anns = sigmf.annotations(self.p("iq.transient.sigmf-meta"), label="pulse")
        self.assertEqual(len(anns), 2, anns)
        self.assertEqual(anns[0]["core:freq_lower_edge"], 99e6)
        self.assertEqual(anns[0]["core:freq_upper_edge"], 101e6)
        self.assertEqual(anns[1]["core:freq_lower_edge"], 199e6)
        self.assertEqual(anns[1]["core:freq_upper_edge"], 201e6)
        self.assertLessEqual(abs(anns[0]["core:sample_start"] - 12000), 15)
        self.assertLessEqual(abs(anns[1]["core:sample_start"] - 17000), 15)
        # Headers inside the data (a later capture's header_bytes) are refused.
        caps[1]["core:header_bytes"] = 8
        write_sigmf(self.p("iq"), iq, "cf32_le", 2e6, captures=caps)
        rc, _, err = self.tool("boxcar", meta)
        self.assertEqual(rc, 2)
        self.assertIn("header_bytes", err)

    def test_022_sigmf_for_other_inputs(self):
        # Raw float32: new metadata that names the raw file as its dataset.
        x, truth = pulse_train(seed=15)
        x.astype("<f4").tofile(self.p("train.f32"))
        rc, _, err = self.tool("edges", self.p("train.f32"), "--rate", 5e5,
                               "--sigmf-annotations")
        self.assertEqual(rc, 0, err)
        m = sigmf.read_meta(self.p("train.sigmf-meta"))
        self.assertEqual(m.doc["global"]["core:dataset"], "train.f32")
        self.assertEqual(m.sample_rate, 5e5)
        np.testing.assert_array_equal(m.read(), x)
        got = [(a["core:sample_start"], a["transient:polarity"]) for a in m.annotations]
        self.assertEqual(got, truth)
        self.assertEqual({a["core:label"] for a in m.annotations},
                         {"rising edge", "falling edge"})
        # SIGPROC: the header skipped with core:header_bytes.
        xp, truthp = injected_pulses(seed=16)
        write_tim(self.p("ts.tim"), xp, 1e-3)
        rc, _, err = self.tool("boxcar", self.p("ts.tim"), "--window", 4096, "--threshold",
                               9, "--sigmf-annotations", self.p("ts-det.sigmf-meta"))
        self.assertEqual(rc, 0, err)
        m = sigmf.read_meta(self.p("ts-det.sigmf-meta"))
        self.assertEqual(m.captures[0]["core:header_bytes"], len(sigproc_header(1e-3)))
        np.testing.assert_array_equal(m.read(), xp)
        self.assertEqual(len(m.annotations), len(truthp))
        # sigrok: the extracted channel becomes the .sigmf-data.
        write_sr(self.p("cap.sr"), "1 MHz", {"A": x})
        rc, _, err = self.tool("edges", self.p("cap.sr"), "--sigmf-annotations")
        self.assertEqual(rc, 0, err)
        m = sigmf.read_meta(self.p("cap.sigmf-meta"))
        self.assertNotIn("core:dataset", m.doc["global"])
        np.testing.assert_array_equal(m.read(), x)
        self.assertEqual([(a["core:sample_start"], a["transient:polarity"])
                          for a in m.annotations], truth)
        # No temporary files left beside the outputs.
        self.assertEqual([f for f in os.listdir(self.dir) if f.startswith(".")], [])

    def test_023_sigmf_module(self):
        for text, cplx, np_dt in (("rf32_le", False, "<f4"), ("cf64_be", True, ">f8"),
                                  ("ci8", True, "i1"), ("ru16_le", False, "<u2")):
            dt = sigmf.parse_datatype(text)
            self.assertEqual((dt.complex, dt.numpy), (cplx, np.dtype(np_dt)))
        for bad in ("rf32", "ci8_le", "xf32_le", "cf16_le", "", None):
            with self.assertRaises(ValueError):
                sigmf.parse_datatype(bad)
        # Big-endian complex doubles, two channels, read per channel.
        z = (np.arange(20) + 1j * np.arange(20, 40)).reshape(10, 2)
        comps = np.stack([z.real, z.imag], axis=2)
        write_sigmf(self.p("be"), comps, "cf64_be", 10.0, extra_global={"core:num_channels": 2})
        m = sigmf.read_meta(self.p("be"))
        self.assertEqual((m.nsamples, m.num_channels), (10, 2))
        np.testing.assert_array_equal(m.read(channel=1), z[:, 1].astype(np.complex64))
        # Writing: NaN becomes null, annotations sorted, the extension once.
        doc = sigmf.new_meta("rf32_le", 100.0, dataset="x.f32")
        sigmf.add_annotations(doc, [{"core:sample_start": 9, "transient:v": float("nan")},
                                    {"core:sample_start": 3}], extension={"name": "transient"})
        sigmf.add_annotations(doc, [{"core:sample_start": 5}], extension={"name": "transient"})
        sigmf.write_meta(self.p("w.sigmf-meta"), doc)
        back = sigmf.load_json(self.p("w.sigmf-meta"))
        self.assertEqual([a["core:sample_start"] for a in back["annotations"]], [3, 5, 9])
        self.assertIsNone(back["annotations"][2]["transient:v"])
        self.assertEqual(len(back["global"]["core:extensions"]), 1)
        # Negative or non-integer sample_start is refused.
        back["annotations"][0]["core:sample_start"] = -1
        sigmf.write_meta(self.p("w.sigmf-meta"), back)
        with self.assertRaises(ValueError):
            sigmf.load_json(self.p("w.sigmf-meta"))

    # ---- errors -----------------------------------------------------------

    def check_error(self, argv, needle, out_name="out.csv"):
        """One line on stderr, status 2, no output file (run as a program)."""
        out = self.p(out_name)
        before = set(os.listdir(self.dir))
        r = subprocess.run([sys.executable, APP] + [str(a) for a in argv] + ["-o", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 2, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("transient-detect: error: "), err)
        self.assertIn(needle, err)
        self.assertEqual(r.stdout, b"")
        self.assertEqual(set(os.listdir(self.dir)), before)  # nothing written

    def test_030_broken_inputs(self):
        x, _ = pulse_train(n=4000)
        # Truncated raw data.
        with open(self.p("t.f32"), "wb") as f:
            f.write(x.astype("<f4").tobytes()[:-1])
        self.check_error(["edges", self.p("t.f32")], "truncated")
        with open(self.p("t.c64"), "wb") as f:
            f.write(x.astype("<f4").tobytes()[:-4])  # odd number of floats
        self.check_error(["boxcar", self.p("t.c64")], "truncated")
        # SigMF: truncated data, garbled JSON, unknown datatype, no global.
        meta = write_sigmf(self.p("s"), x, "rf32_le", 1e3)
        with open(self.p("s.sigmf-data"), "r+b") as f:
            f.truncate(4 * len(x) - 2)
        self.check_error(["edges", meta], "truncated")
        with open(meta, "w") as f:
            f.write('{"global": {"core:datatype": "rf32_le", ')
        self.check_error(["edges", meta], "invalid JSON")
        write_sigmf(self.p("s"), x, "rf32_le", 1e3)
        doc = sigmf.load_json(meta)
        doc["global"]["core:datatype"] = "rq12_le"
        sigmf.write_meta(meta, doc)
        self.check_error(["edges", meta], "unknown SigMF datatype")
        sigmf.write_meta(meta, {"captures": []})
        self.check_error(["edges", meta], "no 'global'")
        # SIGPROC: garbled header, truncated data, wrong nsamples.
        write_tim(self.p("g.tim"), x, 1e-3)
        with open(self.p("g.tim"), "r+b") as f:
            f.seek(20)
            f.write(b"\xff\xff\xff\x7f")
        self.check_error(["boxcar", self.p("g.tim")], "SIGPROC")
        write_tim(self.p("g.tim"), x, 1e-3)
        with open(self.p("g.tim"), "r+b") as f:
            f.truncate(os.path.getsize(self.p("g.tim")) - 3)
        self.check_error(["boxcar", self.p("g.tim")], "truncated")
        with open(self.p("g.tim"), "wb") as f:
            f.write(_sp_str("HEADER_START") + _sp_str("tsamp"))
        self.check_error(["boxcar", self.p("g.tim")], "truncated")
        # PRESTO: .dat shorter than the .inf says, no .inf, garbled .inf.
        write_presto(self.p("p"), x, 1e-3, n=len(x) + 10)
        self.check_error(["boxcar", self.p("p.dat")], "truncated")
        os.unlink(self.p("p.inf"))
        self.check_error(["boxcar", self.p("p.dat")], ".inf")
        with open(self.p("p.inf"), "w") as f:
            f.write("garbage without a value\n")
        self.check_error(["boxcar", self.p("p.dat")], "description = value")
        # sigrok: not a zip, a truncated zip, no metadata.
        with open(self.p("n.sr"), "wb") as f:
            f.write(b"not a zip archive at all" * 10)
        self.check_error(["edges", self.p("n.sr")], "not a sigrok session")
        write_sr(self.p("z.sr"), "1 MHz", {"A": x})
        with open(self.p("z.sr"), "r+b") as f:
            f.truncate(os.path.getsize(self.p("z.sr")) // 2)
        self.check_error(["edges", self.p("z.sr")], "sigrok")
        with zipfile.ZipFile(self.p("m.sr"), "w") as z:
            z.writestr("analog-1-1-1", b"\0" * 16)
        self.check_error(["edges", self.p("m.sr")], "no 'metadata'")
        # Analog chunk that is not whole float32 samples.
        with zipfile.ZipFile(self.p("h.sr"), "w") as z:
            z.writestr("version", "2")
            z.writestr("metadata", "[device 1]\nsamplerate=1 MHz\nanalog1=A\n")
            z.writestr("analog-1-1-1", b"\0" * 18)
        self.check_error(["edges", self.p("h.sr")], "truncated")

    def test_031_unknown_formats_and_missing_files(self):
        with open(self.p("mystery.xyz"), "wb") as f:
            f.write(os.urandom(400))
        self.check_error(["edges", self.p("mystery.xyz")], "unknown recording format")
        self.check_error(["edges", self.p("absent.f32")], "absent.f32")
        self.check_error(["edges", self.p("absent.sigmf-meta")], "absent.sigmf-meta")
        # A format named by --format that the bytes do not fit.
        with open(self.p("mystery.xyz"), "wb") as f:
            f.write(b"\0" * 10)
        self.check_error(["edges", self.p("mystery.xyz"), "--format", "sigproc"], "SIGPROC")

    def test_032_bad_options(self):
        x, _ = pulse_train(n=4000)
        x.astype("<f4").tofile(self.p("ok.f32"))
        ok = self.p("ok.f32")
        self.check_error(["nodetector", ok], "invalid choice")
        self.check_error(["edges", ok, "--no-such-option"], "unrecognized")
        self.check_error(["boxcar", ok, "--threshold", "abc"], "invalid float")
        self.check_error(["spiir", ok], "--bank")
        self.check_error(["boxcar", ok, "--max-width", "0"], "max_width")
        self.check_error(["edges", ok, "--low", "0.6"], "edges")  # low > mid
        self.check_error(["edges", ok, "--rate", "-1"], "positive")
        self.check_error(["edges", ok, "--start", "5000"], "beyond")
        self.check_error(["edges", ok, "--format", "wav"], "invalid choice")
        self.check_error(["edges", ok, "--in-place"], "SigMF input")
        self.check_error(["edges", ok], "-o", out_name="out.txt")
        self.check_error(["edges", ok, "--sigmf-annotations", self.p("a.json")], ".sigmf-meta")
        self.check_error(["kalman", ok, "--Ns", "200"], "kalman")
        iq = np.zeros(100, np.complex64)
        iq.tofile(self.p("iq.c64"))
        self.check_error(["edges", self.p("iq.c64")], "--complex-to")

    # ---- program behaviour ------------------------------------------------

    def test_040_program_progress_and_summary(self):
        x, truth = pulse_train()
        x.astype("<f4").tofile(self.p("train.f32"))
        r = subprocess.run([sys.executable, APP, "edges", self.p("train.f32"), "--progress",
                            "--rate", "1e3", "--backend", "cpu", "-o", self.p("e.csv")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 0, err)
        self.assertIn("100.0%", err)
        self.assertIn("edges: %d detections in %d samples" % (len(truth), len(x)), err)
        with open(self.p("e.csv")) as f:
            self.assertEqual(len(f.read().splitlines()), len(truth) + 1)
        r = subprocess.run([sys.executable, APP, "edges", self.p("train.f32"), "-q"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(len(r.stdout.decode().splitlines()), len(truth) + 1)
        # stderr a terminal: the bar without --progress; -q still silences it.
        for quiet in (False, True):
            master, slave = pty.openpty()
            r = subprocess.run([sys.executable, APP, "edges", self.p("train.f32"), "-o",
                                self.p("t.json")] + (["-q"] if quiet else []),
                               stdout=subprocess.PIPE, stderr=slave, timeout=120)
            os.close(slave)
            tty = b""
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                tty += chunk
            os.close(master)
            self.assertEqual(r.returncode, 0)
            self.assertEqual(b"100.0%" in tty, not quiet, tty)
        # -o - with --output-format json: the JSON document on stdout.
        r = subprocess.run([sys.executable, APP, "edges", self.p("train.f32"), "-o", "-",
                            "--output-format", "json", "-q"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(json.loads(r.stdout.decode())["detections"]), len(truth))
        # A large native file and a converted one: chunked streaming, same result.
        big = np.tile(x, 20)
        big.astype("<f4").tofile(self.p("big.f32"))
        write_tim(self.p("big.tim"), big, 1e-3)
        a = self.tool_json("edges", self.p("big.f32"))["detections"]
        b = self.tool_json("edges", self.p("big.tim"))["detections"]
        self.assertEqual(len(a), 20 * len(truth))
        self.assertEqual([(d["sample"], d["polarity"]) for d in a],
                         [(d["sample"], d["polarity"]) for d in b])


if __name__ == "__main__":
    gr_unittest.run(qa_transient_detect)
