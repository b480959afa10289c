#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The one reader behind edge_arrays, spiir_trigger_arrays and pulse_arrays:
a block's "detects" message, in either msg_format, as numpy arrays.

  "dicts":   {list_key: vector of dicts, one per detection}
  "vectors": {field: uniform vector, ...}, all of one length
GNU Radio 3.10's pmt.to_python does not convert 64-bit uniform vectors, so
the vectors are read with the typed element accessors.
"""
import numpy as np
import pmt


def detects_arrays(msg, who, list_key, fields, optional=()):
    """fields: name -> (numpy type, PMT scalar reader, uniform vector test,
    vector reader), in the message's order; `optional` names may be missing
    (then they are left out). Returns {name: numpy array}, all of one length;
    raises ValueError (message starting with `who`) for anything else."""
    if not pmt.is_dict(msg):
        raise ValueError("%s: a detects message is a PMT dict" % who)
    keys = {k: pmt.intern(k) for k in fields}
    entries = pmt.dict_ref(msg, pmt.intern(list_key), pmt.PMT_NIL)
    if pmt.is_vector(entries):
        n = pmt.length(entries)
        first = pmt.vector_ref(entries, 0) if n > 0 else pmt.make_dict()
        names = [k for k in fields if k not in optional or pmt.dict_has_key(first, keys[k])]
        out = {k: np.empty(n, fields[k][0]) for k in names}
        for i in range(n):
            d = pmt.vector_ref(entries, i)
            for k in names:
                out[k][i] = fields[k][1](pmt.dict_ref(d, keys[k], pmt.PMT_NIL))
        return out
    out = {}
    for k, (dtype, _, is_vec, elements) in fields.items():
        v = pmt.dict_ref(msg, keys[k], pmt.PMT_NIL)
        if k in optional and pmt.is_null(v):
            continue
        if not is_vec(v):
            want = ", ".join("%s (%s%s)" % (f, spec[2].__name__[3:-6],
                                            ", optional" if f in optional else "")
                             for f, spec in fields.items())
            raise ValueError("%s: neither {'%s': [...]} nor the vectors %s: %s is not"
                             % (who, list_key, want, k))
        out[k] = np.array(elements(v), dtype)
    if len({len(v) for v in out.values()}) != 1:
        raise ValueError("%s: vectors of unequal length" % who)
    return out
