#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
Scores the detections of the demo flow graphs (share/gr-transient/examples/demo_*.grc) against
the injected truth (gnuradio.transient.demo_signals) and prints them as one
table: per detector and source the events, the detections, hits, misses,
false alarms and a quality figure.

    rows = score(tb, "edges")      # tb: a finished demo_edges top block
    print_table(rows)

score() reads the blocks by their names in the .grc files (for example
tb.pulse_sink, a vector sink that keeps the "edge" tags, and tb.pulse_detects,
a message debug block that stores the "detects" messages) and the flow graph's
parameters (tb.seed, tb.samples, tb.recording). Each row is a dict:

    detector, source, events (injected or expected; None without truth), found,
    hits, misses, false (false alarms), quality, backend, failures (list of
    messages: a detection failed badly, or tags and messages disagree)

report(tb, kind) prints the table and "demo <kind>: PASS" or "FAIL" lines
(the demo flow graphs call it after they stop).
"""

import math

import numpy as np
import pmt

from gnuradio.transient import demo_signals as ds

# ---- helpers ------------------------------------------------------------------


def stat(fn, a):
    """fn(a) as float, NaN for an empty array."""
    return float(fn(a)) if len(a) else math.nan


def rms(a):
    return stat(lambda v: np.sqrt(np.mean(np.square(v))), a)


def messages(dbg):
    """The messages a message debug block stored, as Python objects."""
    return [pmt.to_python(dbg.get_message(i)) for i in range(dbg.num_messages())]


def tag_dicts(snk, key):
    """The tags `key` of a vector sink as dicts (plus the tag offset)."""
    out = []
    for tag in snk.tags():
        if pmt.symbol_to_string(tag.key) != key:
            continue
        d = pmt.to_python(tag.value)
        if not isinstance(d, dict):
            d = {"value": d}
        d["offset"] = int(tag.offset)
        out.append(d)
    return out


def row(detector, source, backend, events=None, found=0, hits=None, misses=None,
        false=None, quality="", failures=None):
    return {"detector": detector, "source": source, "backend": backend, "events": events,
            "found": found, "hits": hits, "misses": misses, "false": false,
            "quality": quality, "failures": list(failures or [])}


# ---- edges -----------------------------------------------------------------------


def match(det_time, det_pol, ref_time, ref_pol, offset, tol):
    """Pair detections with reference transitions in order.

    A detection matches a reference transition of the same polarity when
    |det - (ref + offset)| <= tol. Returns (pairs, missed, extra) with pairs as
    index arrays (i_det, i_ref).
    """
    i = j = 0
    di, ri = [], []
    missed = extra = 0
    nd, nr = len(det_time), len(ref_time)
    while i < nd and j < nr:
        d = det_time[i] - (ref_time[j] + offset)
        if d < -tol:
            extra += 1
            i += 1
        elif d > tol:
            missed += 1
            j += 1
        elif det_pol[i] != ref_pol[j]:
            extra += 1
            missed += 1
            i += 1
            j += 1
        else:
            di.append(i)
            ri.append(j)
            i += 1
            j += 1
    extra += nd - i
    missed += nr - j
    return (np.asarray(di, dtype=np.int64), np.asarray(ri, dtype=np.int64)), missed, extra


def logic_transitions(bits):
    """(index, polarity) of the transitions of a 0/1 array: first new sample."""
    b = np.asarray(bits, dtype=np.int8)
    idx = np.flatnonzero(b[1:] != b[:-1]) + 1
    return idx.astype(np.float64), np.where(b[idx] > 0, 1, -1).astype(np.int32)


def edge_results(snk, dbg):
    """Transitions of one edge localizer branch from its "edge" tags, and the
    checks that tags and messages tell the same story (list of failures)."""
    tags = tag_dicts(snk, "edge")
    r = {
        "time": np.array([t.get("time", math.nan) for t in tags], dtype=np.float64),
        "polarity": np.array([t.get("polarity", 0) for t in tags], dtype=np.int32),
        "offset": np.array([t["offset"] for t in tags], dtype=np.int64),
        "sample": np.array([t.get("sample", -1) for t in tags], dtype=np.int64),
    }
    n_msg = sum(len(m.get("edges", ())) for m in messages(dbg))
    bad = []
    if n_msg != len(tags):
        bad.append("%d transitions on 'detects', %d tags" % (n_msg, len(tags)))
    if np.any(r["sample"] != r["offset"]):
        bad.append("tag offsets differ from their 'sample' values")
    if np.any(np.isnan(r["time"])) or np.any(r["time"] > r["offset"]):
        bad.append("a crossing time is NaN or after the first sample in the new state")
    if np.any(np.diff(r["offset"]) <= 0) or np.any(r["polarity"][1:] == r["polarity"][:-1]):
        bad.append("transitions out of order or not alternating")
    return r, bad


def score_edges(tb):
    rows = []
    # Synthetic pulse train: a hit is within 2 samples of the truth (the edges'
    # 10-90 % rise times are 2.4 to 9.4 samples; noise and the estimated mid
    # level move the crossing by a few tenths of a sample at most). Runts and
    # the extra mid crossings of oscillating edges must give no transition.
    _, truth = ds.pulse_train(tb.samples, tb.seed)
    r, bad = edge_results(tb.pulse_sink, tb.pulse_detects)
    (di, ti), missed, extra = match(r["time"], r["polarity"], truth["time"],
                                    truth["polarity"], 0.0, 2.0)
    err = r["time"][di] - truth["time"][ti]
    nt = len(truth["time"])
    if len(di) < 0.99 * nt or extra > 0.01 * nt or not rms(err) <= 0.5:
        bad.append("%d of %d hits, %d false, rms timing error %.3f" %
                   (len(di), nt, extra, rms(err)))
    rows.append(row("edges", "pulse train (%d runts, %d oscillating)" %
                    (truth["runts"], truth["oscillating"]),
                    tb.pulse_edges.backend(), nt, len(r["time"]), len(di), missed, extra,
                    "time err rms %.3f smp" % rms(err), ["edges pulse train: " + b for b in bad]))

    # The I2C recording against the logic probe on the same wire. The analog
    # mid crossing lags the logic probe's transition by 4 +- 2 samples on this
    # instrument: a fixed skew of 3 to 4 samples between its analog and logic
    # inputs, plus about one sample on rising edges, where the slow open-drain
    # rise passes the logic threshold before mid (tests/core/edges/test_edges_recording.c).
    _, rec = ds.i2c_recording(tb.recording)
    if rec is not None:
        r, bad = edge_results(tb.i2c_sink, tb.i2c_detects)
        lt, lp = logic_transitions(rec.logic_channel(ds.I2C_LOGIC))
        lag, lag_tol = 4.0, 2.0
        (di, li), missed, extra = match(r["time"], r["polarity"], lt, lp, lag, lag_tol)
        d = r["time"][di] - lt[li]
        if len(di) < 0.99 * len(lt) or extra > 0.01 * len(lt):
            bad.append("%d of %d matched, %d extra" % (len(di), len(lt), extra))
        rows.append(row("edges", "I2C recording (logic probe)", tb.i2c_edges.backend(),
                        len(lt), len(r["time"]), len(di), missed, extra,
                        "lag %.2f smp (%.0f +- %.0f)" % (stat(np.median, d), lag, lag_tol),
                        ["edges I2C recording: " + b for b in bad]))
    return rows


# ---- boxcar ------------------------------------------------------------------------


def match_pulses(cands, truth):
    """A candidate (start s, width L, channel c) hits a pulse when its boxcar
    [s, s + L) overlaps the samples that hold 90 % of the pulse's energy and c
    is the pulse's trial or a neighbour. Returns (best candidate per truth
    pulse or None, false alarms, extra candidates on a hit pulse)."""
    hit = [None] * len(truth)
    false = extra = 0
    for cand in cands:
        s, L, c = cand["start"], cand["width"], cand["channel"]
        j = next((j for j, p in enumerate(truth) if abs(p["channel"] - c) <= 1 and
                  s < p["extent"][1] and s + L > p["extent"][0]), None)
        if j is None:
            false += 1
        elif hit[j] is None:
            hit[j] = cand
        else:
            extra += 1
            if cand["snr"] > hit[j]["snr"]:
                hit[j] = cand
    return hit, false, extra


def pulse_checks(snk, dbg):
    """The "pulse" tags of a search and the tags-vs-messages checks."""
    cands = sorted(tag_dicts(snk, "pulse"), key=lambda c: c["start"])
    n_msg = sum(len(m.get("pulses", ())) for m in messages(dbg))
    bad = []
    if n_msg != len(cands):
        bad.append("%d pulses on 'detects', %d tags" % (n_msg, len(cands)))
    if any(c["offset"] != c["start"] for c in cands):
        bad.append("a 'pulse' tag is not on its start sample")
    return cands, bad


def score_boxcar(tb):
    rows = []
    # FRB-like pulses in 4 trials of white noise.
    _, truth = ds.frb_field(tb.samples, tb.seed)
    cands, bad = pulse_checks(tb.frb_sink, tb.frb_detects)
    hit, false, extra = match_pulses(cands, truth)
    nhit = sum(h is not None for h in hit)
    ratio = np.array([h["snr"] / p["snr"] for p, h in zip(truth, hit) if h is not None])
    if nhit < 0.95 * len(truth) or false > 2:
        bad.append("%d of %d hits, %d false alarms" % (nhit, len(truth), false))
    rows.append(row("boxcar", "FRB-like pulses, %d trials" % ds.FRB_CHANNELS,
                    tb.frb_search.backend(), len(truth), len(cands), nhit, len(truth) - nhit,
                    false, "S/N found/inj %.2f" % stat(np.median, ratio),
                    ["boxcar FRB-like pulses: " + b for b in bad]))

    # The pulsar: one pulse per period (the first statistics window included:
    # it is normalised by its own statistics); the period fitted to their arrival times must agree with the period found by
    # folding the series.
    ts = ds.pulsar_recording(tb.recording)
    if ts is not None:
        from gnuradio.transient import timeseries
        cands, bad = pulse_checks(tb.pulsar_sink, tb.pulsar_detects)
        starts = np.array([c["start"] for c in cands], dtype=np.float64)
        fold = timeseries.estimate_period(ts.data, ts.tsamp, pmin=0.05, pmax=2.0)
        if len(starts) >= 2:
            fit = timeseries.period_from_arrivals(starts * ts.tsamp, fold["period"])
        else:
            fit = {"period": math.nan, "n_used": 0, "n_off": len(starts)}
        expected = int(ts.nsamples * ts.tsamp / fold["period"])
        if (fit["n_used"] < 0.9 * expected or fit["n_off"] > max(2, 0.05 * len(cands)) or
                not abs(fit["period"] - fold["period"]) <= 2 * fold["sigma"]):
            bad.append("%d pulses on the phase of %d periods, %d off, period %.6f vs %.6f s" %
                       (fit["n_used"], expected, fit["n_off"], fit["period"], fold["period"]))
        rows.append(row("boxcar", "pulsar %s (periods)" % ts.source, tb.pulsar_search.backend(),
                        expected, len(cands), min(fit["n_used"], expected),
                        max(0, expected - fit["n_used"]), fit["n_off"],
                        "P %.5f s (fold %.5f)" % (fit["period"], fold["period"]),
                        ["boxcar pulsar: " + b for b in bad]))
    return rows


# ---- SPIIR ----------------------------------------------------------------------------


def score_spiir(tb):
    # The loudest trigger must name the injected template, at the injected
    # time (2 samples), with the expected SNR (20 %). Triggers of any template
    # within one chirp length of the injection belong to it (the templates
    # overlap); any other trigger is a false alarm.
    _, truth = ds.spiir_chirp(tb.seed)
    trig = tag_dicts(tb.chirp_sink, "trigger")
    n_msg = sum(len(m.get("triggers", ())) for m in messages(tb.chirp_detects))
    bad = []
    if n_msg != len(trig):
        bad.append("%d triggers on 'detects', %d tags" % (n_msg, len(trig)))
    near = [t for t in trig if abs(t["sample"] - truth["end"]) <= truth["duration"]]
    false = len(trig) - len(near)
    hits, quality = 0, "no trigger"
    if near:
        best = max(near, key=lambda v: v["snr"])
        quality = "tmpl %d, dt %+d smp, SNR %.1f/%.1f" % (
            best["template"], best["sample"] - truth["end"], best["snr"], truth["snr"])
        if (best["template"] == truth["template"] and abs(best["sample"] - truth["end"]) <= 2
                and abs(best["snr"] / truth["snr"] - 1) <= 0.2):
            hits = 1
    if hits == 0:
        bad.append("the injected chirp (template %d, SNR %.2f at sample %d) not found: %s" %
                   (truth["template"], truth["snr"], truth["end"], quality))
    if false > 2:
        bad.append("%d false alarms" % false)
    return [row("spiir", "chirp in white noise (%d templates)" % len(ds.SPIIR_DURATIONS),
                tb.chirp_bank.backend(), 1, len(trig), hits, 1 - hits, false, quality,
                ["spiir chirp: " + b for b in bad])]


# ---- Kalman ---------------------------------------------------------------------------


def score_kalman(tb):
    # A detection belongs to the burst whose samples it starts in; the energy
    # detector (moving average of x^2 over N_s samples) at the same number of
    # false alarms must not find more bursts.
    x, onsets = ds.kalman_bursts(tb.samples, tb.seed)
    n = len(x)
    span = ds.KALMAN_M - 1
    dets = messages(tb.burst_detects)
    tags = tag_dicts(tb.burst_sink, "burst")
    llr = np.asarray(tb.burst_sink.data())
    first, false = {}, []
    for d in dets:
        owner = onsets[(onsets <= d["start"]) & (d["start"] < onsets + span)]
        if len(owner):
            first.setdefault(int(owner[0]), d)
        else:
            false.append(d)
    e = np.convolve(x.astype(np.float64) ** 2, np.ones(ds.KALMAN_NS) / ds.KALMAN_NS)[:n]
    inside = np.zeros(n, bool)
    for o in onsets:
        inside[o:o + span + ds.KALMAN_NS] = True
    e_out = np.sort(e[~inside])
    e_thr = e_out[-(len(false) + 1)]
    e_hits = sum(1 for o in onsets if e[o:o + span + ds.KALMAN_NS].max() > e_thr)
    err = np.array([first[o]["onset"] - o for o in first])
    bad = []
    if len(tags) != 2 * len(dets):
        bad.append("%d burst tags for %d detections" % (len(tags), len(dets)))
    if not np.all(np.isfinite(llr)):
        bad.append("non-finite LLR")
    if len(first) < 0.8 * len(onsets) or len(false) > 2:
        bad.append("%d of %d bursts found, %d false alarms" %
                   (len(first), len(onsets), len(false)))
    if len(first) < e_hits:
        bad.append("fewer hits (%d) than the energy detector (%d)" % (len(first), e_hits))
    return [row("kalman", "Gaussian bursts, coloured noise", tb.burst_detector.backend(),
                len(onsets), len(dets), len(first), len(onsets) - len(first), len(false),
                "onset err %+.0f smp, %d more on a burst; energy det %d hits" %
                (stat(np.median, err), len(dets) - len(first) - len(false), e_hits),
                ["kalman bursts: " + b for b in bad])]


SCORERS = {"edges": score_edges, "boxcar": score_boxcar, "spiir": score_spiir,
           "kalman": score_kalman}


def score(tb, kind):
    """The rows of a finished demo flow graph of `kind` (edges, boxcar, spiir,
    kalman)."""
    return SCORERS[kind](tb)


# ---- without truth: a recording or a live capture ------------------------------------------


def detections(tb):
    """Rows of the demo_file / demo_sdr flow graphs (no truth): per detector
    (blocks edges, boxcar, spiir, kalman; message debug blocks <name>_detects)
    the detections on its "detects" port, and the first few as text: edges
    +/-@time, boxcar start(w width, S/N), spiir sample(t template, SNR), kalman
    onset(peak LLR)."""
    out = []
    specs = (("edges", "edges", lambda d: "%s@%.1f" % (
        "+" if d["polarity"] > 0 else "-", d["time"])),
        ("boxcar", "pulses", lambda d: "%d(w%d,%.1f)" % (d["start"], d["width"], d["snr"])),
        ("spiir", "triggers", lambda d: "%d(t%d,%.1f)" % (d["sample"], d["template"],
                                                          d["snr"])),
        ("kalman", None, lambda d: "%d(%.1f)" % (d["onset"], d["peak_llr"])))
    for det, key, fmt in specs:
        evs = []
        for m in messages(getattr(tb, det + "_detects")):
            evs.extend(m.get(key, ()) if key else [m])
        r = row(det, "", getattr(tb, det).backend(), found=len(evs))
        r["quality"] = " ".join(fmt(d) for d in evs[:4]) + (" ..." if len(evs) > 4 else "")
        out.append(r)
    return out


# ---- the table -------------------------------------------------------------------------------


def _num(v):
    return "-" if v is None else str(v)


def format_table(rows, truth=True):
    """The rows as one text table (without truth: no source, events, hits,
    misses or false alarms columns; quality then lists the first detections)."""
    if truth:
        head = ("detector", "source", "backend", "events", "found", "hits", "misses",
                "false", "quality")
        cells = [(r["detector"], r["source"], r["backend"], _num(r["events"]), _num(r["found"]),
                  _num(r["hits"]), _num(r["misses"]), _num(r["false"]),
                  r["quality"] + ("  FAIL" if r["failures"] else "")) for r in rows]
        right = {3, 4, 5, 6, 7}
    else:
        head = ("detector", "backend", "detections", "first detections")
        cells = [(r["detector"], r["backend"], _num(r["found"]), r["quality"]) for r in rows]
        right = {2}
    widths = [max(len(str(c[i])) for c in [head] + cells) for i in range(len(head))]

    def line(c):
        return "  ".join((str(v).rjust(w) if i in right else str(v).ljust(w))
                         for i, (v, w) in enumerate(zip(c, widths))).rstrip()
    out = [line(head), "  ".join("-" * w for w in widths)]
    out += [line(c) for c in cells]
    return "\n".join(out)


def print_table(rows, truth=True):
    print(format_table(rows, truth), flush=True)


def report(tb, kind):
    """Score a finished demo flow graph, print its table and "demo <kind>:
    PASS" (or every failure and "demo <kind>: FAIL"). Returns the rows."""
    rows = score(tb, kind)
    print_table(rows)
    failures = [f for r in rows for f in r["failures"]]
    for f in failures:
        print("FAIL: " + f)
    print("demo %s: %s" % (kind, "FAIL" if failures else "PASS"), flush=True)
    return rows
