#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""detections_to_pdu: the samples around each detection of a gr-transient
block as a PDU, the way gr-pdu's Tags to PDU hands bursts on.

The block reads two streams of equal rate: "in" (input 0), the samples the
PDUs are cut from, and "tags" (input 1), the detector's output that carries its
tags. The detectors are time-aligned (their output sample k belongs to input
sample k), so a tag at absolute offset k marks sample k of "in". It publishes
on the message port "pdus" one PDU per detection, as gr-pdu does: a pair
(metadata dict, uniform vector) made by pmt.cons, the vector an f32vector for
float samples or a c32vector for complex ones.

  detector "edges"  (tags "edge" of edge_localizer_f): the burst between a
      transition of the chosen polarity and the next transition, from the
      first sample in the new state to the first sample after it. Metadata:
      start, end (uint64 offsets), start_time, end_time (interpolated crossing
      times, samples), width (end_time - start_time), polarity.
  detector "boxcar" (tags "pulse" of boxcar_search_ff/_cf): the pulse's boxcar
      start .. start + width - 1. Metadata: the tag's dict (start, width, snr,
      channel, sample, members). With vector samples (vlen > 1) the PDU holds
      the pulse's channel.
  detector "kalman" (tags "burst" of kalman_detector_ff, on its LLR output):
      the burst from its True tag to its False tag. Metadata: start, end
      (uint64), peak (offset of the highest LLR), peak_llr.

