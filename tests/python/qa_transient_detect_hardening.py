#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""transient-detect as a hostile user meets it (docs/reliability.md): inputs
that used to hang the run, outputs that used to be clobbered, headers and
options that used to size huge buffers, and settings that silently found
nothing. Every case ends within seconds with a one-line error naming the file
and a non-zero exit, or succeeds with nothing clobbered."""

import importlib.util
import os
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from gnuradio import gr_unittest
from gnuradio.transient import io_checks
from gnuradio.transient import sigmf

HERE = os.path.dirname(os.path.abspath(__file__))
APP = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir, "apps", "transient_detect.py"))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The writers of the formats are those of the tool's main test.
qa = _load("qa_transient_detect_writers", os.path.join(HERE, "qa_transient_detect.py"))


class qa_transient_detect_hardening(gr_unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="qa_hardening_")

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.dir])

    def p(self, name):
        return os.path.join(self.dir, name)

    def cli(self, *argv, env=None, timeout=30):
        """Run the program: (status, stdout bytes, stderr text, seconds)."""
        t0 = time.time()
        r = subprocess.run([sys.executable, APP] + [str(a) for a in argv],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           env=dict(os.environ, **(env or {})))
        return r.returncode, r.stdout, r.stderr.decode(), time.time() - t0

    def refused(self, name, *argv, rc=2, env=None):
        """The program refuses with one line naming `name`, quickly."""
        code, out, err, secs = self.cli(*argv, env=env)
        self.assertEqual(code, rc, err)
        lines = [l for l in err.splitlines() if "transient-detect: error:" in l]
        self.assertEqual(len(lines), 1, err)
        self.assertIn(name, lines[0])
        self.assertNotIn("Traceback", err)
        self.assertLess(secs, 20)
        return lines[0]

    def train(self, name="train.f32", n=20000, scale=1.0):
        x, truth = qa.pulse_train(n)
        (scale * x).astype("<f4").tofile(self.p(name))
        return self.p(name), truth

    # ---- inputs that used to hang ----------------------------------------------

    def test_001_directory_named_like_a_recording(self):
        os.mkdir(self.p("x.f32"))
        self.assertIn("directory", self.refused("x.f32", "edges", self.p("x.f32")))
        os.mkdir(self.p("plain"))
        self.refused("plain", "edges", self.p("plain"), "--format", "f32")
        self.refused("plain", "boxcar", self.p("plain"), "--format", "c64")

    def test_002_sigmf_data_that_is_a_directory(self):
        meta = qa.write_sigmf(self.p("rec"), np.zeros(100), "rf32_le", 1e3)
        os.unlink(self.p("rec.sigmf-data"))
        os.mkdir(self.p("rec.sigmf-data"))
        self.refused("rec.sigmf-data", "edges", meta)

    def test_003_fifo_and_unreadable_inputs(self):
        os.mkfifo(self.p("f.f32"))
        self.assertIn("FIFO", self.refused("f.f32", "edges", self.p("f.f32")))
        os.mkdir(self.p("t.sigmf-meta"))
        self.refused("t.sigmf-meta", "edges", self.p("t.sigmf-meta"))

    def test_004_file_truncated_while_read(self):
        rng = np.random.default_rng(3)
        raw = self.p("long.f32")
        rng.standard_normal(1 << 23).astype("<f4").tofile(raw)
        # int16 SigMF streams through the Python chunk source, not file_source
        meta = qa.write_sigmf(self.p("long16"), rng.integers(-99, 99, 1 << 23), "ri16_le",
                              1e6)
        for inp, data in ((raw, raw), (meta, self.p("long16.sigmf-data"))):
            proc = subprocess.Popen([sys.executable, APP, "kalman", inp, "--progress", "-o",
                                     self.p("out.csv"), "--backend", "cpu"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            err = b""
            while b"[" not in err:  # the flowgraph runs
                c = proc.stderr.read(1)
                self.assertNotEqual(c, b"", "ended before running")
                err += c
            os.truncate(data, 4096)
            t0 = time.time()
            out, rest = proc.communicate(timeout=30)
            err = (err + rest).decode()
            self.assertLess(time.time() - t0, 15)
            self.assertEqual(proc.returncode, 1, err)
            self.assertRegex(err, os.path.basename(data) + ": (truncated while being read|"
                             "ends early)")
            self.assertFalse(os.path.exists(self.p("out.csv")))

    def test_005_stream_watch(self):
        path, _ = self.train()
        now = [0.0]
        w = io_checks.StreamWatch(path, os.path.getsize(path), 1000, stall_s=10,
                                  clock=lambda: now[0])
        self.assertIsNone(w.check(0))
        now[0] = 5
        self.assertIsNone(w.check(100))
        now[0] = 14
        self.assertIsNone(w.check(100))
        now[0] = 16
        self.assertIn("no sample moved for 10 s", w.check(100))
        self.assertIsNone(w.check(1000))  # all read: the detector may be finishing
        now[0] = 30
        self.assertIsNone(w.check(1000))
        os.truncate(path, 8)
        self.assertIn("truncated while being read", w.check(200))
        os.unlink(path)
        self.assertIn("cannot be read any more", w.check(300))

    # ---- headers and options that used to size huge buffers -------------------

    def test_010_bank_and_model_files(self):
        path, _ = self.train()
        os.mkdir(self.p("bank.bin"))
        self.assertIn("directory", self.refused("bank.bin", "spiir", path, "--bank",
                                                self.p("bank.bin")))
        with open(self.p("m.bin"), "wb") as f:  # a header of Q = 4, M = 2^20: 16 bytes
            f.write(b"TRKALM01" + struct.pack("<II", 4, 1 << 20))
        line = self.refused("m.bin", "kalman", path, "--model-file", self.p("m.bin"))
        self.assertIn("truncated", line)

    def test_011_channel_counts_against_the_file(self):
        g = {"core:num_channels": 1 << 18}
        meta = qa.write_sigmf(self.p("wide"), np.zeros(1 << 18), "rf32_le", 1e3,
                              extra_global=g)
        self.assertIn("at most", self.refused("wide.sigmf-data", "boxcar", meta))
        with open(self.p("wide.fil"), "wb") as f:
            f.write(qa.sigproc_header(1e-3, 32, 1 << 18))
            f.write(np.zeros(1 << 18, "<f4").tobytes())
        self.refused("wide.fil", "boxcar", self.p("wide.fil"))

    def test_012_sigrok_extraction_capped(self):
        x = np.zeros(1 << 16, np.float32)
        qa.write_sr(self.p("s.sr"), "1 MHz", {"A0": x})
        tmp = self.p("tmp")
        os.mkdir(tmp)
        line = self.refused("s.sr", "edges", self.p("s.sr"),
                            env={"TRANSIENT_MAX_EXTRACT_BYTES": "1000", "TMPDIR": tmp})
        self.assertIn("TRANSIENT_MAX_EXTRACT_BYTES", line)
        self.assertEqual(os.listdir(tmp), [])

    def test_013_sigrok_samplerate_must_be_finite(self):
        qa.write_sr(self.p("inf.sr"), "1e999 Hz", {"A0": np.zeros(100, np.float32)})
        self.refused("inf.sr", "edges", self.p("inf.sr"))

    def test_014_sigmf_dataset_stays_in_its_folder(self):
        for ds in ("/etc/hostname", "../outside.f32", "sub/../../outside.f32"):
            meta = qa.write_sigmf(self.p("r"), np.zeros(100), "rf32_le", 1e3,
                                  extra_global={"core:dataset": ds})
            self.assertIn("core:dataset", self.refused("r.sigmf-meta", "edges", meta))

    def test_015_deep_json_names_the_file(self):
        with open(self.p("deep.sigmf-meta"), "w") as f:
            f.write("[" * 100000 + "]" * 100000)
        self.refused("deep.sigmf-meta", "edges", self.p("deep.sigmf-meta"))

    def test_016_edges_level_settings_bounded(self):
        path, _ = self.train()
        self.refused("--level-samples", "edges", path, "--auto-levels", "--level-samples",
                     1 << 30)
        self.refused("--hist-bins", "edges", path, "--auto-levels", "--hist-bins", 1 << 20)
        self.refused("--level-interval", "edges", path, "--auto-levels", "--hist-bins", 50000,
                     "--level-interval", 1000)

    # ---- outputs ------------------------------------------------------------------

    def test_020_existing_sigmf_meta_merged(self):
        path, truth = self.train("cap.f32")
        mine = {"core:sample_start": 5, "core:label": "theirs"}
        doc = sigmf.new_meta("rf32_le", 1e3, dataset="cap.f32", description="kept")
        doc["global"]["core:author"] = "someone"
        doc["annotations"].append(mine)
        sigmf.write_meta(self.p("cap.sigmf-meta"), doc)
        for _ in range(2):  # a second run replaces its own annotations only
            code, _, err, _ = self.cli("edges", path, "--sigmf-annotations", "-q")
            self.assertEqual(code, 0, err)
            back = sigmf.load_json(self.p("cap.sigmf-meta"))
            self.assertEqual(back["global"]["core:author"], "someone")
            self.assertEqual(back["global"]["core:description"], "kept")
            self.assertIn(mine, back["annotations"])
            self.assertEqual(len(back["annotations"]), len(truth) + 1)
        # Another recording of the same name (.tim beside the .f32): refused.
        qa.write_tim(self.p("cap.tim"), np.zeros(100), 1e-3)
        with open(self.p("cap.sigmf-meta"), "rb") as f:
            before = f.read()
        self.assertIn("describes another recording",
                      self.refused("cap.sigmf-meta", "edges", self.p("cap.tim"),
                                   "--sigmf-annotations"))
        with open(self.p("cap.sigmf-meta"), "rb") as f:
            self.assertEqual(f.read(), before)

    def test_021_stdout_fifo_symlink_and_device(self):
        path, truth = self.train()
        code, out, err, _ = self.cli("edges", path, "-o", "-", "-q")
        self.assertEqual(code, 0, err)
        self.assertEqual(len(out.decode().splitlines()), len(truth) + 1)
        # A FIFO is written in place.
        fifo = self.p("out.csv")
        os.mkfifo(fifo)
        got = []

        def read_fifo():
            with open(fifo, "rb") as f:
                got.append(f.read())

        reader = threading.Thread(target=read_fifo)
        reader.start()
        code, _, err, _ = self.cli("edges", path, "-o", fifo, "-q")
        reader.join(30)
        self.assertEqual(code, 0, err)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(len(got[0].decode().splitlines()), len(truth) + 1)
        # A symlink is followed: the link stays, its target holds the output.
        os.symlink("target.csv", self.p("link.csv"))
        code, _, err, _ = self.cli("edges", path, "-o", self.p("link.csv"), "-q")
        self.assertEqual(code, 0, err)
        self.assertTrue(os.path.islink(self.p("link.csv")))
        with open(self.p("target.csv")) as f:
            self.assertEqual(len(f.read().splitlines()), len(truth) + 1)
        os.symlink("missing/x.csv", self.p("dangling.csv"))
        self.refused("dangling.csv", "edges", path, "-o", self.p("dangling.csv"))
        # A device node stays a device node.
        code, _, err, _ = self.cli("edges", path, "-o", os.devnull, "--output-format", "csv")
        self.assertEqual(code, 0, err)
        self.assertTrue(stat.S_ISCHR(os.stat(os.devnull).st_mode))
        self.assertEqual([f for f in os.listdir("/dev") if f.startswith(".null.")], [])

    def test_022_output_folder_checked_before_the_run(self):
        path, _ = self.train()
        with open(self.p("file"), "w"):
            pass
        self.refused("x.csv", "edges", path, "-o", self.p("file/x.csv"))
        os.mkdir(self.p("d.csv"))
        self.refused("d.csv", "edges", path, "-o", self.p("d.csv"))
        if os.geteuid() != 0:  # root may write anywhere
            os.mkdir(self.p("ro"), 0o555)
            self.refused("ro", "edges", path, "-o", self.p("ro/x.csv"))

    def test_023_sigterm_and_sighup_remove_temp_files(self):
        rng = np.random.default_rng(4)
        qa.write_sr(self.p("big.sr"), "1 MHz",
                    {"A0": rng.standard_normal(1 << 22).astype(np.float32)}, chunk=1 << 20)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            tmp = self.p("tmp%d" % sig)
            os.mkdir(tmp)
            proc = subprocess.Popen([sys.executable, APP, "kalman", self.p("big.sr"),
                                     "--progress", "-o", self.p("o.csv")],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=dict(os.environ, TMPDIR=tmp))
            err = b""
            while b"[" not in err:
                c = proc.stderr.read(1)
                self.assertNotEqual(c, b"", "ended before running")
                err += c
            self.assertEqual(len(os.listdir(tmp)), 1)  # the extracted channel
            proc.send_signal(sig)
            proc.communicate(timeout=30)
            self.assertEqual(proc.returncode, 128 + sig)
            self.assertEqual(os.listdir(tmp), [])
            self.assertFalse(os.path.exists(self.p("o.csv")))

    def test_024_sigrok_data_without_metadata_kept(self):
        qa.write_sr(self.p("s.sr"), "1 MHz", {"A0": np.zeros(1000, np.float32)})
        with open(self.p("s.sigmf-data"), "wb") as f:
            f.write(b"someone else's")
        self.refused("s.sigmf-data", "edges", self.p("s.sr"), "--sigmf-annotations")
        with open(self.p("s.sigmf-data"), "rb") as f:
            self.assertEqual(f.read(), b"someone else's")
        # A second run on the same session and channel adds to its own metadata.
        os.unlink(self.p("s.sigmf-data"))
        for _ in range(2):
            code, _, err, _ = self.cli("edges", self.p("s.sr"), "--sigmf-annotations", "-q")
            self.assertEqual(code, 0, err)
        self.assertEqual(sigmf.read_meta(self.p("s.sigmf-meta")).nsamples, 1000)

    # ---- results that are likely not what the user wanted -----------------------

    def test_030_edges_level_warnings(self):
        path, truth = self.train("logic.f32", scale=3.3)
        code, _, err, _ = self.cli("edges", path, "-o", self.p("o.csv"))
        self.assertEqual(code, 0, err)
        self.assertIn("warning: default levels 0.1/0.5/0.9 on data from", err)
        self.assertIn("--auto-levels", err)
        code, _, err, _ = self.cli("edges", path, "-o", self.p("o.csv"), "--low", 5,
                                   "--mid", 6, "--high", 7)
        self.assertEqual(code, 0, err)
        self.assertIn("0 transitions found", err)
        code, _, err, _ = self.cli("edges", path, "-o", self.p("o.csv"), "--low", 0.3,
                                   "--mid", 1.65, "--high", 3.0)
        self.assertEqual(code, 0, err)
        self.assertNotIn("warning", err)


if __name__ == "__main__":
    gr_unittest.run(qa_transient_detect_hardening)
