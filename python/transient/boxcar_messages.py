#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The events of boxcar_search_ff / boxcar_search_cf "detects" messages as
numpy arrays.

Both message formats of the blocks give the same arrays:
  msg_format "dicts":   {"pulses": [{"start", "width", "snr", "channel",
                                     "sample", "members"}, ...]}
  msg_format "vectors": {"start": u64vector, "width": s32vector,
                         "snr": f32vector, "channel": s32vector,
                         "sample": u64vector, "members": u64vector}
GNU Radio 3.10's pmt.to_python does not convert u64 vectors, so the "vectors"
messages are read here with the typed element accessors.
"""
import numpy as np
import pmt

_PULSES = pmt.intern("pulses")
# name: (numpy type, PMT scalar reader, uniform vector test, vector reader)
_FIELDS = {
    "start": (np.uint64, pmt.to_uint64, pmt.is_u64vector, pmt.u64vector_elements),
    "width": (np.int32, pmt.to_long, pmt.is_s32vector, pmt.s32vector_elements),
    "snr": (np.float32, pmt.to_double, pmt.is_f32vector, pmt.f32vector_elements),
    "channel": (np.int32, pmt.to_long, pmt.is_s32vector, pmt.s32vector_elements),
    "sample": (np.uint64, pmt.to_uint64, pmt.is_u64vector, pmt.u64vector_elements),
    "members": (np.uint64, pmt.to_long, pmt.is_u64vector, pmt.u64vector_elements),
}
_KEYS = {k: pmt.intern(k) for k in _FIELDS}


def pulse_arrays(msg):
    """{"start": uint64, "width": int32, "snr": float32, "channel": int32,
    "sample": uint64, "members": uint64} numpy arrays of equal length, oldest
    event first, from one "detects" message (a PMT, either format). Raises
    ValueError for anything else."""
    if not pmt.is_dict(msg):
        raise ValueError("pulse_arrays: a detects message is a PMT dict")
    pulses = pmt.dict_ref(msg, _PULSES, pmt.PMT_NIL)
    if pmt.is_vector(pulses):
        n = pmt.length(pulses)
        out = {k: np.empty(n, f[0]) for k, f in _FIELDS.items()}
        for i in range(n):
            d = pmt.vector_ref(pulses, i)
            for k, f in _FIELDS.items():
                out[k][i] = f[1](pmt.dict_ref(d, _KEYS[k], pmt.PMT_NIL))
        return out
    out = {}
    for k, (dtype, _, is_vec, elements) in _FIELDS.items():
        v = pmt.dict_ref(msg, _KEYS[k], pmt.PMT_NIL)
        if not is_vec(v):
            raise ValueError("pulse_arrays: neither {'pulses': [...]} nor the vectors "
                             "start (u64), width (s32), snr (f32), channel (s32), "
                             "sample (u64) and members (u64): %s is not" % k)
        out[k] = np.array(elements(v), dtype)
    if len({len(v) for v in out.values()}) != 1:
        raise ValueError("pulse_arrays: vectors of unequal length")
    return out
