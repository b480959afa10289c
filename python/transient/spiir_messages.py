#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The triggers of spiir_bank_fc / spiir_bank_cc "detects" messages as numpy
arrays.

Both message formats of the blocks give the same arrays:
  msg_format "dicts":   {"triggers": [{"sample", "time", "template", "snr",
                                       "phase", "chisq"}, ...]}
  msg_format "vectors": {"sample": s64vector, "time": f64vector,
                         "template": u32vector, "snr": f32vector,
                         "phase": f32vector, "chisq": f32vector}
("chisq" only when the block was given autocorrelations). GNU Radio 3.10's
pmt.to_python does not convert s64 vectors, so the "vectors" messages are read
here with the typed element accessors.
"""
import numpy as np
import pmt

_TRIGGERS = pmt.intern("triggers")
# name: (numpy type, PMT scalar reader, uniform vector test, vector reader)
_FIELDS = {
    "sample": (np.int64, pmt.to_long, pmt.is_s64vector, pmt.s64vector_elements),
    "time": (np.float64, pmt.to_double, pmt.is_f64vector, pmt.f64vector_elements),
    "template": (np.uint32, pmt.to_long, pmt.is_u32vector, pmt.u32vector_elements),
    "snr": (np.float32, pmt.to_double, pmt.is_f32vector, pmt.f32vector_elements),
    "phase": (np.float32, pmt.to_double, pmt.is_f32vector, pmt.f32vector_elements),
    "chisq": (np.float32, pmt.to_double, pmt.is_f32vector, pmt.f32vector_elements),
}
_KEYS = {k: pmt.intern(k) for k in _FIELDS}


def spiir_trigger_arrays(msg):
    """{"sample": int64, "time": float64, "template": uint32, "snr": float32,
    "phase": float32 and, with chi-square, "chisq": float32} numpy arrays of
    equal length, in the block's order, from one "detects" message (a PMT,
    either format). Raises ValueError for anything else."""
    if not pmt.is_dict(msg):
        raise ValueError("spiir_trigger_arrays: a detects message is a PMT dict")
    trig = pmt.dict_ref(msg, _TRIGGERS, pmt.PMT_NIL)
    if pmt.is_vector(trig):
        n = pmt.length(trig)
        first = pmt.vector_ref(trig, 0) if n > 0 else pmt.make_dict()
        names = [k for k in _FIELDS if pmt.dict_has_key(first, _KEYS[k])]
        out = {k: np.empty(n, _FIELDS[k][0]) for k in names}
        for i in range(n):
            d = pmt.vector_ref(trig, i)
            for k in names:
                out[k][i] = _FIELDS[k][1](pmt.dict_ref(d, _KEYS[k], pmt.PMT_NIL))
        return out
    out = {}
    for k, (dtype, _, is_vec, elements) in _FIELDS.items():
        v = pmt.dict_ref(msg, _KEYS[k], pmt.PMT_NIL)
        if k == "chisq" and pmt.is_null(v):
            continue
        if not is_vec(v):
            raise ValueError("spiir_trigger_arrays: neither {'triggers': [...]} nor the "
                             "vectors sample (s64), time (f64), template (u32), snr, "
                             "phase (f32) and chisq (f32, optional): %s is not" % k)
        out[k] = np.array(elements(v), dtype)
    if len({len(v) for v in out.values()}) != 1:
        raise ValueError("spiir_trigger_arrays: vectors of unequal length")
    return out
