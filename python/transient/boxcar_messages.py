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
(read by detects_arrays.py, which both formats share with the other blocks).
"""
import numpy as np
import pmt

from .detects_arrays import detects_arrays

# name: (numpy type, PMT scalar reader, uniform vector test, vector reader)
_FIELDS = {
    "start": (np.uint64, pmt.to_uint64, pmt.is_u64vector, pmt.u64vector_elements),
    "width": (np.int32, pmt.to_long, pmt.is_s32vector, pmt.s32vector_elements),
    "snr": (np.float32, pmt.to_double, pmt.is_f32vector, pmt.f32vector_elements),
    "channel": (np.int32, pmt.to_long, pmt.is_s32vector, pmt.s32vector_elements),
    "sample": (np.uint64, pmt.to_uint64, pmt.is_u64vector, pmt.u64vector_elements),
    "members": (np.uint64, pmt.to_long, pmt.is_u64vector, pmt.u64vector_elements),
}


def pulse_arrays(msg):
    """{"start": uint64, "width": int32, "snr": float32, "channel": int32,
    "sample": uint64, "members": uint64} numpy arrays of equal length, oldest
    event first, from one "detects" message (a PMT, either format). Raises
    ValueError for anything else."""
    return detects_arrays(msg, "pulse_arrays", "pulses", _FIELDS)
