#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
AR models fitted to samples (numpy only), for the Kalman-bank detector's
noise and burst models (share/doc/gr-transient/kalman.md, "Fitting models
from data"). AR convention (the core's): x_t = sum_{i=1}^{p} a_i x_{t-i} + w_t.

- :func:`fit_ar`: Yule-Walker (Levinson-Durbin on the biased autocovariance)
  or Burg (forward-backward lattice over one or several segments); the order
  up to ``max_order`` minimises AIC (N log s2_p + 2p) or BIC
  (N log s2_p + p log N); standard errors from the asymptotic covariance
  s2 Gamma_p^{-1} / N.
- Stability: Burg's reflection coefficients satisfy |k| <= 1 by construction
  (Cauchy-Schwarz) and Yule-Walker's too on a biased (positive semidefinite)
  autocovariance; an order whose step gives |k| >= 1 or a non-positive error
  variance (possible on an autocovariance with the noise subtracted) is no
  candidate. A fitted polynomial whose largest root lies beyond ``max_root``
  (marginal: a unit root within the estimate's noise) is pulled inside by
  bandwidth expansion, a_i <- a_i (max_root / rho)^i: every root scaled by
  max_root / rho, the spectral peaks kept where they are, only widened; the
  fit records rho (``ARFit.radius_before``).
"""

import numpy as np

CRITERIA = ("aic", "bic")
METHODS = ("auto", "burg", "yule-walker")
# method "auto": Burg below this many samples. Yule-Walker's biased
# autocovariance tapers lag k by (1 - k/N), which biases the coefficients
# towards zero by O(p/N) and smears sharp spectral peaks on short records;
# Burg fits the samples themselves (forward and backward prediction errors)
# without that taper. On long records both agree to well within their standard
# errors, and Yule-Walker costs one autocovariance whatever the order.
BURG_BELOW = 10000
MAX_ROOT = 0.999


class ARFit(object):
    """An AR(p) fit: coeffs a_1..a_p, stderr, var (innovation variance),
    order, method, criterion and its value per order (``scores``, index p-1),
    reflection coefficients, samples used, and radius_before (the largest
    root before bandwidth expansion, None when none was needed)."""

    def __init__(self, coeffs, stderr, var, method, criterion, scores, reflection, n,
                 radius_before):
        self.coeffs = np.asarray(coeffs, dtype=float)
        self.stderr = np.asarray(stderr, dtype=float)
        self.var = float(var)
        self.order = len(self.coeffs)
        self.method = method
        self.criterion = criterion
        self.scores = np.asarray(scores, dtype=float)
        self.reflection = np.asarray(reflection, dtype=float)
        self.n = int(n)
        self.radius_before = radius_before

    @property
    def radius(self):
        """Largest root magnitude of 1 - sum a_i z^-i (< 1: stable)."""
        return ar_radius(self.coeffs)

    def __repr__(self):
        return "ARFit(order=%d, coeffs=%s, var=%.6g, method=%s)" % (
            self.order, np.array2string(self.coeffs, precision=4), self.var, self.method)


def as_segments(x, what="x"):
    """x as a list of float64 arrays (one array or a sequence of them)."""
    if isinstance(x, np.ndarray) and x.ndim == 1:
        segs = [x]
    else:
        segs = list(x)
    out = []
    for i, s in enumerate(segs):
        s = np.asarray(s, dtype=float)
        if s.ndim != 1:
            raise ValueError("%s: segment %d is not one-dimensional" % (what, i))
        if not np.all(np.isfinite(s)):
            raise ValueError("%s: segment %d holds non-finite samples" % (what, i))
        out.append(s)
    if not out or sum(len(s) for s in out) == 0:
        raise ValueError("%s: no samples" % what)
    return out


def autocovariance(segments, maxlag, unbiased=False):
    """Zero-mean autocovariance at lags 0..maxlag pooled over segments: the
    lagged products of each segment summed, divided by the total samples
    (biased, positive semidefinite) or by the number of products (unbiased)."""
    segs = as_segments(segments)
    r = np.zeros(maxlag + 1)
    count = np.zeros(maxlag + 1)
    for s in segs:
        n = len(s)
        for k in range(min(maxlag, n - 1) + 1):
            r[k] += np.dot(s[:n - k], s[k:])
            count[k] += n - k
    total = sum(len(s) for s in segs)
    if unbiased:
        if np.any(count == 0):
            raise ValueError("segments too short for lag %d" % maxlag)
        return r / count
    return r / total


def levinson(r, order):
    """Levinson-Durbin on autocovariance r[0..order]: (list of coefficient
    arrays for orders 1..P, reflection coefficients, error variances s2_0..s2_P)
    where P <= order is the last order with |k| < 1 and s2 > 0."""
    r = np.asarray(r, dtype=float)
    if not r[0] > 0:
        return [], np.zeros(0), np.array([r[0]])
    a = np.zeros(0)
    err = [r[0]]
    coeffs, refl = [], []
    for p in range(1, order + 1):
        a = _step(a, (r[p] - np.dot(a, r[p - 1:0:-1])) / err[-1], coeffs, refl, err)
        if a is None:
            break
    return coeffs, np.array(refl), np.array(err)


def _step(a, k, coeffs, refl, err):
    """One step-up of the coefficients a with the reflection coefficient k:
    the new order's coefficients appended to coeffs, k to refl, its error
    variance to err, and returned; None (nothing appended) when |k| >= 1 or
    the error variance would not stay positive."""
    e = err[-1] * (1.0 - k * k)
    if not (abs(k) < 1.0 and e > 0):
        return None
    a = np.concatenate([a - k * a[::-1], [k]])
    coeffs.append(a)
    refl.append(k)
    err.append(e)
    return a


def burg(segments, order):
    """Burg's method over one or several segments (the prediction errors of
    all segments enter each reflection coefficient): as levinson()."""
    segs = as_segments(segments)
    f = [s.copy() for s in segs]
    b = [s.copy() for s in segs]
    total = sum(len(s) for s in segs)
    a = np.zeros(0)
    err = [sum(np.dot(s, s) for s in segs) / total]
    coeffs, refl = [], []
    if not err[0] > 0:
        return coeffs, np.zeros(0), np.array(err)
    for p in range(1, order + 1):
        num = den = 0.0
        for fi, bi in zip(f, b):
            if len(fi) > p:
                num += 2.0 * np.dot(fi[p:], bi[p - 1:-1])
                den += np.dot(fi[p:], fi[p:]) + np.dot(bi[p - 1:-1], bi[p - 1:-1])
        if not den > 0:
            break
        k = num / den
        a = _step(a, k, coeffs, refl, err)
        if a is None:
            break
        for i in range(len(f)):
            if len(f[i]) > p:
                fp = f[i][p:] - k * b[i][p - 1:-1]
                bp = b[i][p - 1:-1] - k * f[i][p:]
                f[i][p:] = fp
                b[i][p:] = bp
    return coeffs, np.array(refl), np.array(err)


def step_up(k):
    """AR coefficients of the reflection coefficients k (Levinson's step-up)."""
    a = np.zeros(0)
    for kp in k:
        a = np.concatenate([a - kp * a[::-1], [kp]])
    return a


def ar_radius(a):
    """Largest root magnitude of z^p - a_1 z^{p-1} - ... - a_p."""
    a = np.asarray(a, dtype=float)
    if len(a) == 0 or not np.any(a):
        return 0.0
    return float(np.max(np.abs(np.roots(np.concatenate([[1.0], -a])))))


def stabilize(a, max_root=MAX_ROOT):
    """(coefficients with every root inside max_root, the radius before or
    None when nothing changed): bandwidth expansion a_i (max_root / rho)^i."""
    if not 0 < max_root < 1:
        raise ValueError("max_root must lie in (0, 1), got %r" % max_root)
    a = np.asarray(a, dtype=float)
    rho = ar_radius(a)
    if rho <= max_root:
        return a, None
    return a * (max_root / rho)**np.arange(1, len(a) + 1), rho


def _toeplitz(r, p):
    i = np.arange(p)
    return np.asarray(r, dtype=float)[np.abs(i[:, None] - i[None, :])]


def _asymptotic_stderr(r, var, n, p):
    cov = var / n * np.linalg.inv(_toeplitz(r, p))
    return np.sqrt(np.maximum(np.diag(cov), 0.0))


def penalty(n, criterion):
    """Cost of one parameter: 2 (AIC) or log n (BIC)."""
    if criterion not in CRITERIA:
        raise ValueError("criterion must be one of %s, not %r" % (CRITERIA, criterion))
    return 2.0 if criterion == "aic" else float(np.log(n))


def order_scores(err, n, criterion):
    """AIC or BIC of orders 1..len(err)-1 from their error variances."""
    return n * np.log(err[1:]) + penalty(n, criterion) * np.arange(1, len(err))


def check_order(max_order):
    if int(max_order) != max_order or not 1 <= max_order <= 32:
        raise ValueError("max_order must be an integer in 1..32 (the detector's limit), "
                         "got %r" % max_order)
    return int(max_order)


def fit_ar(x, max_order=8, method="auto", criterion="bic", max_root=MAX_ROOT, order=None):
    """AR fit of x (an array, or a list of segments of one process).
    method 'auto' (Burg below BURG_BELOW samples, else Yule-Walker), 'burg'
    or 'yule-walker'; the order minimises criterion ('aic' or 'bic') over
    1..max_order unless `order` fixes it. Returns an ARFit."""
    segs = as_segments(x)
    max_order = check_order(order if order is not None else max_order)
    if method not in METHODS:
        raise ValueError("method must be one of %s, not %r" % (METHODS, method))
    n = sum(len(s) for s in segs)
    if n < 10 * max_order:
        raise ValueError("%d samples are too few for an AR fit up to order %d (at least "
                         "%d)" % (n, max_order, 10 * max_order))
    if method == "auto":
        method = "burg" if n < BURG_BELOW else "yule-walker"
    r = autocovariance(segs, max_order)
    coeffs, refl, err = burg(segs, max_order) if method == "burg" else levinson(
        r, max_order)
    if not coeffs:
        raise ValueError("no AR model fits: the samples have no variance or are "
                         "perfectly predictable")
    scores = order_scores(err, n, criterion)
    p = order if order is not None else int(np.argmin(scores)) + 1
    if p > len(coeffs):
        raise ValueError("order %d cannot be fitted (the recursion stops at order %d: "
                         "|k| >= 1)" % (p, len(coeffs)))
    a, before = stabilize(coeffs[p - 1], max_root)
    se = _asymptotic_stderr(r, err[p], n, p)
    return ARFit(a, se, err[p], method, criterion, scores, refl[:p], n, before)
