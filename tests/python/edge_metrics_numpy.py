#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""An independent numpy implementation of the IEEE Std 181 edge metrics of
<transient/edge_metrics.h>, written from the header's definitions (not from
the C code), for the tests: given the samples and the transitions of
find_edges, the metrics of every transition as a dict of arrays."""
import math

import numpy as np

FIELDS = ("start", "end", "duration", "duration2", "slew", "overshoot", "undershoot",
          "pre_overshoot", "pre_undershoot", "settling", "width", "period", "duty")
CLIPPED, RECORD_END = 1, 2


class _Search(object):
    """The samples [lo, hi] of one transition and what the searches ran into."""

    def __init__(self, x, lo, hi):
        self.x, self.lo, self.hi = x, lo, hi
        self.hit_lo = self.hit_hi = False

    def crossing(self, j0, j1, level, direction, backwards):
        """Last (backwards) or first crossing of level in intervals [j, j+1],
        j0 <= j <= j1; NaN when a non-finite sample comes first or none."""
        if j1 < j0:
            (self.__setattr__("hit_lo" if backwards else "hit_hi", True))
            return math.nan
        a, b = self.x[j0:j1 + 1], self.x[j0 + 1:j1 + 2]
        hit = (a < level) & (level <= b) if direction > 0 else (b < level) & (level <= a)
        bad = ~(np.isfinite(a) & np.isfinite(b))
        stop = np.flatnonzero(hit | bad)
        if len(stop) == 0:
            self.__setattr__("hit_lo" if backwards else "hit_hi", True)
            return math.nan
        k = stop[-1] if backwards else stop[0]
        if bad[k]:
            return math.nan
        return (j0 + k) + (level - a[k]) / (b[k] - a[k])

    def region(self, a, b):
        j0, j1 = int(math.ceil(a)), int(math.floor(b))
        if j0 < self.lo:
            self.hit_lo, j0 = True, self.lo
        if j1 > self.hi:
            self.hit_hi, j1 = True, self.hi
        v = self.x[j0:j1 + 1] if j1 >= j0 else self.x[:0]
        return v[np.isfinite(v)]


def _deviations(v, level, pol, amp):
    if len(v) == 0:
        return math.nan, math.nan
    d = pol * (v - level) / amp * 100.0
    return max(0.0, float(d.max())), max(0.0, float((-d).max()))


def metrics(x, edges, low, high, tolerance_pct=10.0, ref=(10.0, 90.0), ref2=(20.0, 80.0),
            region_factor=3.0, settle_pct=2.0, window=65536):
    """x: the samples (float32); edges: find_edges' structured array with the
    levels low < high (state boundaries); state levels from them and
    tolerance_pct. Returns a dict of arrays (FIELDS, "flags")."""
    x32 = np.asarray(x, np.float32)
    x = x32.astype(np.float64)
    n, ne = len(x), len(edges)
    t = tolerance_pct / 100.0
    amp = (float(np.float32(high)) - float(np.float32(low))) / (1.0 - 2.0 * t)
    s1, s2 = float(np.float32(low)) - t * amp, float(np.float32(high)) + t * amp
    amp = s2 - s1
    out = {k: np.full(ne, np.nan) for k in FIELDS}
    out["flags"] = np.zeros(ne, np.uint32)
    times = edges["time"].astype(np.float64)
    samples = edges["sample"].astype(np.int64)
    pols = edges["polarity"].astype(np.int64)
    out["width"][:-1] = times[1:] - times[:-1]
    out["period"][:-2] = times[2:] - times[:-2]
    out["duty"][:-2] = out["width"][:-2] / out["period"][:-2]
    for i in range(ne):
        s, tm, pol = int(samples[i]), float(times[i]), int(pols[i])
        lo_nb = 0
        if i > 0:
            lo_nb = int(math.floor(times[i - 1])) + 1 if math.isfinite(times[i - 1]) \
                else int(samples[i - 1])
        lo, lo_window = max(s - window, lo_nb), s - window > lo_nb
        hi_window = hi_record = False
        if i + 1 < ne and samples[i + 1] <= s + window:
            hi = int(math.floor(times[i + 1])) if math.isfinite(times[i + 1]) \
                else int(samples[i + 1]) - 1
        elif s + window <= n - 1:
            hi, hi_window = s + window, True
        else:
            hi, hi_record = n - 1, True
        if not math.isfinite(tm):
            continue
        se = _Search(x, lo, hi)
        i0 = int(math.floor(tm))
        if i0 < lo:
            se.hit_lo = True
        else:
            inst = []
            for pl, ph in (ref, ref2):
                r_lo, r_hi = s1 + pl / 100.0 * amp, s1 + ph / 100.0 * amp
                a = se.crossing(lo, i0, r_lo if pol > 0 else r_hi, pol, True)
                b = se.crossing(i0, hi - 1, r_hi if pol > 0 else r_lo, pol, False)
                inst.append((a, b))
            (st, en), (st2, en2) = inst
            dur = en - st
            out["start"][i], out["end"][i], out["duration"][i] = st, en, dur
            out["duration2"][i] = en2 - st2
            out["slew"][i] = pol * (ref[1] - ref[0]) / 100.0 * amp / dur
            s_init, s_final = (s1, s2) if pol > 0 else (s2, s1)
            if math.isfinite(dur):
                ln = region_factor * dur
                out["overshoot"][i], out["undershoot"][i] = _deviations(
                    se.region(s, s + ln), s_final, pol, amp)
                seg = x32[lo:i0 + 1]
                in_state = np.isfinite(seg) & ((seg <= np.float32(low)) if pol > 0 else
                                               (seg >= np.float32(high)))
                k = np.flatnonzero(in_state)
                if len(k) == 0:
                    se.hit_lo = True
                else:
                    p = lo + int(k[-1])
                    out["pre_overshoot"][i], out["pre_undershoot"][i] = _deviations(
                        se.region(p - ln, p), s_init, pol, amp)
            band = settle_pct / 100.0 * amp
            blo, bhi = s_final - band, s_final + band
            seg = x[i0:hi + 1]
            inside = (blo <= seg) & (seg <= bhi)  # NaN compares false: outside
            j = hi
            settled = True
            if not hi_window and not hi_record:
                ins = np.flatnonzero(inside)
                if len(ins) == 0:
                    settled = False
                else:
                    j = i0 + int(ins[-1])
            if settled:
                outs = np.flatnonzero(~inside[:j - i0 + 1])
                if len(outs) == 0:
                    out["settling"][i] = i0 - tm
                else:
                    jo = i0 + int(outs[-1])
                    if jo == hi:
                        se.hit_hi = True
                    elif not math.isfinite(x[jo]):
                        out["settling"][i] = (jo + 1) - tm
                    else:
                        edge = bhi if x[jo] > bhi else blo
                        out["settling"][i] = jo + (edge - x[jo]) / (x[jo + 1] - x[jo]) - tm
        flags = 0
        if (se.hit_lo and lo_window) or (se.hit_hi and hi_window):
            flags |= CLIPPED
        if se.hit_hi and hi_record:
            flags |= RECORD_END
        out["flags"][i] = flags
    return out
