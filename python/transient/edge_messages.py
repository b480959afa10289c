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
Both are read by detects_arrays.py, which they share with the other blocks.

With metrics=True the block also sends {"metrics": ...} messages (a list of
dicts, or a dict of uniform vectors); metric_arrays reads them and
is_metrics tells them apart.
"""
import numpy as np
import pmt

from .detects_arrays import detects_arrays

_METRICS = pmt.intern("metrics")
# The fields of a metrics record after sample, time, polarity and flags.
METRIC_FIELDS = ("start", "end", "duration", "duration2", "slew", "overshoot",
                 "undershoot", "pre_overshoot", "pre_undershoot", "settling", "width",
                 "period", "duty")
# name: (numpy type, PMT scalar reader, uniform vector test, vector reader)
_F64 = (np.float64, pmt.to_double, pmt.is_f64vector, pmt.f64vector_elements)
_EDGE_FIELDS = {
    "sample": (np.uint64, pmt.to_uint64, pmt.is_u64vector, pmt.u64vector_elements),
    "time": _F64,
    "polarity": (np.int8, pmt.to_long, pmt.is_s8vector, pmt.s8vector_elements),
}
_METRIC_SPEC = dict(_EDGE_FIELDS,
                    flags=(np.uint32, pmt.to_long, pmt.is_u32vector, pmt.u32vector_elements),
                    **{f: _F64 for f in METRIC_FIELDS})


def edge_arrays(msg):
    """{"sample": uint64, "time": float64, "polarity": int8} numpy arrays of
    equal length, oldest transition first, from one "detects" message (a PMT,
    either format). Raises ValueError for anything else."""
    return detects_arrays(msg, "edge_arrays", "edges", _EDGE_FIELDS)


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
    if pmt.is_vector(body):
        return detects_arrays(msg, "metric_arrays", "metrics", _METRIC_SPEC)
    if not pmt.is_dict(body):
        raise ValueError("metric_arrays: 'metrics' is neither a list nor a dict")
    return detects_arrays(body, "metric_arrays", "metrics", _METRIC_SPEC)
