#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The transitions of edge_localizer_f's "detects" messages as numpy arrays.

Both message formats of the block give the same arrays:
  msg_format "dicts":   {"edges": [{"time", "polarity", "sample"}, ...]}
  msg_format "vectors": {"time": f64vector, "polarity": s8vector,
                         "sample": u64vector}
GNU Radio 3.10's pmt.to_python does not convert u64 vectors, so the "vectors"
messages are read here with the typed element accessors.

With metrics=True the block also sends {"metrics": ...} messages (a list of
dicts, or a dict of uniform vectors); metric_arrays reads them and
is_metrics tells them apart.
"""
import numpy as np
import pmt

_EDGES = pmt.intern("edges")
_METRICS = pmt.intern("metrics")
# The fields of a metrics record after sample, time, polarity and flags.
METRIC_FIELDS = ("start", "end", "duration", "duration2", "slew", "overshoot",
                 "undershoot", "pre_overshoot", "pre_undershoot", "settling", "width",
                 "period", "duty")
_SAMPLE, _TIME, _POLARITY = (pmt.intern(k) for k in ("sample", "time", "polarity"))


def edge_arrays(msg):
    """{"sample": uint64, "time": float64, "polarity": int8} numpy arrays of
    equal length, oldest transition first, from one "detects" message (a PMT,
    either format). Raises ValueError for anything else."""
    if not pmt.is_dict(msg):
        raise ValueError("edge_arrays: a detects message is a PMT dict")
    edges = pmt.dict_ref(msg, _EDGES, pmt.PMT_NIL)
    if pmt.is_vector(edges):
        n = pmt.length(edges)
        out = {"sample": np.empty(n, np.uint64), "time": np.empty(n, np.float64),
               "polarity": np.empty(n, np.int8)}
        for i in range(n):
            d = pmt.vector_ref(edges, i)
            out["sample"][i] = pmt.to_uint64(pmt.dict_ref(d, _SAMPLE, pmt.PMT_NIL))
            out["time"][i] = pmt.to_double(pmt.dict_ref(d, _TIME, pmt.PMT_NIL))
            out["polarity"][i] = pmt.to_long(pmt.dict_ref(d, _POLARITY, pmt.PMT_NIL))
        return out
    s, t, p = (pmt.dict_ref(msg, k, pmt.PMT_NIL) for k in (_SAMPLE, _TIME, _POLARITY))
    if not (pmt.is_u64vector(s) and pmt.is_f64vector(t) and pmt.is_s8vector(p)):
        raise ValueError("edge_arrays: neither {'edges': [...]} nor the vectors "
                         "'sample' (u64), 'time' (f64), 'polarity' (s8)")
    out = {"sample": np.array(pmt.u64vector_elements(s), np.uint64),
           "time": np.array(pmt.f64vector_elements(t), np.float64),
           "polarity": np.array(pmt.s8vector_elements(p), np.int8)}
    if not len(out["sample"]) == len(out["time"]) == len(out["polarity"]):
        raise ValueError("edge_arrays: vectors of unequal length")
    return out


def is_metrics(msg):
    """True for a {"metrics": ...} message of edge_localizer_f(metrics=True)."""
    return pmt.is_dict(msg) and not pmt.is_null(pmt.dict_ref(msg, _METRICS, pmt.PMT_NIL))


def metric_arrays(msg):
    """numpy arrays {"sample": uint64, "time": float64, "polarity": int8,
    "flags": uint32, and float64 arrays METRIC_FIELDS} of one metrics message
    (either msg_format), oldest transition first. Raises ValueError for
    anything else."""
    if not is_metrics(msg):
        raise ValueError("metric_arrays: not a {'metrics': ...} message")
    body = pmt.dict_ref(msg, _METRICS, pmt.PMT_NIL)
    keys = ("sample", "time", "polarity", "flags") + METRIC_FIELDS
    types = {"sample": np.uint64, "polarity": np.int8, "flags": np.uint32}
    if pmt.is_vector(body):
        n = pmt.length(body)
        out = {k: np.empty(n, types.get(k, np.float64)) for k in keys}
        for i in range(n):
            d = pmt.vector_ref(body, i)
            for k in keys:
                v = pmt.dict_ref(d, pmt.intern(k), pmt.PMT_NIL)
                out[k][i] = pmt.to_uint64(v) if k == "sample" else \
                    (pmt.to_long(v) if k in types else pmt.to_double(v))
        return out
    if not pmt.is_dict(body):
        raise ValueError("metric_arrays: 'metrics' is neither a list nor a dict")
    get = {"sample": pmt.u64vector_elements, "polarity": pmt.s8vector_elements,
           "flags": pmt.u32vector_elements}
    out = {}
    for k in keys:
        v = pmt.dict_ref(body, pmt.intern(k), pmt.PMT_NIL)
        out[k] = np.array(get.get(k, pmt.f64vector_elements)(v), types.get(k, np.float64))
    if len({len(v) for v in out.values()}) != 1:
        raise ValueError("metric_arrays: vectors of unequal length")
    return out
