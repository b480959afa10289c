#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
The Kalman-bank detector's models fitted from a recording (numpy only): the
noise and burst AR models, the burst envelope and the onset prior alpha of
the detector of N. Nossenson and A. J. Jaffe, as its documentation defines
them (share/doc/gr-transient/kalman.md, "Fitting models from data"), and
the model file the detector loads.

    fit = fit_models(x, noise=[(0, 200000)], signal=[(s0, e0), (s1, e1), ...])
    print(fit.summary())
    fit.save("bursts.trkalm")          # kalman_detector_ff(model_file=...)

- Noise: :func:`gnuradio.transient.kalman_ar.fit_ar` on the noise-only
  segments (Burg or Yule-Walker, order by AIC or BIC).
- Burst: the signal segments hold burst + noise, independent, so their
  autocovariance is gamma_x + gamma_n. Start: gamma_n (from the noise
  segments) subtracted lag by lag, then Yule-Walker (Burg works on samples
  and cannot remove an additive part). The subtraction leaves the burst's
  autocovariance with the whole sampling error of the much stronger noise,
  so the start is refined by maximum likelihood: the exact Gaussian
  likelihood of the segments under the detector's own model (the fitted
  noise AR, the burst AR started from zero at the onset with innovation
  variance target_var * g[i] at offset i), evaluated by a Kalman filter run
  over all segments at once, maximised over the reflection coefficients
  (|k| < 1 by construction: every candidate is stable) and log target_var
  by Nelder-Mead. The order minimises AIC or BIC of that likelihood;
  standard errors from the observed information (numerical Hessian).
- Envelope: the excess variance at offset i over the segments aligned at
  their starts is v[i] = sum_{j<=i} h[i-j]^2 target_var g[j] (h the
  impulse response of the burst's AR filter, g the envelope as the detector
  defines it); each family (rect, exp, gauss, raised_cosine) is fitted to v
  by weighted least squares, the family chosen by BIC.
- M - 1 is the median signal segment length; every burst is taken as the
  M - 1 samples from its start. alpha is the number of signal segments per
  sample of the recording.

The detector's model is zero-mean: remove an offset before fitting.
"""

import numpy as np

try:  # inside the package
    from . import kalman_ar, kalman_signals
except ImportError:  # imported by file path
    import kalman_ar
    import kalman_signals

ENVELOPES = ("auto", ) + kalman_signals.ENVELOPES
# Envelope parameters tried (exp: decay constant, gauss: width), as multiples
# of the burst length M - 1.
_ENV_GRID = np.geomspace(0.02, 10.0, 80)
# Reflection coefficients stay within this of +-1 during the search.
_K_LIMIT = 1.0 - 1e-9
# Offsets of each burst in its likelihood: the cost of one evaluation grows
# with it, the AR model is the same over the whole burst.
ML_WINDOW = 512
# Most burst samples (bursts x (M - 1)) held as float64 for the fit.
MAX_BURST_SAMPLES = 1 << 26


def _companion(a):
    p = len(a)
    F = np.zeros((p, p))
    F[0, :] = a
    F[1:, :-1] = np.eye(p - 1)
    return F


def _stationary_cov(a, var):
    """Covariance of the companion state of a stable AR(a) driven by var
    (the Lyapunov equation by doubling)."""
    F = _companion(np.asarray(a, dtype=float))
    P = np.zeros_like(F)
    P[0, 0] = var
    for _ in range(200):
        nxt = P + F.dot(P).dot(F.T)
        F = F.dot(F)
        if np.max(np.abs(nxt - P)) <= 1e-15 * np.max(np.abs(nxt)):
            return nxt
        P = nxt
    return P


class BurstLikelihood(object):
    """Gaussian log-likelihood of bursts Y (B x (M-1), each row from its
    onset) given the noise AR (noise_ar, noise_var) and the envelope g (M-1
    values): loglik(a, target_var). It covers the window of at most
    ML_WINDOW offsets that starts at the onset (the burst's AR state zero
    there: exact) unless the envelope puts less than half as much variance
    there as in its strongest window; that window then starts from the
    burst's stationary covariance scaled by the envelope (an envelope that
    varies slowly against the AR filter's memory)."""

    def __init__(self, Y, noise_ar, noise_var, g):
        Y = np.asarray(Y, dtype=float)
        g = np.asarray(g, dtype=float)
        W = min(Y.shape[1], ML_WINDOW)
        c = np.concatenate([[0.0], np.cumsum(g)])
        sums = c[W:] - c[:-W]
        self.s0 = 0 if sums[0] >= 0.5 * sums.max() else int(np.argmax(sums))
        self.Y = Y[:, self.s0:self.s0 + W]
        self.g = g[self.s0:self.s0 + W]
        self.b = np.asarray(noise_ar, dtype=float)
        self.noise_var = float(noise_var)
        self.Pn = _stationary_cov(self.b, self.noise_var)

    def __call__(self, a, target_var):
        a = np.asarray(a, dtype=float)
        Y, g = self.Y, self.g
        B, L = Y.shape
        px, pn = len(a), len(self.b)
        d = px + pn
        F = np.zeros((d, d))
        F[:px, :px] = _companion(a)
        F[px:, px:] = _companion(self.b)
        P = np.zeros((d, d))
        P[px:, px:] = self.Pn
        if self.s0 == 0:
            P[0, 0] = target_var * g[0]
        elif kalman_ar.ar_radius(a) < 1.0:
            P[:px, :px] = _stationary_cov(a, target_var * g[0])
        else:
            return -np.inf
        Z = np.zeros((B, d))
        ll = 0.0
        for t in range(L):
            Ph = P[:, 0] + P[:, px]
            S = Ph[0] + Ph[px]
            if not S > 0:
                return -np.inf
            e = Y[:, t] - Z[:, 0] - Z[:, px]
            ll -= 0.5 * (B * np.log(2.0 * np.pi * S) + np.dot(e, e) / S)
            if t + 1 == L:
                break
            Z += np.outer(e, Ph / S)
            P -= np.outer(Ph, Ph) / S
            Z = Z.dot(F.T)
            P = F.dot(P).dot(F.T)
            P[0, 0] += target_var * g[t + 1]
            P[px, px] += self.noise_var
        return ll


