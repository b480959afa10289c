#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
Burst candidates of frb_search_f: a message sink that collects the "detects"
messages of the block, prints them and, when the flow graph stops, one
summary line (what the examples' tests read).

    printer = candidate_printer(show=10, dm=60.0, dm_tol=10.0, period=1.0,
                                first=1.0, time_tol=0.01)
    tb.msg_connect((search, "detects"), (printer, "detects"))

    summary(candidates, dm=None, dm_tol=0, period=None, first=0, time_tol=0)
"""


import pmt
from gnuradio import gr


def describe(c):
    """One line per candidate."""
    return ("DM %.2f at %.4f s (sample %d), width %d, S/N %.1f, %d members" %
            (c["dm"], c["time"], c["sample"], c["width"], c["snr"], c["members"]))


def summary(cands, dm=None, dm_tol=0.0, period=None, first=0.0, time_tol=0.0):
    """'candidates: N[, at DM d +- t: K][, on the period: M, off: J], best: ...'
    With dm, K candidates lie within dm_tol of it; with period, M candidates
    lie within time_tol of first + i * period (i = 0, 1, ...), J do not."""
    s = "candidates: %d" % len(cands)
    if dm is not None:
        s += ", at DM %g +- %g: %d" % (dm, dm_tol,
                                       sum(abs(c["dm"] - dm) <= dm_tol for c in cands))
    if period:
        on = 0
        for c in cands:
            k = round((c["time"] - first) / period)
            on += k >= 0 and abs(c["time"] - (first + k * period)) <= time_tol
        s += ", on the period: %d, off: %d" % (on, len(cands) - on)
    if cands:
        s += ", best: " + describe(max(cands, key=lambda c: c["snr"]))
    return s


class candidate_printer(gr.basic_block):
    """Candidate Printer: message input "detects" (connect it to the port of an
    FRB Search). Prints the first `show` candidates as they arrive and the
    summary() line when the flow graph stops."""

    def __init__(self, show=10, dm=None, dm_tol=0.0, period=None, first=0.0,
                 time_tol=0.0):
        gr.basic_block.__init__(self, name="Candidate Printer", in_sig=None,
                                out_sig=None)
        self._port = pmt.intern("detects")
        self.message_port_register_in(self._port)
        self.set_msg_handler(self._port, self._handle)
        self._show = int(show)
        self._check = dict(dm=dm, dm_tol=dm_tol, period=period, first=first,
                           time_tol=time_tol)
        self.candidates = []

    def _handle(self, msg):
        for c in pmt.to_python(msg)["pulses"]:
            self.candidates.append(c)
            if len(self.candidates) <= self._show:
                print("candidate %d: %s" % (len(self.candidates), describe(c)), flush=True)

    def stop(self):
        print(summary(self.candidates, **self._check), flush=True)
        return True
