#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""detections_to_pdu: PDUs of the samples around the detections of the edge
localizer, the boxcar search and the Kalman detector, checked against the
detections, against gr-pdu's Tags to PDU on the same burst, and read back by
gr-pdu's PDU to Stream."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest, pdu
from gnuradio import transient


def tag(offset, key, value):
    return gr.tag_utils.python_to_tag((offset, pmt.intern(key), value, pmt.intern("src")))


def field(meta, key):
    return pmt.to_python(pmt.dict_ref(meta, pmt.intern(key), pmt.PMT_NIL))


class qa_detections_to_pdu(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def pdus(self, signal, tag_stream, blk):
        """Run signal -> in, tag_stream (a block) -> tags; the PDUs published."""
        dbg = blocks.message_debug()
        self.tb.connect(signal, (blk, 0))
        self.tb.connect(tag_stream, (blk, 1))
        self.tb.msg_connect(blk, "pdus", dbg, "store")
        self.tb.run()
        out = [dbg.get_message(i) for i in range(dbg.num_messages())]
        for m in out:
            self.assertTrue(pmt.is_pdu(m))
        return out

    def test_000_edges(self):
        # high pulses of 20 samples every 50, levels 0/1; margins 2 before, 3 after
        x = np.tile(np.r_[np.zeros(30), np.ones(20)], 8).astype(np.float32)
        x = np.r_[x, np.zeros(10, np.float32)]
        loc = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
        src = blocks.vector_source_f(x)
        self.tb.connect(src, loc)
        blk = transient.detections_to_pdu("edges", pre=2, post=3, samp_rate=1000.0)
        msgs = self.pdus(loc, loc, blk)
        ref = transient.find_edges(x, 0.1, 0.5, 0.9)
        rises = ref[ref["polarity"] == 1]
        falls = ref[ref["polarity"] == -1]
        self.assertEqual(len(msgs), 8)
        for k, m in enumerate(msgs):
            meta, data = pmt.car(m), pmt.cdr(m)
            self.assertTrue(pmt.is_f32vector(data))
            start, end = int(rises["sample"][k]), int(falls["sample"][k])
            self.assertEqual(field(meta, "start"), start)
            self.assertEqual(field(meta, "end"), end)
            self.assertEqual(field(meta, "start_time"), rises["time"][k])
            self.assertEqual(field(meta, "width"), falls["time"][k] - rises["time"][k])
            self.assertEqual(field(meta, "polarity"), 1)
            self.assertEqual(field(meta, "pdu_num"), k)
            self.assertEqual(field(meta, "pdu_start"), start - 2)
            self.assertTrue(pmt.is_uint64(pmt.dict_ref(meta, pmt.intern("pdu_num"),
                                                       pmt.PMT_NIL)))
            np.testing.assert_array_equal(pmt.f32vector_elements(data), x[start - 2:end + 3])
            secs, frac = field(meta, "rx_time")
            self.assertAlmostEqual(secs + frac, (start - 2) / 1000.0, places=12)

    def test_001_boxcar(self):
        # pulses of width 8 in white noise, found by the boxcar search
        rng = np.random.default_rng(3)
        x = rng.standard_normal(40000).astype(np.float32)
        starts = [9000, 17000, 30001]
        for s in starts:
            x[s:s + 8] += 6.0
        det = transient.boxcar_search_ff(1, "ideal", max_width=16, threshold=10.0,
                                         norm_mode="fixed", backend="cpu")
        src = blocks.vector_source_f(x)
        self.tb.connect(src, det)
        self.tb.connect((det, 1), blocks.null_sink(gr.sizeof_float))
        blk = transient.detections_to_pdu("boxcar", pre=4, post=5)
        msgs = self.pdus(src, (det, 0), blk)
        self.assertEqual(len(msgs), len(starts))
        for m, s in zip(msgs, starts):
            meta, data = pmt.car(m), pmt.cdr(m)
            start, width = field(meta, "start"), field(meta, "width")
            self.assertLessEqual(abs(start - s), 2)
            self.assertGreaterEqual(field(meta, "snr"), 10.0)
            self.assertEqual(field(meta, "channel"), 0)
            np.testing.assert_array_equal(pmt.f32vector_elements(data),
                                          x[start - 4:start + width + 5])
            self.assertNotIn("rx_time", pmt.to_python(meta))

    def test_002_kalman_against_tags_to_pdu(self):
        # the same burst as Kalman "burst" tags and as gr-pdu's SOB/EOB tags:
        # the same samples and gr-pdu's metadata
        x = (np.arange(300) % 17).astype(np.complex64) * (1 + 2j)
        llr = np.zeros(300, np.float32)
        llr[100:140] = np.hanning(40)
        tags_k = [tag(100, "burst", pmt.PMT_T), tag(140, "burst", pmt.PMT_F),
                  tag(200, "burst", pmt.PMT_T), tag(230, "burst", pmt.PMT_F)]
        tags_p = [tag(100, "sob", pmt.PMT_T), tag(140, "eob", pmt.PMT_T),
                  tag(200, "sob", pmt.PMT_T), tag(230, "eob", pmt.PMT_T)]
        src = blocks.vector_source_c(x)
        blk = transient.detections_to_pdu("kalman", "complex", samp_rate=48000.0)
        ref = pdu.tags_to_pdu_c(pmt.intern("sob"), pmt.intern("eob"), 1024, 48000.0, [],
                                False, 0, 0.0)
        dbg_ref = blocks.message_debug()
        self.tb.connect(blocks.vector_source_c(x, False, 1, tags_p), ref)
        self.tb.msg_connect(ref, "pdus", dbg_ref, "store")
        msgs = self.pdus(src, blocks.vector_source_f(llr, False, 1, tags_k), blk)
        self.assertEqual(len(msgs), 2)
        self.assertEqual(dbg_ref.num_messages(), 2)
        for k, m in enumerate(msgs):
            r = dbg_ref.get_message(k)
            self.assertTrue(pmt.is_c32vector(pmt.cdr(m)))
            self.assertTrue(pmt.equal(pmt.cdr(m), pmt.cdr(r)))
            for key in ("pdu_num", "sample_rate", "rx_time"):
                a = pmt.dict_ref(pmt.car(m), pmt.intern(key), pmt.PMT_NIL)
                b = pmt.dict_ref(pmt.car(r), pmt.intern(key), pmt.PMT_NIL)
                self.assertEqual(pmt.write_string(a), pmt.write_string(b), key)
        meta = pmt.car(msgs[0])
        self.assertEqual((field(meta, "start"), field(meta, "end")), (100, 140))
        self.assertEqual(field(meta, "peak"), 100 + int(np.argmax(np.hanning(40))))
        self.assertAlmostEqual(field(meta, "peak_llr"), float(np.hanning(40).max()), 6)

    def test_003_read_back_by_pdu_to_stream(self):
        # gr-pdu's PDU to Stream turns the PDUs back into the burst samples
        x = np.tile(np.r_[np.zeros(30), np.ones(20)], 4).astype(np.float32)
        x = np.r_[x, np.zeros(5, np.float32)]
        src = blocks.vector_source_f(x)
        loc = transient.edge_localizer_f(False, 0.1, 0.5, 0.9, backend="cpu")
        blk = transient.detections_to_pdu("edges")
        p2s = pdu.pdu_to_stream_f(pdu.EARLY_BURST_APPEND, 64)
        head = blocks.head(gr.sizeof_float, 80)
        snk = blocks.vector_sink_f()
        self.tb.connect(src, loc, (blk, 0))
        self.tb.connect(loc, (blk, 1))
        self.tb.msg_connect(blk, "pdus", p2s, "pdus")
        self.tb.connect(p2s, head, snk)
        self.tb.start()
        self.tb.wait()
        np.testing.assert_array_equal(snk.data(), np.ones(80, np.float32))

    def test_004_margins_and_truncation(self):
        # margin before the stream's start is cut; a burst longer than
        # max_samples is cut there (truncated), before its end tag arrives
        x = np.arange(500, dtype=np.float32)
        tags_k = [tag(1, "burst", pmt.PMT_T), tag(5, "burst", pmt.PMT_F),
                  tag(100, "burst", pmt.PMT_T), tag(400, "burst", pmt.PMT_F)]
        blk = transient.detections_to_pdu("kalman", pre=3, post=1, max_samples=50)
        msgs = self.pdus(blocks.vector_source_f(x),
                         blocks.vector_source_f(np.zeros(500, np.float32), False, 1, tags_k),
                         blk)
        self.assertEqual(len(msgs), 2)
        np.testing.assert_array_equal(pmt.f32vector_elements(pmt.cdr(msgs[0])), x[0:6])
        self.assertNotIn("truncated", pmt.to_python(pmt.car(msgs[0])))
        np.testing.assert_array_equal(pmt.f32vector_elements(pmt.cdr(msgs[1])), x[97:147])
        self.assertTrue(field(pmt.car(msgs[1]), "truncated"))

    def test_005_vector_channel(self):
        # vector samples: the PDU holds the pulse's channel
        x = np.arange(4 * 100, dtype=np.float32).reshape(100, 4)
        value = pmt.to_pmt({"start": 40, "width": 3, "snr": 9.0, "channel": 2,
                            "sample": 41, "members": 1})
        value = pmt.dict_add(value, pmt.intern("start"), pmt.from_uint64(40))
        tags_b = [tag(40, "pulse", value)]
        blk = transient.detections_to_pdu("boxcar", vlen=4, tag_vlen=4, pre=1, post=1)
        msgs = self.pdus(blocks.vector_source_f(x.ravel(), False, 4),
                         blocks.vector_source_f(np.zeros(400, np.float32), False, 4, tags_b),
                         blk)
        self.assertEqual(len(msgs), 1)
        np.testing.assert_array_equal(pmt.f32vector_elements(pmt.cdr(msgs[0])), x[39:44, 2])

    def test_006_errors(self):
        for kw in ({"detector": "spiir"}, {"itemtype": "int"}, {"pre": -1},
                   {"max_samples": 0}, {"vlen": 4, "tag_vlen": 2}, {"polarity": 0},
                   {"samp_rate": -1.0}):
            with self.assertRaises(ValueError):
                transient.detections_to_pdu(**kw)


if __name__ == "__main__":
    gr_unittest.run(qa_detections_to_pdu)