def nelder_mead(f, x0, step, max_eval=2000, ftol=1e-7):
    """Minimise f from x0 (initial simplex: x0 + step along each axis) by
    Nelder-Mead (reflection 1, expansion 2, contraction 1/2, shrink 1/2);
    stops when the simplex's values agree to ftol (relative, 1e-10
    absolute) or after max_eval evaluations. Returns (x, f(x))."""
    n = len(x0)
    X = [np.asarray(x0, dtype=float)]
    for i in range(n):
        v = X[0].copy()
        v[i] += step[i]
        X.append(v)
    F = [f(v) for v in X]
    evals = n + 1
    while evals < max_eval:
        order = np.argsort(F)
        X = [X[i] for i in order]
        F = [F[i] for i in order]
        if abs(F[-1] - F[0]) <= ftol * abs(F[0]) + 1e-10:
            break
        c = np.mean(X[:-1], axis=0)
        xr = c + (c - X[-1])
        fr = f(xr)
        evals += 1
        if fr < F[0]:
            xe = c + 2.0 * (c - X[-1])
            fe = f(xe)
            evals += 1
            X[-1], F[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < F[-2]:
            X[-1], F[-1] = xr, fr
        else:
            xc = c + 0.5 * (X[-1] - c) if fr >= F[-1] else c + 0.5 * (xr - c)
            fc = f(xc)
            evals += 1
            if fc < min(fr, F[-1]):
                X[-1], F[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    X[i] = X[0] + 0.5 * (X[i] - X[0])
                    F[i] = f(X[i])
                evals += n
    i = int(np.argmin(F))
    return X[i], F[i]


def _from_theta(theta):
    k = np.clip(np.tanh(theta[:-1]), -_K_LIMIT, _K_LIMIT)
    return kalman_ar.step_up(k), float(np.exp(theta[-1]))


def _ml(lik, k0, var0):
    """Maximum likelihood from reflection coefficients k0 and variance var0:
    (a, target_var, loglik)."""
    k0 = np.clip(np.asarray(k0, dtype=float), -0.99, 0.99)
    theta0 = np.concatenate([np.arctanh(k0), [np.log(var0)]])

    def cost(theta):
        a, s = _from_theta(theta)
        ll = lik(a, s)
        return -ll if np.isfinite(ll) else np.inf

    theta, f = nelder_mead(cost, theta0, np.full(len(theta0), 0.1),
                           max_eval=300 * len(theta0))
    theta, f = nelder_mead(cost, theta, np.full(len(theta0), 0.02),
                           max_eval=300 * len(theta0))
    a, s = _from_theta(theta)
    return a, s, -f


def _hessian_stderr(lik, a, s):
    """Standard errors of a from the numerical Hessian of -loglik in
    (a, log target_var); NaN where it is not positive definite."""
    x0 = np.concatenate([a, [np.log(s)]])
    n = len(x0)
    h = np.full(n, 1e-3)

    def f(x):
        return -lik(x[:-1], np.exp(x[-1]))

    H = np.zeros((n, n))
    f0 = f(x0)
    for i in range(n):
        for j in range(i, n):
            ei = np.zeros(n)
            ej = np.zeros(n)
            ei[i] = h[i]
            ej[j] = h[j]
            if i == j:
                H[i, i] = (f(x0 + ei) - 2.0 * f0 + f(x0 - ei)) / h[i]**2
            else:
                H[i, j] = H[j, i] = (f(x0 + ei + ej) - f(x0 + ei - ej) - f(x0 - ei + ej) +
                                     f(x0 - ei - ej)) / (4.0 * h[i] * h[j])
    try:
        cov = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return np.full(len(a), np.nan)
    d = np.diag(cov)[:len(a)]
    return np.where(d > 0, np.sqrt(np.abs(d)), np.nan)


def _step_down(a):
    """Reflection coefficients of a stable AR polynomial (Schur-Cohn)."""
    a = np.asarray(a, dtype=float).copy()
    k = np.zeros(len(a))
    for p in range(len(a), 0, -1):
        k[p - 1] = a[p - 1]
        if p > 1:
            a = (a[:p - 1] + k[p - 1] * a[p - 2::-1]) / (1.0 - k[p - 1]**2)
    return k


def fit_burst_ar(Y, noise_fit, g, start, max_order=8, criterion="bic", order=None,
                 max_root=kalman_ar.MAX_ROOT):
    """The burst's AR by maximum likelihood (module docstring). Y: B x (M-1)
    bursts from their onsets; noise_fit: the noise's ARFit; g: envelope;
    start: (Yule-Walker coefficient arrays per order, their target_var).
    Returns (ARFit, target_var)."""
    lik = BurstLikelihood(Y, noise_fit.coeffs, noise_fit.var, g)
    n = lik.Y.size  # the samples the likelihood covers
    yw_coeffs, var0 = start
    orders = [order] if order is not None else range(1, max_order + 1)
    best, scores, prev = None, [], None
    rising = 0
    for p in orders:
        cands = []
        if p <= len(yw_coeffs):
            cands.append(_step_down(kalman_ar.stabilize(yw_coeffs[p - 1], 0.99)[0]))
        if prev is not None:
            cands.append(np.concatenate([_step_down(prev[0]), [0.0]]))
        if not cands:
            cands.append(np.zeros(p))
        var = prev[1] if prev is not None else var0
        k0 = max(cands, key=lambda k: lik(kalman_ar.step_up(k), var))
        a, s, ll = _ml(lik, k0, var)
        score = -2.0 * ll + kalman_ar.penalty(n, criterion) * (p + 1)
        scores.append(score)
        prev = (a, s)
        if best is None or score < best[0]:
            best, rising = (score, a, s, ll), 0
        else:
            rising += 1
            if rising == 2:  # two orders past the best: the criterion keeps rising
                break
    score, a, s, ll = best
    ll0 = lik(np.zeros(1), 0.0)
    if score >= -2.0 * ll0:
        raise ValueError("the signal ranges carry no power above the noise that the "
                         "burst model explains (%s %.1f against %.1f without a burst)" %
                         (criterion.upper(), score, -2.0 * ll0))
    se = _hessian_stderr(lik, a, s)
    a, before = kalman_ar.stabilize(a, max_root)
    fit = kalman_ar.ARFit(a, se, s, "maximum likelihood (noise model fixed)", criterion,
                          scores, _step_down(a), n, before)
    return fit, s


def excess_variance(Y, noise_var0):
    """v[i]: mean of r^2 at offset i over the bursts minus the noise's
    variance."""
    return np.mean(np.asarray(Y, dtype=float)**2, axis=0) - noise_var0


def fit_envelope(v, target_ar, M, envelope="auto", env_param=None):
    """(envelope, env_param, target_var, g) fitted to the excess variance v
    under the detector's definition (module docstring); envelope 'auto'
    picks the family by BIC."""
    if envelope not in ENVELOPES:
        raise ValueError("envelope must be one of %s, not %r" % (ENVELOPES, envelope))
    L = M - 1
    # v = h^2 (*) target_var g, the first L values of a linear convolution
    nfft = 1 << int(2 * L - 1).bit_length()
    H2 = np.fft.rfft(ar_impulse(target_ar, L)**2, nfft)
    v = np.asarray(v[:L], dtype=float)
    families = kalman_signals.ENVELOPES if envelope == "auto" else (envelope, )
    best = None
    for fam in families:
        if fam in ("exp", "gauss"):
            params = [env_param] if env_param is not None else list(_ENV_GRID * L)
        else:
            params = [None]
        for prm in params:
            g = kalman_signals.envelope(fam, M, prm if prm else 10.0)
            y = np.fft.irfft(H2 * np.fft.rfft(g, nfft), nfft)[:L]
            c = np.dot(y, v) / np.dot(y, y)
            if not c > 0:
                continue
            rss = np.dot(v - c * y, v - c * y)
            k = 2 if prm is not None else 1
            bic = L * np.log(max(rss, 1e-300) / L) + k * np.log(L)
            if best is None or bic < best[0]:
                best = (bic, fam, prm, c, g)
    if best is None:
        raise ValueError("no envelope fits: the signal segments carry no variance "
                         "above the noise")
    return best[1], best[2], best[3], best[4]


def ar_impulse(a, n):
    """The first n samples of the impulse response of 1 / (1 - sum a_i z^-i)."""
    a = np.asarray(a, dtype=float)
    h = np.zeros(n)
    if n:
        h[0] = 1.0
    for t in range(1, n):
        m = min(len(a), t)
        h[t] = np.dot(a[:m], h[t - 1::-1][:m])
    return h


class KalmanFit(object):
    """Fitted models: noise and target (kalman_ar.ARFit), M, envelope,
    env_param, g (M-1 values), target_var, alpha, segments used."""

    def __init__(self, noise, target, M, envelope, env_param, g, target_var, alpha,
                 n_segments):
        self.noise, self.target = noise, target
        self.M, self.envelope, self.env_param = M, envelope, env_param
        self.g, self.target_var, self.alpha = g, target_var, alpha
        self.n_segments = n_segments

    def save(self, path):
        """Write the model file kalman_detector_ff(model_file=path) loads,
        designed by libtransient (kalman_detector_ff.save_model)."""
        from gnuradio import transient
        transient.kalman_detector_ff.save_model(path, self.M, list(self.noise.coeffs),
                                                self.noise.var, 0.0, list(self.target.coeffs),
                                                self.target_var, self.envelope,
                                                self.env_param or 10.0)

    def summary(self):
        """Orders, coefficients with standard errors, variances, envelope, alpha."""
        lines = []
        for name, f in (("noise", self.noise), ("burst", self.target)):
            lines.append("%s: AR(%d) by %s, order by %s, %d samples%s" %
                         (name, f.order, f.method, f.criterion.upper(), f.n,
                          "" if f.radius_before is None else
                          ", roots pulled from radius %.6f to %.6f" %
                          (f.radius_before, f.radius)))
            for i, (a, s) in enumerate(zip(f.coeffs, f.stderr)):
                lines.append("  a%-2d = %+.6f +- %.6f" % (i + 1, a, s))
            lines.append("  innovation variance %.6g" % f.var)
        env = self.envelope
        if self.env_param is not None:
            env += " (env_param %.6g samples)" % self.env_param
        lines.append("burst: M = %d (lasts %d samples), envelope %s, target_var %.6g" %
                     (self.M, self.M - 1, env, self.target_var))
        lines.append("alpha = %.6g (%d signal segments)" % (self.alpha, self.n_segments))
        return "\n".join(lines)


def check_ranges(ranges, n, what):
    """Sorted (start, stop) pairs inside [0, n), each non-empty; ValueError
    naming `what` otherwise."""
    out = []
    for r in ranges:
        a, b = int(r[0]), int(r[1])
        if not 0 <= a < b <= n:
            raise ValueError("%s range %d:%d is empty or outside the %d samples" %
                             (what, a, b, n))
        out.append((a, b))
    if not out:
        raise ValueError("no %s ranges" % what)
    return sorted(out)


def check_disjoint(noise, signal):
    """ValueError when a noise range overlaps a signal range."""
    for a, b in noise:
        hit = [r for r in signal if r[0] < b and a < r[1]]
        if hit:
            raise ValueError("noise range %d:%d overlaps signal range %d:%d" %
                             (a, b, hit[0][0], hit[0][1]))


def fit_models(x, noise, signal, M=None, alpha=None, max_order=8, criterion="bic",
               method="auto", envelope="auto", env_param=None,
               max_root=kalman_ar.MAX_ROOT):
    """Fit the detector's models from the recording x (1-D array) given
    noise-only ranges and signal ranges (lists of (start, stop) sample
    indices; each signal range is one burst from its onset). M (default:
    median signal length + 1), alpha (default: signal ranges per sample of
    x). Returns a KalmanFit."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be one-dimensional")
    nseg = check_ranges(noise, len(x), "noise")
    sseg = check_ranges(signal, len(x), "signal")
    check_disjoint(nseg, sseg)
    if M is None:
        M = int(np.median([b - a for a, b in sseg])) + 1
    if M < 3:
        raise ValueError("M must be >= 3 (bursts of at least 2 samples), got %d" % M)
    if alpha is None:
        alpha = len(sseg) / float(len(x))
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1), got %r" % alpha)
    max_order = kalman_ar.check_order(max_order)
    usable = [(a, b) for a, b in sseg if a + M - 1 <= len(x)]
    if not usable:
        raise ValueError("no signal range has M-1 = %d samples before the end of the "
                         "recording" % (M - 1))
    if len(usable) * (M - 1) > MAX_BURST_SAMPLES:
        raise ValueError("%d bursts of M-1 = %d samples: %d samples, at most %d are fitted "
                         "(fewer bursts)" % (len(usable), M - 1, len(usable) * (M - 1),
                                             MAX_BURST_SAMPLES))
    Y = np.array([x[a:a + M - 1] for a, b in usable], dtype=float)
    noise_parts = [np.asarray(x[a:b], dtype=float) for a, b in nseg]
    for what, parts, ranges in (("signal", Y, usable), ("noise", noise_parts, nseg)):
        for part, (a, b) in zip(parts, ranges):
            if not np.all(np.isfinite(part)):
                raise ValueError("%s range %d:%d holds non-finite samples (NaN or Inf)" %
                                 (what, a, b))
    nfit = kalman_ar.fit_ar(noise_parts, max_order, method, criterion, max_root)
    n_acov = kalman_ar.autocovariance(noise_parts, max_order, unbiased=True)
    rx = kalman_ar.autocovariance(list(Y), max_order, unbiased=True) - n_acov
    yw, _, err = kalman_ar.levinson(rx, max_order)
    if not yw:
        raise ValueError("the signal ranges carry no power above the noise (variance "
                         "%.6g against the noise's %.6g)" % (rx[0] + n_acov[0], n_acov[0]))
    v = excess_variance(Y, n_acov[0])
    env, prm, tvar, g = fit_envelope(v, yw[0], M, envelope, env_param)
    tfit, tvar = fit_burst_ar(Y, nfit, g, (yw, tvar), max_order, criterion,
                              max_root=max_root)
    env, prm, _, g2 = fit_envelope(v, tfit.coeffs, M, envelope, env_param)
    if not np.allclose(g, g2):  # the burst's AR changed the envelope: refit with it
        start = [None] * (tfit.order - 1) + [tfit.coeffs]
        tfit, tvar = fit_burst_ar(Y, nfit, g2, (start, tvar), max_order, criterion,
                                  tfit.order, max_root)
    return KalmanFit(nfit, tfit, M, env, prm, g2, tvar, alpha, len(usable))
