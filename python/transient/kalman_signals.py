#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
Test signals for the Kalman burst detector: Gaussian bursts in coloured
Gaussian noise, generated exactly as the detector's model describes them
(share/doc/gr-transient/kalman.md), with numpy only.

    x, onsets = gaussian_bursts(n, onsets, M=92, noise_ar=[0.5], target_ar=[0.9])

Noise:  n[t] = sum_i noise_ar[i] n[t-1-i] + u[t],  Var u = noise_var,
        plus white measurement noise of variance meas_var.
Burst:  x[t] = sum_i target_ar[i] x[t-1-i] + w[t], Var w = target_var * g[t - onset]
        for the M-1 samples t = onset .. onset + M - 2; x = 0 outside a burst
        (its AR state starts from zero at every onset).
"""

import numpy as np

ENVELOPES = ("rect", "exp", "gauss", "raised_cosine")


def envelope(kind, M, param=10.0):
    """The burst's variance envelope g[i], i = 0 .. M-2, as the core defines it."""
    if M < 3:
        raise ValueError(f"M must be >= 3, got {M}")
    i = np.arange(M - 1, dtype=float)
    if kind == "rect":
        return np.ones(M - 1)
    if kind == "exp":
        if not param > 0:
            raise ValueError("the exp envelope needs env_param > 0")
        return np.exp(-i / param)
    if kind == "gauss":
        if not param > 0:
            raise ValueError("the gauss envelope needs env_param > 0")
        c = (M - 2) / 2.0
        return np.exp(-0.5 * ((i - c) / param) ** 2)
    if kind == "raised_cosine":
        return 0.5 * (1.0 - np.cos(2.0 * np.pi * (i + 1) / M))
    raise ValueError(f"envelope must be one of {ENVELOPES}, not {kind!r}")


def _ar(coeffs, drive):
    coeffs = np.asarray(coeffs, dtype=float)
    out = np.zeros(len(drive))
    p = len(coeffs)
    for t in range(len(drive)):
        acc = drive[t]
        for i in range(min(p, t)):
            acc += coeffs[i] * out[t - 1 - i]
        out[t] = acc
    return out


def gaussian_bursts(n, onsets, M=92, noise_ar=(0.5,), noise_var=1.0, meas_var=0.0,
                    target_ar=(0.9,), target_var=1.0, env="rect", env_param=10.0,
                    seed=1):
    """Return (x float32 of n samples, sorted onsets as an int64 array)."""
    if n < 0:
        raise ValueError("n must be >= 0")
    if noise_var <= 0 or target_var <= 0 or meas_var < 0:
        raise ValueError("variances must be positive (meas_var >= 0)")
    rng = np.random.default_rng(seed)
    onsets = np.sort(np.asarray(onsets, dtype=np.int64))
    if len(onsets) and (onsets[0] < 0 or onsets[-1] >= n):
        raise ValueError("onsets must lie in [0, n)")
    x = _ar(noise_ar, rng.normal(0.0, np.sqrt(noise_var), n))
    if meas_var > 0:
        x += rng.normal(0.0, np.sqrt(meas_var), n)
    g = envelope(env, M, env_param)
    for t0 in onsets:
        length = int(min(M - 1, n - t0))
        drive = rng.normal(0.0, 1.0, length) * np.sqrt(target_var * g[:length])
        x[t0:t0 + length] += _ar(target_ar, drive)
    return x.astype(np.float32), onsets