Every PDU's metadata also has what gr-pdu's Tags to PDU gives (GNU Radio 3.10):
pdu_num (uint64, counting from 0) and, with a sample rate, sample_rate (double)
and rx_time, the (uint64 seconds, double fraction) tuple of the PDU's first
sample, in time since the stream's first sample; and detector (the name
above) and pdu_start (uint64 offset of the PDU's first sample, start minus
the margin). pre and post samples of margin
widen the PDU on each side (not before the stream's first sample). A burst
longer than max_samples is cut there and its metadata has truncated: True. A
burst still open when the stream ends gives no PDU.

The "in" stream reaches this block at once while the detector holds its
output back (boxcar_search: hold() samples; edge_localizer_f with auto levels:
level_samples); the buffer between the signal's source and "in" must hold as
many samples (GRC: the source's Min Output Buffer), or the flow graph stalls.
"""

import numpy as np
import pmt
from gnuradio import gr

DETECTORS = {"edges": "edge", "boxcar": "pulse", "kalman": "burst"}
ITEMS = {"float": np.float32, "complex": np.complex64}
_PDUS = pmt.intern("pdus")


def _u64(v):
    return pmt.from_uint64(int(v))


class detections_to_pdu(gr.sync_block):
    """PDUs (gr-pdu's form) of what the edge localizer, the boxcar search or the
    Kalman detector found, on "pdus" (gnuradio.transient.detections_pdu)."""

    def __init__(self, detector="edges", itemtype="float", vlen=1, tag_vlen=1, pre=0,
                 post=0, max_samples=65536, samp_rate=0.0, polarity=1):
        """Make a detections-to-PDU block; the module's documentation says what
        its PDUs hold.

        Args:
            detector: "edges", "boxcar" or "kalman" (the block whose tags input 1
                carries)
            itemtype: "float" or "complex", the samples of input 0
            vlen: vector length of input 0
            tag_vlen: vector length of input 1 (boxcar: its channels; else 1)
            pre, post: samples of margin before and after each burst (>= 0)
            max_samples: longest PDU in samples (> 0); longer bursts are cut
            samp_rate: sample rate in Hz for rx_time (0: no sample_rate, rx_time)
            polarity: edges: +1 for the high pulses (rising to falling), -1 for
                the low pulses

        Raises:
            ValueError: invalid parameters
        """
        if detector not in DETECTORS:
            raise ValueError("detections_to_pdu: detector must be one of %s, not %r" %
                             (", ".join(DETECTORS), detector))
        if itemtype not in ITEMS:
            raise ValueError("detections_to_pdu: itemtype must be 'float' or 'complex', "
                             "not %r" % (itemtype, ))
        if int(vlen) < 1 or int(tag_vlen) < 1:
            raise ValueError("detections_to_pdu: vlen and tag_vlen must be >= 1")
        if int(vlen) > 1 and int(vlen) != int(tag_vlen):
            raise ValueError("detections_to_pdu: vector samples (vlen %d) need one "
                             "channel per tag channel (tag_vlen %d)" % (vlen, tag_vlen))
        if int(pre) < 0 or int(post) < 0 or int(max_samples) < 1:
            raise ValueError("detections_to_pdu: pre and post must be >= 0 and "
                             "max_samples >= 1")
        if not samp_rate >= 0:
            raise ValueError("detections_to_pdu: samp_rate must be >= 0")
        if int(polarity) not in (1, -1):
            raise ValueError("detections_to_pdu: polarity must be +1 or -1")
        dtype = ITEMS[itemtype]
        gr.sync_block.__init__(
            self, name="detections_to_pdu",
            in_sig=[(dtype, int(vlen)) if int(vlen) > 1 else dtype,
                    (np.float32, int(tag_vlen)) if int(tag_vlen) > 1 else np.float32],
            out_sig=None)
        self.message_port_register_out(_PDUS)
        self.detector, self.key = detector, pmt.intern(DETECTORS[detector])
        self.dtype, self.vlen = dtype, int(vlen)
        self.pre, self.post, self.max_samples = int(pre), int(post), int(max_samples)
        self.samp_rate, self.polarity = float(samp_rate), int(polarity)
        self.count = 0
        self.buf = np.zeros((0, self.vlen) if self.vlen > 1 else 0, dtype)
        self.llr = np.zeros(0, np.float32)  # kalman: input 1 beside buf
        self.buf_start = 0                  # absolute offset of buf[0]
        self.open = None                    # (start offset, metadata) of an open burst
        self.pending = []                   # (lo, hi, metadata, channel) to publish

    def _publish(self, lo, hi, meta, channel):
        first = lo - self.buf_start
        data = self.buf[first:first + (hi - lo)]
        if self.vlen > 1:
            data = data[:, channel]
        meta = pmt.dict_add(meta, pmt.intern("detector"), pmt.intern(self.detector))
        meta = pmt.dict_add(meta, pmt.intern("pdu_start"), _u64(lo))
        meta = pmt.dict_add(meta, pmt.intern("pdu_num"), _u64(self.count))
        if self.samp_rate > 0:
            secs = int(lo // self.samp_rate)
            frac = (lo - secs * self.samp_rate) / self.samp_rate  # exact for large offsets
            meta = pmt.dict_add(meta, pmt.intern("sample_rate"), pmt.from_double(self.samp_rate))
            meta = pmt.dict_add(meta, pmt.intern("rx_time"),
                                pmt.make_tuple(_u64(secs), pmt.from_double(frac)))
        self.count += 1
        self.message_port_pub(_PDUS, pmt.cons(meta, pmt.to_pmt(np.ascontiguousarray(data))))

    def _queue(self, start, end, meta, channel=0):
        """A burst start .. end - 1: published once its last margin sample is in."""
        lo = max(start - self.pre, 0)
        hi = end + self.post
        if hi - lo > self.max_samples:
            hi = lo + self.max_samples
            meta = pmt.dict_add(meta, pmt.intern("truncated"), pmt.PMT_T)
        self.pending.append((lo, hi, meta, channel))

    def _edge(self, offset, value):
        pol = pmt.to_long(pmt.dict_ref(value, pmt.intern("polarity"), pmt.from_long(0)))
        t = pmt.to_double(pmt.dict_ref(value, pmt.intern("time"), pmt.from_double(np.nan)))
        if pol == self.polarity:
            self.open = (offset, t)
        elif self.open is not None:
            start, t0 = self.open
            self.open = None
            meta = pmt.make_dict()
            for k, v in (("start", _u64(start)), ("end", _u64(offset)),
                         ("start_time", pmt.from_double(t0)),
                         ("end_time", pmt.from_double(t)),
                         ("width", pmt.from_double(t - t0)),
                         ("polarity", pmt.from_long(self.polarity))):
                meta = pmt.dict_add(meta, pmt.intern(k), v)
            self._queue(start, offset, meta)

    def _pulse(self, value):
        start = pmt.to_uint64(pmt.dict_ref(value, pmt.intern("start"), _u64(0)))
        width = pmt.to_long(pmt.dict_ref(value, pmt.intern("width"), pmt.from_long(1)))
        chan = pmt.to_long(pmt.dict_ref(value, pmt.intern("channel"), pmt.from_long(0)))
        self._queue(start, start + width, value, chan)

    def _burst(self, offset, value):
        if pmt.to_bool(value):
            self.open = (offset, None)
        elif self.open is not None:
            start = self.open[0]
            self.open = None
            meta = pmt.make_dict()
            meta = pmt.dict_add(meta, pmt.intern("start"), _u64(start))
            meta = pmt.dict_add(meta, pmt.intern("end"), _u64(offset))
            # peak and peak_llr are filled in when the LLR is at hand (_peak)
            self._queue(start, offset, meta)
            self.pending[-1] += (start, offset)

    def _peak(self, meta, start, end):
        llr = self.llr[start - self.buf_start:end - self.buf_start]
        k = int(np.argmax(llr)) if len(llr) else 0
        meta = pmt.dict_add(meta, pmt.intern("peak"), _u64(start + k))
        return pmt.dict_add(meta, pmt.intern("peak_llr"),
                            pmt.from_double(float(llr[k]) if len(llr) else np.nan))

    def work(self, input_items, output_items):
        x = input_items[0]
        n = len(x)
        self.buf = np.concatenate((self.buf, x))
        if self.detector == "kalman":
            self.llr = np.concatenate((self.llr, input_items[1]))
        n0 = self.nitems_read(1)
        for tag in self.get_tags_in_window(1, 0, n, self.key):
            if self.detector == "edges":
                self._edge(tag.offset, tag.value)
            elif self.detector == "boxcar":
                self._pulse(tag.value)
            else:
                self._burst(tag.offset, tag.value)
        end = n0 + n  # samples of "in" so far
        if self.open is not None and end - max(self.open[0] - self.pre, 0) > self.max_samples:
            # an open burst that reached max_samples: cut it now
            start, t0 = self.open
            self.open = None
            meta = pmt.dict_add(pmt.make_dict(), pmt.intern("start"), _u64(start))
            meta = pmt.dict_add(meta, pmt.intern("end"), _u64(end))
            if self.detector == "edges":
                meta = pmt.dict_add(meta, pmt.intern("start_time"), pmt.from_double(t0))
                meta = pmt.dict_add(meta, pmt.intern("polarity"), pmt.from_long(self.polarity))
            self._queue(start, end, meta)
            if self.detector == "kalman":
                self.pending[-1] += (start, end)
        keep = []
        for item in self.pending:
            lo, hi, meta, chan = item[:4]
            if hi > end:
                keep.append(item)
                continue
            if len(item) > 4:
                meta = self._peak(meta, *item[4:])
            self._publish(lo, hi, meta, chan)
        self.pending = keep
        # keep the samples a pending or open burst, or the next margin, needs
        first = end - self.pre
        for item in self.pending:
            first = min(first, item[0])
        if self.open is not None:
            first = min(first, self.open[0] - self.pre)
        drop = max(0, min(first, end) - self.buf_start)
        if drop:
            self.buf = self.buf[drop:]
            if self.detector == "kalman":
                self.llr = self.llr[drop:]
            self.buf_start += drop
        return n
