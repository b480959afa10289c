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
("chisq" only when the block was given autocorrelations; read by
detects_arrays.py, which both formats share with the other blocks).
"""
import numpy as np
import pmt

from .detects_arrays import detects_arrays

# name: (numpy type, PMT scalar reader, uniform vector test, vector reader)
_FIELDS = {
    "sample": (np.int64, pmt.to_long, pmt.is_s64vector, pmt.s64vector_elements),
    "time": (np.float64, pmt.to_double, pmt.is_f64vector, pmt.f64vector_elements),
    "template": (np.uint32, pmt.to_long, pmt.is_u32vector, pmt.u32vector_elements),
    "snr": (np.float32, pmt.to_double, pmt.is_f32vector, pmt.f32vector_elements),
    "phase": (np.float32, pmt.to_double, pmt.is_f32vector, pmt.f32vector_elements),
    "chisq": (np.float32, pmt.to_double, pmt.is_f32vector, pmt.f32vector_elements),
}


def spiir_trigger_arrays(msg):
    """{"sample": int64, "time": float64, "template": uint32, "snr": float32,
    "phase": float32 and, with chi-square, "chisq": float32} numpy arrays of
    equal length, in the block's order, from one "detects" message (a PMT,
    either format). Raises ValueError for anything else."""
    return detects_arrays(msg, "spiir_trigger_arrays", "triggers", _FIELDS,
                          optional=("chisq", ))
